import { describe, expect, it } from 'vitest';
import { foldLines } from './long-prompt.js';

describe('folding a long prompt for a CLI that cuts long lines', () => {
  it('folds at spaces, keeping every word and character but the spaces it trades', () => {
    const text = Array.from({ length: 500 }, (_, i) => `word${i}`).join(' ');
    const folded = foldLines(text, 100);
    expect(folded.split('\n').every((l) => l.length <= 100)).toBe(true);
    expect(folded.replace(/\n/g, ' ')).toBe(text);
  });

  it('leaves short lines, line breaks of its own, and a run with no space alone', () => {
    expect(foldLines('a b\nc d', 100)).toBe('a b\nc d');
    const run = 'x'.repeat(300);
    expect(foldLines(`${run} tail`, 100)).toBe(`${run} tail`);
  });
});
