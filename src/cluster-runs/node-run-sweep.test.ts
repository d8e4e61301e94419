import { describe, expect, it } from 'vitest';
import { STALE_WORK_ITEM_MS, type ConsumerPosition } from '../cluster/index.js';
import type { RunRecord } from '../ledger/index.js';
import type { RunSpec } from '../ledger/run-model.js';
import { QueuedRunCheck, UnclaimedDeliveries, type QueuedItems, type WorkItemAt } from './node-run-sweep.js';

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

/** A queued run of node `node` made at `createdAt` (wall clock), as the ledger lists it. */
function queuedRun(id: string, node: string, createdAt = 0): RunRecord {
  return { spec: { id, node, created_at: createdAt } as RunSpec, status: 'queued' } as RunRecord;
}

/** The work queue as the check sees it: items by run, which are still queued, each pool's consumer position, and the lookups made. */
class FakeQueue implements QueuedItems {
  readonly items = new Map<string, WorkItemAt>();
  readonly gone = new Set<number>();
  readonly positions = new Map<string, ConsumerPosition | Error>();
  readonly lookups: string[] = [];

  workItemOf(runId: string): WorkItemAt | undefined {
    return this.items.get(runId);
  }

  isQueued(streamSeq: number): Promise<boolean> {
    return Promise.resolve(!this.gone.has(streamSeq));
  }

  consumerPosition(pool: string): Promise<ConsumerPosition> {
    this.lookups.push(pool);
    const position = this.positions.get(pool);
    if (position === undefined) return Promise.reject(new Error(`no consumer for pool ${pool}`));
    return position instanceof Error ? Promise.reject(position) : Promise.resolve(position);
  }
}

/** A queue holding run r1's item at `streamSeq` of pool n1, whose consumer has handed out the stream up to `deliveredSeq`. */
function oneItem(streamSeq: number, deliveredSeq: number): FakeQueue {
  const queue = new FakeQueue();
  queue.items.set('r1', { streamSeq, pool: 'n1' });
  queue.positions.set('n1', { deliveredSeq, ackWaitMs: ACK_WAIT_MS });
  return queue;
}

/** A check over `queue` with clocks the test moves: the wall clock and the monotonic one apart. */
function checkOver(queue: FakeQueue, lostAfterMs = 0): { check: QueuedRunCheck; clock: { wall: number; mono: number }; sweep: (records: RunRecord[]) => Promise<(string | undefined)[]> } {
  const clock = { wall: 1_000_000, mono: 0 };
  const check = new QueuedRunCheck(queue, { now: () => clock.wall, monotonicNow: () => clock.mono, lostAfterMs });
  const sweep = async (records: RunRecord[]): Promise<(string | undefined)[]> => {
    const pass = check.startPass();
    const out: (string | undefined)[] = [];
    for (const record of records) out.push(await check.whyNotTaken(record, pass).catch((err: unknown) => `threw: ${String(err)}`));
    check.endPass(pass);
    return out;
  };
  return { check, clock, sweep };
}

describe('QueuedRunCheck: whether a queued run nobody claimed may still be taken by a node', () => {
  it('never gives up an item its pool has not handed out yet, however long it waits (slots full)', async () => {
    const queue = oneItem(7, 6);
    const { clock, sweep } = checkOver(queue);
    for (let i = 0; i < 5; i++) {
      expect(await sweep([queuedRun('r1', 'n1', clock.wall)])).toEqual([undefined]);
      clock.mono += ACK_WAIT_MS;
    }
  });

  it('gives up a delivered, unclaimed item only past the longer of the ack wait and lostAfterMs, with the message the person reads', async () => {
    const queue = oneItem(7, 9);
    const { clock, sweep } = checkOver(queue, 40_000);
    const run = queuedRun('r1', 'n1', clock.wall);
    expect(await sweep([run])).toEqual([undefined]);
    clock.mono += 35_000;
    expect(await sweep([run])).toEqual([undefined]);
    clock.mono += 6_000;
    expect(await sweep([run])).toEqual(['its work item was lost on the way to node n1; nothing was started: submit it again']);
  });

  it('counts on the monotonic clock: a wall clock that jumps ahead does not make a fresh delivery look old', async () => {
    const queue = oneItem(3, 3);
    const { clock, sweep } = checkOver(queue);
    const run = queuedRun('r1', 'n1', clock.wall);
    expect(await sweep([run])).toEqual([undefined]);
    clock.wall += 10 * 60_000;
    expect(await sweep([run])).toEqual([undefined]);
  });

  it('starts the wait again for a run that a pass did not see unclaimed (it was claimed, then its claim went)', async () => {
    const queue = oneItem(3, 3);
    const { clock, sweep } = checkOver(queue);
    const run = queuedRun('r1', 'n1', clock.wall);
    await sweep([run]);
    clock.mono += 20_000;
    await sweep([]);
    clock.mono += 20_000;
    expect(await sweep([run])).toEqual([undefined]);
    clock.mono += ACK_WAIT_MS + 1;
    expect((await sweep([run]))[0]).toMatch(/lost on the way/);
  });

  it('drops the wait, never gives up, when the consumer cannot be asked', async () => {
    const queue = oneItem(3, 3);
    const { clock, sweep } = checkOver(queue);
    const run = queuedRun('r1', 'n1', clock.wall);
    await sweep([run]);
    clock.mono += ACK_WAIT_MS + 1;
    queue.positions.set('n1', new Error('timeout'));
    expect((await sweep([run]))[0]).toMatch(/^threw: .*timeout/);
    queue.positions.set('n1', { deliveredSeq: 3, ackWaitMs: ACK_WAIT_MS });
    expect(await sweep([run])).toEqual([undefined]);
  });

  it("reads each item against its own pool's consumer, once per pool in a pass whatever the number of runs", async () => {
    const queue = new FakeQueue();
    // The runs go to node n1 through pool gpu. A pull that found nothing on n1's own pool moved its
    // position past gpu's items: that says nothing of them.
    queue.positions.set('gpu', { deliveredSeq: 2, ackWaitMs: ACK_WAIT_MS });
    queue.positions.set('n1', { deliveredSeq: 50, ackWaitMs: ACK_WAIT_MS });
    const runs = [1, 2, 3, 4].map((i) => queuedRun(`r${i}`, 'n1'));
    for (const [i, run] of runs.entries()) queue.items.set(run.spec.id, { streamSeq: 10 + i, pool: 'gpu' });
    const { clock, sweep } = checkOver(queue);
    for (const run of runs) run.spec.created_at = clock.wall;
    await sweep(runs);
    clock.mono += 10 * ACK_WAIT_MS;
    expect(await sweep(runs)).toEqual([undefined, undefined, undefined, undefined]);
    expect(queue.lookups).toEqual(['gpu', 'gpu']);
  });

  it('gives up an item that left the queue untaken, one older than any node would start, and waits on a run this controller did not send', async () => {
    const queue = new FakeQueue();
    queue.items.set('gone', { streamSeq: 4, pool: 'n1' });
    queue.gone.add(4);
    const { clock, sweep } = checkOver(queue);
    expect(await sweep([queuedRun('gone', 'n1', clock.wall), queuedRun('stale', 'n1', clock.wall - STALE_WORK_ITEM_MS - 1), queuedRun('unknown', 'n1', clock.wall)])).toEqual([
      'its work item left the queue without a node taking it',
      'its work item waited longer than any node would start it',
      undefined,
    ]);
  });
});
