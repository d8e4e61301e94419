import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { LineFramer, type FrameEvent } from './framing.js';

const lines = (events: FrameEvent[]): string[] => events.flatMap((e) => (e.kind === 'line' ? [e.line.toString()] : []));

describe('LineFramer', () => {
  it('splits several lines in one chunk and keeps a partial one', () => {
    const f = new LineFramer(100);
    expect(lines(f.push(Buffer.from('{"a":1}\n{"b":2}\r\n{"c"')))).toEqual(['{"a":1}', '{"b":2}']);
    expect(f.hasPartialLine).toBe(true);
    expect(lines(f.push(Buffer.from(':3}\n')))).toEqual(['{"c":3}']);
    expect(f.hasPartialLine).toBe(false);
  });

  it('reassembles a multi-byte character split across chunks', () => {
    const f = new LineFramer(100);
    const bytes = Buffer.from('"héllo ❯"\n');
    expect(f.push(bytes.subarray(0, 3))).toEqual([]);
    expect(lines(f.push(bytes.subarray(3)))).toEqual(['"héllo ❯"']);
  });

  it('drops an oversize line without buffering it and goes on', () => {
    const f = new LineFramer(10);
    const events = f.push(Buffer.from('0123456789abc'));
    expect(events).toEqual([]);
    expect(f.pendingBytes).toBe(0);
    const more = f.push(Buffer.from('def\nok\n'));
    expect(more).toEqual([
      { kind: 'oversize', bytes: 16 },
      { kind: 'line', line: Buffer.from('ok') },
    ]);
  });

  it('gives the same lines however the stream is cut', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ maxLength: 20 }).map((s) => s.replace(/[\r\n]/g, '')), { maxLength: 20 }), fc.array(fc.nat(50), { maxLength: 20 }), (texts, cuts) => {
        const stream = Buffer.from(texts.map((t) => `${t}\n`).join(''));
        const f = new LineFramer(1000);
        const got: string[] = [];
        let at = 0;
        for (const cut of cuts) {
          const end = Math.min(stream.length, at + cut);
          got.push(...lines(f.push(stream.subarray(at, end))));
          at = end;
        }
        got.push(...lines(f.push(stream.subarray(at))));
        expect(got).toEqual(texts);
      }),
    );
  });
});

describe('LineFramer with a trickling client', () => {
  // Quadratic copying would blow through the test timeout here; the framer copies each byte once.
  it('reassembles a long line sent one byte at a time', () => {
    const f = new LineFramer(300_000);
    const line = Buffer.from(`${'x'.repeat(200_000)}\n`);
    const events: FrameEvent[] = [];
    for (let i = 0; i < line.length; i++) events.push(...f.push(line.subarray(i, i + 1)));
    expect(lines(events)).toEqual(['x'.repeat(200_000)]);
  });
});
