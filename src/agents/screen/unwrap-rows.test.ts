import { describe, expect, it } from 'vitest';
import { cellWidth, continuesRow, unwrapRows } from './unwrap-rows.js';

describe('unwrapping the rows a CLI broke at the width', () => {
  it('joins wide-character text without a space, counting two cells a character', () => {
    expect(cellWidth('漢字ab')).toBe(6);
    // 9 wide characters after "● " fill 20 of 22 columns: the next would not have fitted.
    expect(unwrapRows(['● 一二三四五六七八九', '  十一十二'], 22)).toEqual(['● 一二三四五六七八九十一十二']);
  });

  it('never joins a blank row, a row at another column, or one whose first word would have fitted', () => {
    expect(continuesRow('  text that is long enough to', '', 30)).toBe(false);
    expect(continuesRow('  text that is long enough to', '    code()', 30)).toBe(false);
    expect(continuesRow('  short', '  next', 30)).toBe(false);
    expect(continuesRow('  text that is long enough to', '  reach', 30)).toBe(true);
    expect(continuesRow('  text that is long enough to', '  1. item', 30)).toBe(false);
  });
});
