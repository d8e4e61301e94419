import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { RawHistory } from './raw-history.js';

describe('RawHistory', () => {
  it('returns everything while under the limit', () => {
    const h = new RawHistory(1024);
    h.append(Buffer.from('hello '));
    h.append(Buffer.from('world'));
    expect(h.read()).toEqual({ data: Buffer.from('hello world'), from: 0, truncated: false });
    expect(h.read(6).data.toString()).toBe('world');
    expect(h.endOffset).toBe(11);
  });

  it('keeps at least the last maxBytes and reports truncation', () => {
    const h = new RawHistory(40_000);
    const all = Buffer.alloc(100_000);
    for (let i = 0; i < all.length; i++) all[i] = i % 251;
    for (let i = 0; i < all.length; i += 777) h.append(all.subarray(i, i + 777));
    const r = h.read();
    expect(r.truncated).toBe(true);
    expect(r.data.length).toBe(40_000);
    expect(r.data.equals(all.subarray(60_000))).toBe(true);
    expect(h.heldBytes).toBeLessThan(40_000 + 16 * 1024);
    const fromOld = h.read(10);
    expect(fromOld.truncated).toBe(true);
  });

  it('matches a plain byte array for any appends and reads', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 50_000 }), fc.array(fc.uint8Array({ maxLength: 20_000 }), { maxLength: 20 }), fc.nat(), (max, chunks, fromSeed) => {
        const h = new RawHistory(max);
        const model = Buffer.concat(chunks);
        for (const c of chunks) h.append(c);
        const full = h.read();
        expect(full.data.equals(model.subarray(model.length - full.data.length))).toBe(true);
        expect(full.data.length).toBe(Math.min(model.length, max));
        const from = model.length === 0 ? 0 : fromSeed % (model.length + 1);
        const part = h.read(from);
        expect(part.data.equals(model.subarray(part.from))).toBe(true);
        expect(part.from).toBeGreaterThanOrEqual(from);
      }),
    );
  });
});
