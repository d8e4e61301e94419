import { describe, expect, it } from 'vitest';
import type { CapturedCell, CapturedRow } from '../pane/index.js';
import { capturePane, type CaptureOptions, type PaneGrid } from './capture.js';

const plain: CapturedCell = { chars: ' ', width: 1, fg: { mode: 'default', value: 0 }, bg: { mode: 'default', value: 0 }, bold: false, dim: false, italic: false, underline: false, blink: false, inverse: false, invisible: false, strikethrough: false, overline: false };
const cells = (text: string, style: Partial<CapturedCell> = {}): CapturedCell[] => Array.from(text, (chars) => ({ ...plain, ...style, chars }));

function grid(history: CapturedRow[], screen: CapturedRow[]): PaneGrid {
  const all = [...history, ...screen];
  return { historySize: history.length, screenRows: screen.length, rows: (from, to) => all.slice(Math.max(0, from), to) };
}
const options = (o: Partial<CaptureOptions> = {}): CaptureOptions => ({ start: undefined, end: undefined, escapes: false, join: false, noTrim: false, escapeControl: false, ...o });
const row = (text: string, wrapped = false): CapturedRow => ({ text, wrapped });

describe('capture-pane', () => {
  const g = grid([row('h0'), row('h1'), row('h2')], [row('s0   '), row('s1'), row('')]);

  it('prints the screen, trailing blanks trimmed, one line per row', () => {
    expect(capturePane(g, options())).toBe('s0\ns1\n\n');
  });

  it('counts -S and -E from the top of the screen, negative into history, - for the ends', () => {
    expect(capturePane(g, options({ start: '-2' }))).toBe('h1\nh2\ns0\ns1\n\n');
    expect(capturePane(g, options({ start: '-120' }))).toBe('h0\nh1\nh2\ns0\ns1\n\n');
    expect(capturePane(g, options({ start: '-', end: '0' }))).toBe('h0\nh1\nh2\ns0\n');
    expect(capturePane(g, options({ start: '1', end: '-1' }))).toBe('h2\ns0\ns1\n');
    expect(capturePane(g, options({ start: 'abc' }))).toBe('s0\ns1\n\n');
  });

  it('joins wrapped rows with -J and keeps their blanks', () => {
    const wrapped = grid([], [row('abc '), row('def', true), row('x')]);
    expect(capturePane(wrapped, options({ join: true }))).toBe('abc def\nx\n');
    expect(capturePane(wrapped, options())).toBe('abc\ndef\nx\n');
  });

  it('writes only the style changes with -e, as tmux does, carrying them across lines', () => {
    const red = { fg: { mode: 'p16' as const, value: 1 } };
    const styled = grid([], [
      { text: 'red plain', wrapped: false, cells: [...cells('red', red), ...cells(' plain')] },
      { text: 'B', wrapped: false, cells: cells('B', { bold: true, bg: { mode: 'p16', value: 4 } }) },
      { text: 'o', wrapped: false, cells: cells('o', { fg: { mode: 'p256', value: 208 } }) },
      { text: 'x', wrapped: false, cells: cells('x', { fg: { mode: 'rgb', value: 0x102030 } }) },
    ]);
    expect(capturePane(styled, options({ escapes: true }))).toBe('\x1b[31mred\x1b[39m plain\n\x1b[1m\x1b[44mB\n\x1b[0m\x1b[38;5;208m\x1b[49mo\n\x1b[38;2;16;32;48mx\n');
  });

  it('escapes control characters with -C', () => {
    expect(capturePane(grid([], [row('a\\b\x07')]), options({ escapeControl: true }))).toBe('a\\\\b\\007\n');
  });
});
