import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { coreOf, newTerminal } from './xterm-internals.js';
import { rowText, type InternalBufferLine } from './row-text.js';

describe('rowText', () => {
  // 300 generated screens take about 1.3 s here, CPU-bound: on a loaded 2-core machine one line
  // saw 21 s, past the default timeout, so this test gets a bound of its own.
  it('equals translateToString(true) for any content', { timeout: 120_000 }, () => {
    const piece = fc.oneof(
      fc.string({ maxLength: 30 }),
      fc.constantFrom('漢字', '😀', 'e\u0301', 'ｱｲｳ', '\x1b[31mred\x1b[0m', '\t', '\x1b[5C', '\x1b[K', '\x1b[2@', '✓ ❯ ●'),
      fc.string({ unit: 'binary', maxLength: 10 }),
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 30 }), fc.integer({ min: 5, max: 60 }), (pieces, cols) => {
        const term = newTerminal({ cols, rows: 4, scrollback: 50, allowProposedApi: true, logLevel: 'off' });
        const core = coreOf(term);
        core.writeSync(pieces.join(''));
        const lines = (core.buffers.normal as unknown as { lines: { get(i: number): InternalBufferLine | undefined; length: number } }).lines;
        const buffer = term.buffer.normal;
        for (let i = 0; i < buffer.length; i++) {
          const internal = lines.get(i);
          expect(internal).toBeDefined();
          expect(rowText(internal!)).toBe(buffer.getLine(i)?.translateToString(true));
        }
        term.dispose();
      }),
      { numRuns: 300 },
    );
  });
});
