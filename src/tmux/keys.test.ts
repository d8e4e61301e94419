import { describe, expect, it } from 'vitest';
import { canonicalKey, isKeyName, keyBytes } from './keys.js';

describe('tmux key names', () => {
  it('sends what tmux sends for named keys, honouring cursor-key mode', () => {
    expect(['Enter', 'Escape', 'Space', 'Tab', 'BSpace', 'C-c', 'C-a', 'M-x', 'C-Space', 'F1', 'F5', 'Home', 'End', 'PPage', 'NPage', 'DC', 'BTab'].map((k) => keyBytes(k, false))).toEqual([
      '\r', '\x1b', ' ', '\t', '\x7f', '\x03', '\x01', '\x1bx', '\x00', '\x1bOP', '\x1b[15~', '\x1b[1~', '\x1b[4~', '\x1b[5~', '\x1b[6~', '\x1b[3~', '\x1b[Z',
    ]);
    expect(keyBytes('Up', false)).toBe('\x1b[A');
    expect(keyBytes('Up', true)).toBe('\x1bOA');
    expect(keyBytes('C-Up', false)).toBe('\x1b[1;5A');
    expect(keyBytes('S-Left', true)).toBe('\x1b[1;2D');
    expect(keyBytes('^B', false)).toBe('\x02');
    expect(keyBytes('enter', false)).toBe('\r');
  });

  it('leaves words that are not keys to be typed as text', () => {
    expect(keyBytes('hello', false)).toBeUndefined();
    expect(keyBytes('a', false)).toBe('a');
    expect(isKeyName('Bogus-key')).toBe(false);
    expect(isKeyName('C-a')).toBe(true);
  });

  it('spells keys as list-keys prints them', () => {
    expect(['c-a', 'm-enter', 'f5', 'Z', 'pageup', 'C-M-x'].map(canonicalKey)).toEqual(['C-a', 'M-Enter', 'F5', 'Z', 'PPage', 'C-M-x']);
  });
});
