import { describe, expect, it } from 'vitest';
import { encodeKey, encodeKeys } from './keys.js';

const normal = { applicationCursorKeys: false };
const app = { applicationCursorKeys: true };

describe('encodeKey', () => {
  it('encodes plain keys under their common names', () => {
    expect(encodeKey('Enter', normal)).toBe('\r');
    expect(encodeKey('enter', normal)).toBe('\r');
    expect(encodeKey('Return', normal)).toBe('\r');
    expect(encodeKey('Esc', normal)).toBe('\x1b');
    expect(encodeKey('Escape', normal)).toBe('\x1b');
    expect(encodeKey('Tab', normal)).toBe('\t');
    expect(encodeKey('BTab', normal)).toBe('\x1b[Z');
    expect(encodeKey('S-Tab', normal)).toBe('\x1b[Z');
    expect(encodeKey('Backspace', normal)).toBe('\x7f');
    expect(encodeKey('BSpace', normal)).toBe('\x7f');
    expect(encodeKey('Space', normal)).toBe(' ');
    expect(encodeKey('Delete', normal)).toBe('\x1b[3~');
    expect(encodeKey('PageUp', normal)).toBe('\x1b[5~');
    expect(encodeKey('NPage', normal)).toBe('\x1b[6~');
  });

  it('follows application cursor mode for arrows, Home and End', () => {
    expect(encodeKey('Up', normal)).toBe('\x1b[A');
    expect(encodeKey('Up', app)).toBe('\x1bOA');
    expect(encodeKey('Left', app)).toBe('\x1bOD');
    expect(encodeKey('Home', normal)).toBe('\x1b[H');
    expect(encodeKey('End', app)).toBe('\x1bOF');
  });

  it('encodes control, alt and shift combinations', () => {
    expect(encodeKey('C-c', normal)).toBe('\x03');
    expect(encodeKey('Ctrl-C', normal)).toBe('\x03');
    expect(encodeKey('Ctrl+d', normal)).toBe('\x04');
    expect(encodeKey('^C', normal)).toBe('\x03');
    expect(encodeKey('C-[', normal)).toBe('\x1b');
    expect(encodeKey('C-]', normal)).toBe('\x1d');
    expect(encodeKey('C-Space', normal)).toBe('\x00');
    expect(encodeKey('M-x', normal)).toBe('\x1bx');
    expect(encodeKey('Alt-Enter', normal)).toBe('\x1b\r');
    expect(encodeKey('S-a', normal)).toBe('A');
    expect(encodeKey('C-Up', normal)).toBe('\x1b[1;5A');
    expect(encodeKey('C-S-Right', app)).toBe('\x1b[1;6C');
    expect(encodeKey('M-Delete', normal)).toBe('\x1b[3;3~');
    expect(encodeKey('F1', normal)).toBe('\x1bOP');
    expect(encodeKey('F5', normal)).toBe('\x1b[15~');
    expect(encodeKey('S-F1', normal)).toBe('\x1b[1;2P');
    expect(encodeKey('F12', normal)).toBe('\x1b[24~');
    expect(encodeKey('S-Enter', normal)).toBe('\x1b[13;2u');
  });

  it('sends single characters as themselves', () => {
    expect(encodeKey('y', normal)).toBe('y');
    expect(encodeKey('1', normal)).toBe('1');
    expect(encodeKey('-', normal)).toBe('-');
    expect(encodeKey('❯', normal)).toBe('❯');
  });

  it('rejects unknown names with INVALID_PARAMS naming the key', () => {
    expect(() => encodeKey('Entr', normal)).toThrow(/invalid key 'Entr'/);
    expect(() => encodeKey('C-1', normal)).toThrow(/Ctrl cannot be combined/);
    expect(() => encodeKey('', normal)).toThrow(/empty/);
  });

  it('joins a sequence', () => {
    expect(encodeKeys(['h', 'i', 'Enter'], normal)).toBe('hi\r');
  });
});
