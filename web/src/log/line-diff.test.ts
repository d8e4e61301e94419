import { describe, expect, it } from 'vitest';
import { diffLines } from './line-diff.js';

const render = (before: string, after: string): string[] => diffLines(before, after).map((l) => `${{ same: ' ', removed: '-', added: '+' }[l.op]}${l.text}`);

describe('diffLines', () => {
  it('keeps common lines and marks the changed one', () => {
    expect(render('a\nb\nc', 'a\nB\nc')).toEqual([' a', '-b', '+B', ' c']);
  });

  it('shows a new file as all added', () => {
    expect(render('', 'x\ny')).toEqual(['+x', '+y']);
  });

  it('does not show a final newline as an empty line', () => {
    expect(render('', 'x\n')).toEqual(['+x']);
  });

  it('finds an inserted line in the middle', () => {
    expect(render('1\n2\n3\n4', '1\n2\nnew\n3\n4')).toEqual([' 1', ' 2', '+new', ' 3', ' 4']);
  });

  it('rebuilds both sides exactly', () => {
    const before = 'q\nw\ne\nr\nt\ny';
    const after = 'w\nx\ne\nt\ny\nz';
    const lines = diffLines(before, after);
    expect(lines.filter((l) => l.op !== 'added').map((l) => l.text).join('\n')).toBe(before);
    expect(lines.filter((l) => l.op !== 'removed').map((l) => l.text).join('\n')).toBe(after);
  });
});
