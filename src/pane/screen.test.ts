import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Screen, trimRowEnd } from './screen.js';
import { coreOf, newTerminal } from './xterm-internals.js';

const numbered = (from: number, to: number): string => {
  let s = '';
  for (let i = from; i < to; i++) s += `line ${i}\r\n`;
  return s;
};

describe('Screen', () => {
  it('keeps every row that scrolls off, in order', () => {
    const screen = new Screen({ cols: 40, rows: 10, scrollbackRows: 10_000 });
    screen.write(numbered(0, 5000));
    const { lines, totalLines } = screen.tail(100_000);
    // 5000 lines plus the empty row the cursor sits on.
    expect(totalLines).toBe(5001);
    expect(lines.slice(0, 5000)).toEqual(Array.from({ length: 5000 }, (_, i) => `line ${i}`));
    expect(lines[5000]).toBe('');
    expect(screen.tail(3).lines).toEqual(['line 4998', 'line 4999', '']);
    screen.dispose();
  });

  it('joins the rows the terminal soft-wrapped when asked, a word cut at the edge whole again', () => {
    const screen = new Screen({ cols: 20, rows: 6, scrollbackRows: 100 });
    // 'a paragraph that ' fills 17 cells, so 'runs' is cut at the edge; the space at 20 is written.
    screen.write('● a paragraph that runs past the edge\r\n  next line\r\n');
    expect(screen.screenLines().slice(0, 3)).toEqual(['● a paragraph that r', 'uns past the edge', '  next line']);
    expect(screen.screenLines({ joinWrapped: true }).slice(0, 2)).toEqual(['● a paragraph that runs past the edge', '  next line']);
    screen.write('\x1b[2J\x1b[H0123456789012345678 x\r\n');
    expect(screen.screenLines({ joinWrapped: true })[0]).toBe('0123456789012345678 x');
    screen.dispose();
  });

  it('bounds history at scrollbackRows', () => {
    const screen = new Screen({ cols: 40, rows: 5, scrollbackRows: 100 });
    screen.write(numbered(0, 1000));
    expect(screen.historyLength).toBe(100);
    const { lines } = screen.tail(1_000_000);
    expect(lines[0]).toBe('line 896');
    expect(lines.at(-2)).toBe('line 999');
    screen.dispose();
  });

  it('leaves out blank rows below the cursor', () => {
    const screen = new Screen({ cols: 40, rows: 24, scrollbackRows: 100 });
    screen.write('$ echo hi\r\nhi\r\n$ ');
    expect(screen.tail(100)).toEqual({ lines: ['$ echo hi', 'hi', '$'], totalLines: 3 });
    screen.dispose();
  });

  it('harvests rows scrolled by a region that starts at the top (status line below)', () => {
    const screen = new Screen({ cols: 40, rows: 5, scrollbackRows: 100 });
    screen.write('\x1b[5;1HSTATUS\x1b[1;4r\x1b[4;1H');
    screen.write(numbered(0, 10));
    // Each line feed at the region's bottom pushes the region's top row (three blank ones first) into history.
    const history = screen.tail(100).lines;
    expect(history.slice(0, 10)).toEqual(['', '', '', 'line 0', 'line 1', 'line 2', 'line 3', 'line 4', 'line 5', 'line 6']);
    expect(screen.screenLines()).toEqual(['line 7', 'line 8', 'line 9', '', 'STATUS']);
    screen.dispose();
  });

  it('does not harvest rows deleted by a scroll region below the top', () => {
    const screen = new Screen({ cols: 40, rows: 5, scrollbackRows: 100 });
    screen.write('TOP\x1b[2;5r\x1b[5;1H');
    screen.write(numbered(0, 10));
    expect(screen.historyLength).toBe(0);
    screen.dispose();
  });

  it('keeps alternate-screen output out of history', () => {
    const screen = new Screen({ cols: 40, rows: 5, scrollbackRows: 100 });
    screen.write(numbered(0, 8));
    const before = screen.historyLength;
    screen.write('\x1b[?1049h');
    expect(screen.altScreen).toBe(true);
    screen.write(numbered(100, 150));
    expect(screen.historyLength).toBe(before);
    screen.write('\x1b[?1049l');
    expect(screen.altScreen).toBe(false);
    screen.write(numbered(8, 12));
    expect(screen.tail(100).lines.slice(0, 12)).toEqual(Array.from({ length: 12 }, (_, i) => `line ${i}`));
    screen.dispose();
  });

  it('clears history on ED3 and keeps it across a full reset', () => {
    const screen = new Screen({ cols: 40, rows: 5, scrollbackRows: 100 });
    screen.write(numbered(0, 20));
    screen.write('\x1b[H\x1b[2J\x1b[3J');
    expect(screen.historyLength).toBe(0);
    screen.write(numbered(20, 30));
    expect(screen.tail(100).lines.slice(0, 3)).toEqual(['line 20', 'line 21', 'line 22']);
    const held = screen.historyLength;
    screen.write('\x1bc');
    expect(screen.historyLength).toBe(held);
    screen.write(numbered(30, 40));
    const lines = screen.tail(1000).lines;
    expect(lines.filter((l) => l.startsWith('line 3')).length).toBe(10);
    screen.dispose();
  });

  it('survives resizes without losing or repeating lines', () => {
    const screen = new Screen({ cols: 80, rows: 10, scrollbackRows: 10_000 });
    const long = (i: number): string => `item ${i} ${'x'.repeat(i % 90)}`;
    let data = '';
    for (let i = 0; i < 400; i++) data += `${long(i)}\r\n`;
    screen.write(data);
    screen.resize(20, 10);
    screen.resize(120, 40);
    screen.resize(33, 7);
    const lines = screen.tail(100_000, { joinWrapped: true }).lines.filter((l) => l !== '');
    expect(lines).toEqual(Array.from({ length: 400 }, (_, i) => long(i).trimEnd()));
    screen.dispose();
  });

  it('joins soft-wrapped rows on request', () => {
    const screen = new Screen({ cols: 10, rows: 5, scrollbackRows: 100 });
    screen.write('0123456789abcdefghij!\r\nshort\r\n');
    expect(screen.tail(2, { joinWrapped: true }).lines).toEqual(['short', '']);
    expect(screen.tail(3, { joinWrapped: true }).lines).toEqual(['0123456789abcdefghij!', 'short', '']);
    expect(screen.tail(5).lines).toEqual(['0123456789', 'abcdefghij', '!', 'short', '']);
    screen.dispose();
  });

  it('answers terminal queries so programs waiting on them go on', () => {
    const screen = new Screen({ cols: 40, rows: 10, scrollbackRows: 10 });
    const replies: string[] = [];
    screen.onReply((r) => replies.push(r));
    screen.write('ab\x1b[6n\x1b[c');
    expect(replies).toEqual(['\x1b[1;3R', '\x1b[?1;2c']);
    screen.dispose();
  });

  it('reports cursor, modes, title and coloured rows', () => {
    const screen = new Screen({ cols: 40, rows: 4, scrollbackRows: 10 });
    screen.write('\x1b]0;my title\x07\x1b[31mred\x1b[0m plain \x1b[1;44mbold on blue\x1b[0m\x1b[?25l\x1b[?2004h\x1b[?1h');
    expect(screen.title).toBe('my title');
    expect(screen.cursor).toEqual({ x: 22, y: 0, visible: false });
    expect(screen.bracketedPaste).toBe(true);
    expect(screen.keyModes.applicationCursorKeys).toBe(true);
    expect(screen.screenLines()[0]).toBe('red plain bold on blue');
    expect(screen.screenAnsiLines()[0]).toBe('\x1b[0;31mred\x1b[0m plain \x1b[0;1;44mbold on blue\x1b[0m');
    screen.dispose();
  });

  it('matches a terminal with unlimited scrollback under random output', () => {
    const piece = fc.oneof(
      fc.integer({ min: 0, max: 30 }).map((n) => `${'w'.repeat(n)}\r\n`),
      fc.integer({ min: 30, max: 200 }).map((n) => `${'L'.repeat(n)}\r\n`),
      fc.constantFrom('\x1b[1;3r', '\x1b[2;4r', '\x1b[r', '\x1b[3J', '\x1b[2J', '\x1bD', '\x1bM', '\x1b[?1049h', '\x1b[?1049l', '\x1b[5S', '\x1b[2L', '\x1b[H', '\x1b[99B'),
      fc.integer({ min: 1, max: 40 }).map((n) => numbered(0, n)),
    );
    fc.assert(
      fc.property(fc.array(piece, { minLength: 1, maxLength: 60 }), (pieces) => {
        const screen = new Screen({ cols: 30, rows: 6, scrollbackRows: 100_000 });
        const reference = newTerminal({ cols: 30, rows: 6, scrollback: 100_000, allowProposedApi: true, logLevel: 'off' });
        const refCore = coreOf(reference);
        let counter = 0;
        for (const p of pieces) {
          // Tag each line so repeats and losses show.
          const tagged = p.replace(/\r\n/g, () => ` #${counter++}\r\n`);
          screen.write(tagged);
          refCore.writeSync(tagged);
        }
        const normal = reference.buffer.normal;
        const refHistory: string[] = [];
        for (let i = 0; i < normal.baseY; i++) refHistory.push(trimRowEnd(normal.getLine(i)?.translateToString(true) ?? ''));
        const ours = screen.tail(1_000_000).lines;
        expect(ours.slice(0, refHistory.length)).toEqual(refHistory);
        screen.dispose();
        reference.dispose();
      }),
      { numRuns: 150 },
    );
  });

  it('keeps logical lines intact across random output and resizes', () => {
    type Step = { kind: 'write'; data: string } | { kind: 'resize'; cols: number; rows: number };
    const step = fc.oneof(
      { weight: 6, arbitrary: fc.integer({ min: 0, max: 120 }).map((n): Step => ({ kind: 'write', data: `${'q'.repeat(n)}\r\n` })) },
      { weight: 2, arbitrary: fc.integer({ min: 1, max: 30 }).map((n): Step => ({ kind: 'write', data: numbered(0, n) })) },
      { weight: 2, arbitrary: fc.record({ kind: fc.constant('resize' as const), cols: fc.integer({ min: 8, max: 100 }), rows: fc.integer({ min: 2, max: 30 }) }) },
    );
    const logical = (rows: { text: string; wrapped: boolean }[]): string[] => {
      const out: string[] = [];
      for (const row of rows) {
        const last = out.pop();
        if (row.wrapped && last !== undefined) out.push(last + row.text);
        else out.push(...(last === undefined ? [] : [last]), row.text);
      }
      return out.map(trimRowEnd);
    };
    fc.assert(
      fc.property(fc.array(step, { minLength: 1, maxLength: 40 }), (steps: Step[]) => {
        const screen = new Screen({ cols: 40, rows: 6, scrollbackRows: 100_000 });
        const reference = newTerminal({ cols: 40, rows: 6, scrollback: 100_000, allowProposedApi: true, logLevel: 'off' });
        const refCore = coreOf(reference);
        let counter = 0;
        for (const s of steps) {
          if (s.kind === 'resize') {
            screen.resize(s.cols, s.rows);
            reference.resize(s.cols, s.rows);
          } else {
            const tagged = s.data.replace(/\r\n/g, () => ` #${counter++}\r\n`);
            screen.write(tagged);
            refCore.writeSync(tagged);
          }
        }
        const buffer = reference.buffer.normal;
        const refRows: { text: string; wrapped: boolean }[] = [];
        for (let i = 0; i < buffer.length; i++) {
          const line = buffer.getLine(i);
          refRows.push({ text: line?.translateToString(true) ?? '', wrapped: line?.isWrapped ?? false });
        }
        const expected = logical(refRows).filter((l) => l !== '');
        const ours = screen.tail(1_000_000, { joinWrapped: true }).lines.filter((l) => l !== '');
        expect(ours).toEqual(expected);
        screen.dispose();
        reference.dispose();
      }),
      { numRuns: 150 },
    );
  });
});
