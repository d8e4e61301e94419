/**
 * Run events on a real nats-server, from a node's publisher to the controller's intake and its
 * sink (a stand-in for the ledger, with the ledger's unique key on run and sequence): stored once
 * per message id, written in sequence order per run, acknowledged only once written, and complete
 * across a controller that dies with events in hand and comes back after more were published. A
 * gap that never closes (an event never stored) is a hole, reported and skipped. A publish during
 * a server restart is tried again and stored once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jetstream } from '@nats-io/jetstream';
import { EVENTS_STREAM, EventIntake, EventPublisher, type DeliveredEvent, type EventHole, type EventSink } from '../../src/cluster/index.js';
import { Emitter } from '../../src/core/emitter.js';
import { silentLogger } from '../../src/core/logger.js';
import { EventLog, nextReconnect, startTestCluster, type TestCluster } from '../support/cluster.js';
import { until } from '../support/processes.js';

let cluster: TestCluster;
let publisher: EventPublisher;

beforeAll(async () => {
  cluster = await startTestCluster();
  publisher = new EventPublisher({ nc: (await cluster.connect('node-a')).nc, node: 'node-a', logger: silentLogger });
});

afterAll(async () => {
  await cluster.close();
});

/** The ledger's part: rows keyed on (run, seq), every write in the order it came, and a way to hold one write. */
class MemoryLedger implements EventSink {
  readonly rows = new Map<string, DeliveredEvent>();
  readonly writes: { run: string; seq: number }[] = [];
  private readonly written = new Emitter<DeliveredEvent>();
  readonly onWrite = this.written.event;
  /** A write of this run and sequence waits until the gate opens (and fails if it is told to). */
  gate: { run: string; seq: number; opened: Promise<void> } | undefined;

  lastSeq(runId: string): Promise<number> {
    let last = 0;
    for (const row of this.rows.values()) if (row.event.run_id === runId) last = Math.max(last, row.event.seq);
    return Promise.resolve(last);
  }

  async write(delivered: DeliveredEvent): Promise<void> {
    const { run_id: run, seq } = delivered.event;
    if (this.gate?.run === run && this.gate.seq === seq) await this.gate.opened;
    this.writes.push({ run, seq });
    if (!this.rows.has(`${run}:${seq}`)) this.rows.set(`${run}:${seq}`, delivered);
    this.written.fire(delivered);
  }

  seqsOf(run: string): number[] {
    return this.writes.filter((w) => w.run === run).map((w) => w.seq);
  }
}

const event = (run: string, seq: number) => ({ schema_version: 'v2', run_id: run, seq, type: 'token', ts: seq, data: { text: `${run} ${seq}` }, compat: { text: `${seq}`, status: 'streaming', is_error: false } });

const range = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, i) => from + i);

describe('run events', () => {
  it('are stored once per run and sequence, and written once, in order, with the node that sent them', async () => {
    const ledger = new MemoryLedger();
    const writes = new EventLog(ledger.onWrite);
    const intake = await EventIntake.start({ nc: cluster.controller.nc, sink: ledger, logger: silentLogger });
    try {
      const first = await publisher.publish(event('dedupe', 1));
      // Sent again (a node that did not know it was stored): a second message, taken once.
      const again = await publisher.publish(event('dedupe', 1));
      expect(again.duplicate).toBe(false);
      expect(again.streamSeq).toBeGreaterThan(first.streamSeq);
      // A message id another publisher chose cannot be the next event's: its own is part random.
      const js = jetstream(cluster.controller.nc);
      for (const guess of ['dedupe:2', 'node-a:dedupe:2']) expect((await js.publish('sb.events.node-b.guess', JSON.stringify(event('guess', 1)), { msgID: guess })).duplicate).toBe(false);
      expect((await publisher.publish(event('dedupe', 2))).duplicate).toBe(false);
      await writes.waitFor((d) => d.event.run_id === 'dedupe' && d.event.seq === 2, 'the second event');
      expect(ledger.seqsOf('dedupe')).toEqual([1, 2]);
      expect(ledger.rows.get('dedupe:1')).toMatchObject({ node: 'node-a', streamSeq: first.streamSeq, event: { schema_version: 'v2', data: { text: 'dedupe 1' } } });
    } finally {
      writes.dispose();
      await intake.close();
    }
  });

  it('all reach the ledger, in order, across a controller that died with events in hand and came back after more were published', async () => {
    const ledger = new MemoryLedger();
    let fail: (err: Error) => void = () => undefined;
    ledger.gate = { run: 'restart', seq: 3, opened: new Promise<void>((_resolve, reject) => (fail = reject)) };
    const writes = new EventLog(ledger.onWrite);
    const firstController = await cluster.connect('controller-1');
    const intake = await EventIntake.start({ nc: firstController.nc, sink: ledger, logger: silentLogger });
    for (const seq of range(1, 5)) await publisher.publish(event('restart', seq));
    await writes.waitFor((d) => d.event.run_id === 'restart' && d.event.seq === 2, 'the first two events');
    // The controller dies while writing event 3, with 4 and 5 in hand and not acknowledged.
    await until(async () => (await cluster.jsm.consumers.info(EVENTS_STREAM, 'ledger')).num_ack_pending >= 3, 'events 3 to 5 in the dead controller’s hands');
    await firstController.close();
    fail(new Error('the controller died'));
    await intake.close();
    expect(ledger.seqsOf('restart')).toEqual([1, 2]);

    // Published while no controller runs.
    for (const seq of range(6, 8)) await publisher.publish(event('restart', seq));
    ledger.gate = undefined;
    const second = await EventIntake.start({ nc: cluster.controller.nc, sink: ledger, logger: silentLogger, gapWaitMs: 200 });
    try {
      // 3 to 5 come back only after the ack wait (30 s), behind 6 to 8: the gap is fetched from the stream.
      await writes.waitFor((d) => d.event.run_id === 'restart' && d.event.seq === 8, 'the last event');
      expect(ledger.seqsOf('restart')).toEqual(range(1, 8));
      expect(ledger.rows.size).toBeGreaterThanOrEqual(8);
    } finally {
      writes.dispose();
      await second.close();
    }
  });

  it('skip a hole, an event never stored, and say so', async () => {
    const ledger = new MemoryLedger();
    const writes = new EventLog(ledger.onWrite);
    const intake = await EventIntake.start({ nc: cluster.controller.nc, sink: ledger, logger: silentLogger, gapWaitMs: 200 });
    const holes = new EventLog<EventHole>(intake.onHole);
    try {
      for (const seq of [1, 2, 4, 5]) await publisher.publish(event('holey', seq));
      await writes.waitFor((d) => d.event.run_id === 'holey' && d.event.seq === 5, 'the events after the hole');
      expect(ledger.seqsOf('holey')).toEqual([1, 2, 4, 5]);
      expect(await holes.waitFor((h) => h.runId === 'holey', 'the hole')).toEqual({ runId: 'holey', from: 3, to: 3 });
    } finally {
      writes.dispose();
      holes.dispose();
      await intake.close();
    }
  });

  it('published during a server restart are tried again and stored once', async () => {
    const ledger = new MemoryLedger();
    const writes = new EventLog(ledger.onWrite);
    const intake = await EventIntake.start({ nc: cluster.controller.nc, sink: ledger, logger: silentLogger });
    try {
      await publisher.publish(event('outage', 1));
      const reconnected = nextReconnect(cluster.controller.nc);
      const restarting = cluster.server.restart();
      // Sent while the server goes down or is down: answered once it is back.
      const during = publisher.publish(event('outage', 2));
      await restarting;
      await during;
      await reconnected;
      await publisher.publish(event('outage', 3));
      await writes.waitFor((d) => d.event.run_id === 'outage' && d.event.seq === 3, 'the event after the restart');
      expect(ledger.seqsOf('outage')).toEqual([1, 2, 3]);
      const stored = await cluster.jsm.streams.info(EVENTS_STREAM, { subjects_filter: 'sb.events.*.outage' });
      expect(stored.state.subjects).toEqual({ 'sb.events.node-a.outage': 3 });
    } finally {
      writes.dispose();
      await intake.close();
    }
  });
});
