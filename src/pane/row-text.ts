/**
 * Fast plain text of a terminal row, read straight from xterm's cell array (the layout of the
 * pinned @xterm/headless: three 32-bit words per cell, the first holding the code point, a
 * "combined" flag and the cell width). Equivalent to `translateToString(true)`, but builds one flat
 * string instead of a rope of one-character pieces, which matters when every scrolled row is kept.
 * row-text.test.ts checks it against the public API.
 */

const CODEPOINT_MASK = 0x1fffff;
const IS_COMBINED_MASK = 0x200000;
const HAS_CONTENT_MASK = 0x3fffff;
const WIDTH_SHIFT = 22;
const CELL_SIZE = 3;

/** The internal shape of an xterm BufferLine that rowText reads. */
export interface InternalBufferLine {
  readonly _data: Uint32Array;
  readonly _combined: Record<number, string>;
  readonly length: number;
  readonly isWrapped: boolean;
}

// Scratch space for one row: a one-byte buffer for the common Latin-1 row (decoded natively into a
// one-byte string), and two UTF-16 units per cell for the rest (astral code points need two).
const MAX_UNITS = 2 * 1024;
const latin1 = Buffer.alloc(MAX_UNITS);
const utf16 = new Uint16Array(MAX_UNITS);
const utf16Bytes = new Uint8Array(utf16.buffer);
const utf16Decoder = new TextDecoder('utf-16le');

function trimmedLength(data: Uint32Array, cols: number): number {
  for (let x = cols - 1; x >= 0; x--) {
    const content = data[x * CELL_SIZE] ?? 0;
    if ((content & HAS_CONTENT_MASK) !== 0) return x + (content >> WIDTH_SHIFT);
  }
  return 0;
}

/** The row's text with never-written cells at the end left out (as translateToString(true)). */
export function rowText(line: InternalBufferLine): string {
  const data = line._data;
  const end = Math.min(trimmedLength(data, line.length), line.length);
  // Fast path: every cell is a single Latin-1 character.
  let n = 0;
  let x = 0;
  while (x < end) {
    const content = data[x * CELL_SIZE] ?? 0;
    const cp = content & CODEPOINT_MASK;
    if ((content & IS_COMBINED_MASK) !== 0 || cp > 0xff) return rowTextWide(line, end);
    latin1[n++] = cp === 0 ? 32 : cp;
    x += content >> WIDTH_SHIFT || 1;
  }
  return latin1.toString('latin1', 0, n);
}

function rowTextWide(line: InternalBufferLine, end: number): string {
  const data = line._data;
  let out = '';
  let n = 0;
  const flush = (): void => {
    if (n === 0) return;
    out += utf16Decoder.decode(utf16Bytes.subarray(0, 2 * n));
    n = 0;
  };
  let x = 0;
  while (x < end) {
    const content = data[x * CELL_SIZE] ?? 0;
    if ((content & IS_COMBINED_MASK) !== 0) {
      flush();
      out += line._combined[x] ?? '';
    } else {
      const cp = content & CODEPOINT_MASK;
      if (cp === 0) utf16[n++] = 32;
      else if (cp < 0x10000) utf16[n++] = cp;
      else {
        const v = cp - 0x10000;
        utf16[n++] = 0xd800 + (v >> 10);
        utf16[n++] = 0xdc00 + (v & 0x3ff);
      }
      if (n >= MAX_UNITS - 2) flush();
    }
    x += content >> WIDTH_SHIFT || 1;
  }
  flush();
  return out;
}
