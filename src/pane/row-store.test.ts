import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { RowStore } from './row-store.js';

const texts = (rows: { text: string }[]): string[] => rows.map((r) => r.text);

describe('RowStore', () => {
  it('keeps rows in order across blocks', () => {
    const store = new RowStore(1000, 4);
    for (let i = 0; i < 10; i++) store.append(`row ${i}`, i % 3 === 0);
    expect(store.length).toBe(10);
    expect(texts(store.slice(0))).toEqual(Array.from({ length: 10 }, (_, i) => `row ${i}`));
    expect(store.slice(3, 7).map((r) => r.wrapped)).toEqual([true, false, false, true]);
  });

  it('evicts the oldest rows beyond maxRows', () => {
    const store = new RowStore(5, 2);
    for (let i = 0; i < 12; i++) store.append(`r${i}`, false);
    expect(store.length).toBe(5);
    expect(store.evicted).toBe(7);
    expect(texts(store.slice(0))).toEqual(['r7', 'r8', 'r9', 'r10', 'r11']);
  });

  it('holds nothing with maxRows 0', () => {
    const store = new RowStore(0);
    store.append('x', false);
    expect(store.length).toBe(0);
  });

  it('truncates from the end, reopening sealed blocks', () => {
    const store = new RowStore(100, 3);
    for (let i = 0; i < 8; i++) store.append(`r${i}`, i === 4);
    store.truncate(4);
    expect(texts(store.slice(0))).toEqual(['r0', 'r1', 'r2', 'r3']);
    store.append('again', false);
    expect(texts(store.slice(0))).toEqual(['r0', 'r1', 'r2', 'r3', 'again']);
  });

  it('truncates correctly after front eviction', () => {
    const store = new RowStore(4, 3);
    for (let i = 0; i < 7; i++) store.append(`r${i}`, false);
    // Held: r3 r4 r5 r6, where r3 sits behind headSkip in the first block.
    store.truncate(2);
    expect(texts(store.slice(0))).toEqual(['r3', 'r4']);
  });

  it('behaves like a bounded array under any sequence of operations', () => {
    type Op = { kind: 'append'; text: string; wrapped: boolean } | { kind: 'truncate'; to: number } | { kind: 'clear' };
    const op = fc.oneof(
      { weight: 8, arbitrary: fc.record({ kind: fc.constant('append' as const), text: fc.string({ maxLength: 6 }).map((s) => s.replace(/\n/g, '')), wrapped: fc.boolean() }) },
      { weight: 2, arbitrary: fc.record({ kind: fc.constant('truncate' as const), to: fc.nat(40) }) },
      { weight: 1, arbitrary: fc.record({ kind: fc.constant('clear' as const) }) },
    );
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 30 }), fc.integer({ min: 1, max: 7 }), fc.array(op, { maxLength: 200 }), (max, block, ops: Op[]) => {
        const store = new RowStore(max, block);
        let model: { text: string; wrapped: boolean }[] = [];
        for (const o of ops) {
          if (o.kind === 'append') {
            store.append(o.text, o.wrapped);
            model.push({ text: o.text, wrapped: o.wrapped });
            if (model.length > max) model = model.slice(model.length - max);
          } else if (o.kind === 'truncate') {
            store.truncate(o.to);
            model = model.slice(0, Math.min(model.length, o.to));
          } else {
            store.clear();
            model = [];
          }
          expect(store.length).toBe(model.length);
        }
        expect(store.slice(0)).toEqual(model);
        const a = Math.floor(model.length / 3);
        expect(store.slice(a, a + 5)).toEqual(model.slice(a, a + 5));
      }),
    );
  });
});
