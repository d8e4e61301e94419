import { describe, expect, it } from 'vitest';
import { silentLogger } from '../core/logger.js';
import { DurableAcks } from './durable-acks.js';

/** A sink whose writes the test settles one by one, in order. */
class ScriptedSink {
  readonly writes: { settle: (ok: boolean) => void }[] = [];
  private startedWaiters: (() => void)[] = [];

  durable = (): Promise<void> =>
    new Promise<void>((resolve, reject) => {
      this.writes.push({ settle: (ok) => (ok ? resolve() : reject(new Error('store away'))) });
      for (const wake of this.startedWaiters.splice(0)) wake();
    });

  /** Resolves once `n` writes have begun. */
  async writeBegun(n: number): Promise<void> {
    while (this.writes.length < n) await new Promise<void>((resolve) => this.startedWaiters.push(resolve));
  }
}

function setUp(retryMs = 1): { sink: ScriptedSink; acked: string[]; acks: DurableAcks<string> } {
  const sink = new ScriptedSink();
  const acked: string[] = [];
  const acks = new DurableAcks<string>({ durable: sink.durable, ack: (d) => acked.push(d), retryMs, logger: silentLogger });
  return { sink, acked, acks };
}

/** Lets every pending promise callback run. */
const settled = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('DurableAcks', () => {
  it('covers deliveries added in one turn with one write, and acknowledges none before it succeeds', async () => {
    const { sink, acked, acks } = setUp();
    acks.add(['a']);
    acks.add(['b', 'c']);
    await sink.writeBegun(1);
    expect(acked).toEqual([]);
    sink.writes[0]?.settle(true);
    await settled();
    expect(acked).toEqual(['a', 'b', 'c']);
    expect(sink.writes).toHaveLength(1);
    expect(acks.pending).toBe(0);
  });

  it('groups what comes in during a write into the next one, acknowledged only after that next write', async () => {
    const { sink, acked, acks } = setUp();
    acks.add(['a']);
    await sink.writeBegun(1);
    acks.add(['b']);
    acks.add(['c']);
    sink.writes[0]?.settle(true);
    await sink.writeBegun(2);
    // b and c came after the first write began: it does not cover them.
    expect(acked).toEqual(['a']);
    sink.writes[1]?.settle(true);
    await settled();
    expect(acked).toEqual(['a', 'b', 'c']);
    expect(sink.writes).toHaveLength(2);
  });

  it('keeps the deliveries of a failed write, ahead of later ones, and acknowledges them after a retry succeeds', async () => {
    const { sink, acked, acks } = setUp();
    acks.add(['a', 'b']);
    await sink.writeBegun(1);
    sink.writes[0]?.settle(false);
    await settled();
    acks.add(['c']);
    expect(acks.pending).toBe(3);
    await sink.writeBegun(2);
    expect(acked).toEqual([]);
    sink.writes[1]?.settle(true);
    await settled();
    expect(acked).toEqual(['a', 'b', 'c']);
  });

  it('on close, lets the write in progress acknowledge what it covers and starts no other', async () => {
    const { sink, acked, acks } = setUp();
    acks.add(['a']);
    await sink.writeBegun(1);
    acks.add(['b']);
    const closed = acks.close();
    sink.writes[0]?.settle(true);
    await closed;
    await settled();
    expect(acked).toEqual(['a']);
    expect(sink.writes).toHaveLength(1);
    acks.add(['c']);
    await settled();
    expect(sink.writes).toHaveLength(1);
  });

  it('after close, a failed write is not tried again', async () => {
    const { sink, acked, acks } = setUp();
    acks.add(['a']);
    await sink.writeBegun(1);
    const closed = acks.close();
    sink.writes[0]?.settle(false);
    await closed;
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(sink.writes).toHaveLength(1);
    expect(acked).toEqual([]);
  });
});
