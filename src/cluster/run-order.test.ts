import { describe, expect, it } from 'vitest';
import { RunOrder } from './run-order.js';

describe('a run put back in order', () => {
  it('starts after what the sink holds and tells events it has', () => {
    const order = new RunOrder<string>('r1', 3);
    expect(order.next).toBe(4);
    expect(order.isDelivered(3)).toBe(true);
    expect(order.isDelivered(4)).toBe(false);
    order.hold(2, 'old');
    expect(order.heldCount).toBe(0);
  });

  it('holds early events and names the gap before them', () => {
    const order = new RunOrder<string>('r1', 0);
    order.hold(4, 'four');
    order.hold(3, 'three');
    expect(order.gap()).toEqual({ from: 1, to: 2 });
    order.hold(1, 'one');
    expect(order.gap()).toBeUndefined();
    expect(order.heldAt(order.next)).toBe('one');
    order.advance(10);
    expect(order.gap()).toEqual({ from: 2, to: 2 });
    expect(order.lastStreamSeq).toBe(10);
  });

  it('skips a hole and goes on', () => {
    const order = new RunOrder<string>('r1', 1);
    order.hold(5, 'five');
    order.skipTo(5);
    expect(order.next).toBe(5);
    expect(order.heldAt(5)).toBe('five');
    expect(order.gap()).toBeUndefined();
  });

  it('skips a gap of any width at once: only what is held is looked at (a node may make a sequence up)', () => {
    const order = new RunOrder<string>('r', 1);
    order.hold(3, 'three');
    order.hold(Number.MAX_SAFE_INTEGER, 'last');
    expect(order.gap()).toEqual({ from: 2, to: 2 });
    order.skipTo(Number.MAX_SAFE_INTEGER);
    expect(order.next).toBe(Number.MAX_SAFE_INTEGER);
    expect(order.heldAt(3)).toBeUndefined();
    expect(order.heldAt(Number.MAX_SAFE_INTEGER)).toBe('last');
  });
});
