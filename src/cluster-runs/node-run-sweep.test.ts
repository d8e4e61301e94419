import { describe, expect, it } from 'vitest';
import { UnclaimedDeliveries } from './node-run-sweep.js';

const ACK_WAIT_MS = 30_000;

describe('UnclaimedDeliveries: a work item delivered and never claimed is lost only once seen so past the ack wait', () => {
  it('is not lost when first seen, nor at the ack wait, only after it', () => {
    const unclaimed = new UnclaimedDeliveries();
    expect(unclaimed.seen('r1', 1_000, ACK_WAIT_MS)).toBe(false);
    expect(unclaimed.seen('r1', 1_000 + ACK_WAIT_MS, ACK_WAIT_MS)).toBe(false);
    expect(unclaimed.seen('r1', 1_001 + ACK_WAIT_MS, ACK_WAIT_MS)).toBe(true);
  });

  it('counts from the first sighting, not from the latest', () => {
    const unclaimed = new UnclaimedDeliveries();
    unclaimed.seen('r1', 0, ACK_WAIT_MS);
    unclaimed.seen('r1', 20_000, ACK_WAIT_MS);
    expect(unclaimed.seen('r1', 30_001, ACK_WAIT_MS)).toBe(true);
  });

  it('starts again for a run not seen unclaimed in between (claimed, ended, or not delivered)', () => {
    const unclaimed = new UnclaimedDeliveries();
    unclaimed.seen('r1', 0, ACK_WAIT_MS);
    unclaimed.seen('r2', 0, ACK_WAIT_MS);
    unclaimed.keepOnly(new Set(['r2']));
    expect(unclaimed.seen('r1', 40_000, ACK_WAIT_MS)).toBe(false);
    expect(unclaimed.seen('r2', 40_000, ACK_WAIT_MS)).toBe(true);
  });
});
