import { describe, expect, it } from 'vitest';
import { jsonPieces } from './answer.js';

describe('jsonPieces', () => {
  it('writes what JSON.stringify writes, a list item by item', () => {
    const values: unknown[] = [
      { run: { id: 'r', at: new Date(0) }, events: [{ seq: 1 }, undefined, { seq: 2, f: () => 1 }], skipped: undefined, next_after: null },
      [1, 'two', { three: [3] }],
      { nested: { list: [1, 2] }, empty: [], text: 'a"b\u2028' },
      'plain',
      42,
      null,
      {},
    ];
    for (const value of values) expect([...jsonPieces(value)].join('')).toBe(JSON.stringify(value));
    const pieces = [...jsonPieces({ events: Array.from({ length: 5 }, (_, seq) => ({ seq })) })];
    expect(pieces.length).toBeGreaterThanOrEqual(5);
  });
});
