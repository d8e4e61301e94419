import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Utf8Stream, incompleteUtf8Tail, leadingContinuationBytes } from './utf8.js';

describe('Utf8Stream', () => {
  it('holds a split character back and reports exact offsets', () => {
    const bytes = Buffer.from('a€b');
    const s = new Utf8Stream();
    expect(s.push(bytes.subarray(0, 2), 0)).toEqual({ text: 'a', offset: 0, bytes: 1 });
    expect(s.heldBytes).toBe(1);
    expect(s.push(bytes.subarray(2), 2)).toEqual({ text: '€b', offset: 1, bytes: 4 });
  });

  it('finds incomplete tails and leading continuation bytes', () => {
    expect(incompleteUtf8Tail(Buffer.from('abc'))).toBe(0);
    expect(incompleteUtf8Tail(Buffer.from('😀').subarray(0, 3))).toBe(3);
    expect(incompleteUtf8Tail(Buffer.from('😀'))).toBe(0);
    expect(leadingContinuationBytes(Buffer.from('€x').subarray(1))).toBe(2);
  });

  it('gives contiguous pieces that decode to the whole text, however it is cut', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 200 }), fc.array(fc.nat(40), { maxLength: 30 }), (text, cuts) => {
        const bytes = Buffer.from(text);
        const s = new Utf8Stream();
        let offset = 0;
        let expected = 0;
        let out = '';
        for (const cut of [...cuts, bytes.length]) {
          const end = Math.min(bytes.length, offset + cut);
          const piece = s.push(bytes.subarray(offset, end), offset);
          expect(piece.offset).toBe(expected);
          expected += piece.bytes;
          out += piece.text;
          offset = end;
          if (offset >= bytes.length) break;
        }
        expect(out).toBe(text);
        expect(s.heldBytes).toBe(0);
      }),
    );
  });
});
