/**
 * One node cut off the network and back (issue 26: "a node cut off from the network and back does
 * not duplicate events in the ledger"), on a real nats-server: a controller in this process, two
 * nodes as processes of their own (`switchboard node`, the shell backend), one of them reaching
 * NATS through a relay that black-holes its traffic (test/support/tcp-cut.ts), the other and the
 * controller on the server directly. Each case runs twice: the link comes back with the held
 * bytes delivered (a partition shorter than TCP's and NATS's patience) or with every connection
 * through it reset (an end gave up meanwhile).
 *
 * - A short cut (well inside the lease's TTL): the run keeps writing output while cut; after it,
 *   the run completes and the controller's ledger has every event once, in order, no gap; the
 *   run started once; the other node ran a run during the cut.
 * - A run sent to the node just as it is cut off: its work item is handed to the node's waiting
 *   pull, into the black hole. Resumed, it arrives and the run completes; reset, the item is lost
 *   and the run is left `queued` (a bug, marked `it.fails`; see there).
 * - A long cut (past a short TTL): the controller sees the node lost and the run `orphaned`; when
 *   the link is back the node registers again under a new epoch and finishes the run, and its late
 *   events reach the stream but not the ledger: the board keeps `orphaned` (the person decides), no
 *   event is stored twice, nothing started twice; a cancel then ends the run, and the node takes
 *   new runs again.
 *
 * Nothing here waits on a fixed sleep: each step waits for the event or state that proves it, with
 * a bound. The ledger is SQLite or PostgreSQL by $SWITCHBOARD_TEST_LEDGER.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import type { NatsConnection } from '@nats-io/transport-node';
import { afterAll, describe, expect, it } from 'vitest';
import { EVENTS_STREAM, eventSubject, NODE_HEADER, parseRunEvent, type DirectoryEvent } from '../../src/cluster/index.js';
import { LEDGER_CONSUMER } from '../../src/cluster/topology.js';
import type { RunEvent } from '../../src/ledger/run-events.js';
import type { RunService } from '../../src/runs/run-service.js';
import { EventLog } from '../support/cluster.js';
import { startTestController, type TestController } from '../support/cluster-controller.js';
import { followRun } from '../support/run-follow.js';
import { endRunProcessesIn } from '../support/run-processes.js';
import { tempDir } from '../support/shell.js';
import { startSwitchboardNode, within, type SwitchboardNode } from '../support/switchboard-node.js';
import { startTcpCut, type RestoreHow, type TcpCut } from '../support/tcp-cut.js';
import { atTestProcessEnd } from '../support/test-process-end.js';
import { useTestLedger } from '../support/test-ledger.js';

/** A bound on a wait for something that must happen; never a measure of how fast it did. */
const WAIT_MS = 60_000;
/** The lease TTL of the long cut: short, so the loss is seen soon (renewed every third of it). */
const SHORT_TTL_MS = 3_000;
/** How often a file or the ledger consumer is looked at while waited for. */
const LOOK_EVERY_MS = 50;

const testLedger = useTestLedger();
const scratch = tempDir('sb-cluster-partition-');
const endLeftRunProcesses = (): void => endRunProcessesIn(scratch.dir);
atTestProcessEnd(() => {
  endLeftRunProcesses();
  scratch.cleanup();
});
afterAll(() => {
  endLeftRunProcesses();
  scratch.cleanup();
});

/** A controller, the node reaching it through the relay, and a peer node on the server directly. */
interface Partitioned {
  readonly ctl: TestController;
  readonly relay: TcpCut;
  readonly cutNode: SwitchboardNode;
  readonly cutName: string;
  readonly peerName: string;
  /** Every change the controller's directory saw since the nodes were started. */
  readonly directory: EventLog<DirectoryEvent>;
  /** The case's own folder, the runs' working folder. */
  readonly folder: string;
  close(): Promise<void>;
}

async function startPartitioned(label: string, nodeTtlMs?: number): Promise<Partitioned> {
  const folder = path.join(scratch.dir, label);
  mkdirSync(folder, { recursive: true });
  const ctl = await startTestController(testLedger, folder, nodeTtlMs === undefined ? {} : { nodeTtlMs });
  const started: SwitchboardNode[] = [];
  let relay: TcpCut | undefined;
  const directory = new EventLog(ctl.runs.directory.onChange);
  const close = async (): Promise<void> => {
    directory.dispose();
    // A test that failed mid-cut: the link back first, so the nodes can leave the cluster as they stop.
    relay?.restore('reset');
    for (const node of started.reverse()) await node.stop();
    await relay?.close();
    endLeftRunProcesses();
    await ctl.close();
  };
  try {
    relay = await startTcpCut(ctl.cluster.server.port);
    const cutName = `${label}-cut`;
    const peerName = `${label}-peer`;
    started.push(await startSwitchboardNode({ url: relay.url, scratch: scratch.dir, name: cutName }));
    started.push(await startSwitchboardNode({ url: ctl.cluster.server.url, scratch: scratch.dir, name: peerName }));
    await nodeSeen(ctl, directory, cutName);
    await nodeSeen(ctl, directory, peerName);
    return { ctl, relay, cutNode: started[0] as SwitchboardNode, cutName, peerName, directory, folder, close };
  } catch (err) {
    await close();
    throw err;
  }
}

async function nodeSeen(ctl: TestController, directory: EventLog<DirectoryEvent>, name: string): Promise<void> {
  if (ctl.runs.directory.get(name)) return;
  await directory.waitFor((c) => c.node.record.name === name && c.kind !== 'left' && c.kind !== 'lost', `node ${name} seen by the controller`);
}

/** Follows a run on the controller from its first event until `until` holds for one (or its done); rejects after WAIT_MS saying what came. */
async function followUntil(service: RunService, runId: string, until: (event: RunEvent) => boolean): Promise<RunEvent[]> {
  let hit: () => void = () => undefined;
  const reached = new Promise<void>((resolve) => (hit = resolve));
  const run = followRun(service, runId, (event) => until(event) && hit());
  await within(Promise.race([reached, run.ended]), WAIT_MS, () => {
    throw new Error(`run ${runId} did not get there; its events: ${JSON.stringify(run.events.map((e) => [e.seq, e.type, e.data.to ?? e.data.text ?? '']))}`);
  });
  return run.events;
}

/** Resolves once `check` holds, looked at every LOOK_EVERY_MS; rejects naming `what` after WAIT_MS. */
async function until(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + WAIT_MS;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`no ${what} within ${WAIT_MS} ms`);
    await delay(LOOK_EVERY_MS);
  }
}

/** True once the controller's ledger consumer has taken (stored or dropped) and acknowledged every event in the stream. */
async function intakeDrained(ctl: TestController): Promise<boolean> {
  const info = await ctl.cluster.jsm.consumers.info(EVENTS_STREAM, LEDGER_CONSUMER);
  return info.num_pending === 0 && info.num_ack_pending === 0;
}

/** What was published on a run's subject, as the stream's subscribers see it live (held bytes included, once delivered). */
interface SubjectLog {
  readonly seen: { seq: number; type: string; node: string | undefined }[];
  stop(): void;
}

function watchSubject(nc: NatsConnection, runId: string): SubjectLog {
  const sub = nc.subscribe(eventSubject(runId));
  const seen: SubjectLog['seen'] = [];
  void (async () => {
    for await (const message of sub) {
      const event = parseRunEvent(message.data);
      if (event) seen.push({ seq: event.seq, type: String((event as { type?: unknown }).type), node: message.headers?.get(NODE_HEADER) });
    }
  })();
  return { seen, stop: () => sub.unsubscribe() };
}

const tokens = (events: readonly RunEvent[]): string => events.filter((e) => e.type === 'token').map((e) => String(e.data.text)).join('');
const startsOf = (events: readonly RunEvent[]): number => events.filter((e) => e.type === 'state' && e.data.to === 'running').length;
const occurrences = (text: string, part: string): number => text.split(part).length - 1;
const seqs = (events: readonly RunEvent[]): number[] => events.map((e) => e.seq);
const oneToN = (events: readonly RunEvent[]): number[] => events.map((_, i) => i + 1);

/**
 * A shell run that says it started (a line in `starts`, so a second start shows), writes before
 * the cut, waits for `go`, writes `during` lines and touches `said`, waits for `go-on`, writes
 * once more and ends.
 */
function partitionPrompt(during: number): string {
  const lines = Array.from({ length: during }, (_, i) => `echo during the cut ${i + 1}`).join('; ');
  return `echo started >> starts; echo before the cut; while [ ! -f go ]; do sleep 0.05; done; ${lines}; touch said; while [ ! -f go-on ]; do sleep 0.05; done; echo after the cut`;
}

/** A run on the peer node goes start to end while the other node is cut off. */
async function peerRunCompletes(p: Partitioned): Promise<void> {
  const run = await p.ctl.service.submit({ backend: 'shell', prompt: 'echo from the peer', cwd: p.folder, node: p.peerName });
  const events = await followUntil(p.ctl.service, run.id, (e) => e.type === 'done');
  expect(events.at(-1)).toMatchObject({ type: 'done', data: { outcome: 'completed' } });
  expect(tokens(events)).toContain('from the peer');
}

const HOWS: RestoreHow[] = ['resume', 'reset'];

describe('a node cut off the network and back', () => {
  it.each(HOWS)('a short cut (restored by %s): the run goes on writing, completes, and the ledger has every event once, in order, started once', { timeout: 4 * WAIT_MS }, async (how) => {
    const p = await startPartitioned(`short-${how}`);
    try {
      const { ctl, relay, folder } = p;
      const run = await ctl.service.submit({ backend: 'shell', prompt: partitionPrompt(5), cwd: folder, node: p.cutName });
      await followUntil(ctl.service, run.id, (e) => e.type === 'token' && String(e.data.text).includes('before the cut'));

      relay.cut();
      writeFileSync(path.join(folder, 'go'), '');
      // The run wrote its lines while cut off, and the node tried to send its events: held by the
      // black hole (the outbox sends a run's events one after another, so what it tries first may
      // be an event from before the cut whose acknowledgement the cut held).
      await until(() => existsSync(path.join(folder, 'said')), 'output of the run while cut off');
      await relay.untilHeld(eventSubject(run.id), WAIT_MS);
      await peerRunCompletes(p);
      // Nothing of it reached the controller meanwhile.
      expect(tokens(await ctl.ledger.events(run.id, 0, 1_000))).not.toContain('during the cut');
      relay.restore(how);
      writeFileSync(path.join(folder, 'go-on'), '');

      const events = await followUntil(ctl.service, run.id, (e) => e.type === 'done');
      expect(events.at(-1)).toMatchObject({ type: 'done', data: { outcome: 'completed' } });
      expect(seqs(events)).toEqual(oneToN(events));
      const text = tokens(events);
      for (const line of ['before the cut', 'during the cut 1', 'during the cut 2', 'during the cut 3', 'during the cut 4', 'during the cut 5', 'after the cut']) expect(occurrences(text, line), line).toBe(1);
      expect(text.indexOf('before the cut')).toBeLessThan(text.indexOf('during the cut 1'));
      expect(text.indexOf('during the cut 5')).toBeLessThan(text.indexOf('after the cut'));
      expect(startsOf(events)).toBe(1);
      expect(readFileSync(path.join(folder, 'starts'), 'utf8')).toBe('started\n');
      expect(await ctl.service.get(run.id)).toMatchObject({ status: 'completed', node: p.cutName, last_seq: events.length });
      expect(await ctl.ledger.events(run.id, 0, 1_000)).toEqual(events);
      expect(await ctl.ledger.check()).toBe('ok');
      // Short indeed: the controller lost no node, and the node kept its lease.
      expect(p.directory.items.filter((c) => c.kind === 'lost' || c.kind === 'left')).toEqual([]);
      expect(p.cutNode.said.join('')).not.toContain('lapsed');
      // A resume carried the old connection through; a reset made the node connect again.
      if (how === 'resume') expect(relay.accepted).toBe(1);
      else expect(relay.accepted).toBeGreaterThan(1);
    } finally {
      await p.close();
    }
  });

  /**
   * A run dispatched to the node just as it is cut off: the node's pull is waiting on the server,
   * which hands it the work item into the black hole. After the restore the run must end within
   * WAIT_MS, started at most once, its events in order.
   */
  async function sentAsCut(how: RestoreHow): Promise<void> {
    const p = await startPartitioned(`sent-${how}`);
    try {
      const { ctl, relay, folder } = p;
      relay.cut();
      const run = await ctl.service.submit({ backend: 'shell', prompt: 'echo started >> starts; echo sent while cut', cwd: folder, node: p.cutName });
      await relay.untilHeld(run.id, WAIT_MS, 'server');
      relay.restore(how);
      const followed = followRun(ctl.service, run.id);
      const ended = await within(followed.ended.then(() => true), WAIT_MS, () => false);
      expect(ended, `run ${run.id} still ${(await ctl.service.get(run.id)).status} after the cut`).toBe(true);
      expect(seqs(followed.events)).toEqual(oneToN(followed.events));
      expect(startsOf(followed.events)).toBeLessThanOrEqual(1);
      if (startsOf(followed.events) === 1) expect(readFileSync(path.join(folder, 'starts'), 'utf8')).toBe('started\n');
      expect(await ctl.ledger.check()).toBe('ok');
    } finally {
      await p.close();
    }
  }

  it('a run sent to the node as it is cut off, the link resumed: the held work item arrives, and the run starts once and completes', { timeout: 4 * WAIT_MS }, async () => {
    await sentAsCut('resume');
  });

  /**
   * BUG (found here): the server hands the item to the node's pull on the connection that is
   * then reset; the node never sees it, so it never claims the run. The pool's consumer has
   * max_deliver 1, so the server never hands it again, and the item stays in SB_WORK unacked
   * (seen: stream messages 1, consumer delivered stream_seq 1, ack_floor 0, ack_pending 0, no
   * claim). The controller's sweep (cluster-runs/node-run-sweep.ts, sweepQueued) ends a queued
   * run only when its item has left the queue or is older than STALE_WORK_ITEM_MS (6 days), so
   * the run stays `queued`, no event, holding one of the node's slots, for 6 days. A fix must end
   * it (or send it again: a node must win its claim before it starts it) well within WAIT_MS here,
   * with the sweep's period shortened for this test; then drop `.fails`.
   */
  it.fails('a run sent to the node as it is cut off, the link reset: the run is not left queued (it starts once after the cut, or ends not started)', { timeout: 4 * WAIT_MS }, async () => {
    await sentAsCut('reset');
  });

  it.each(HOWS)('a long cut (restored by %s): the run is orphaned, the node comes back under a new epoch, its late events are not stored, nothing is stored twice or started twice', { timeout: 5 * WAIT_MS }, async (how) => {
    const p = await startPartitioned(`long-${how}`, SHORT_TTL_MS);
    try {
      const { ctl, relay, folder } = p;
      const firstEpoch = ctl.runs.directory.get(p.cutName)?.record.epoch;
      const run = await ctl.service.submit({ backend: 'shell', prompt: partitionPrompt(1), cwd: folder, node: p.cutName });
      const subject = watchSubject(ctl.cluster.controller.nc, run.id);
      try {
        await followUntil(ctl.service, run.id, (e) => e.type === 'token' && String(e.data.text).includes('before the cut'));

        relay.cut();
        writeFileSync(path.join(folder, 'go'), '');
        await until(() => existsSync(path.join(folder, 'said')), 'output of the run while cut off');
        await relay.untilHeld(eventSubject(run.id), WAIT_MS);
        const orphanedView = await followUntil(ctl.service, run.id, (e) => e.type === 'state' && e.data.to === 'orphaned');
        const orphaned = orphanedView.at(-1);
        expect(orphaned).toMatchObject({ type: 'state', data: { to: 'orphaned' } });
        expect(p.directory.items.filter((c) => c.kind === 'lost' || c.kind === 'left').map((c) => `${c.kind} ${c.node.record.name}`)).toEqual([`lost ${p.cutName}`]);
        await peerRunCompletes(p);

        relay.restore(how);
        writeFileSync(path.join(folder, 'go-on'), '');
        // Back under a new epoch, and the run ended on the node: its done reached the stream.
        const back = await p.directory.waitFor((c) => c.kind === 'joined' && c.node.record.name === p.cutName && c.node.record.epoch !== firstEpoch, `${p.cutName} registered again`);
        expect(back.node.record.epoch).toBeGreaterThan(firstEpoch ?? 0);
        await until(() => subject.seen.some((e) => e.type === 'done' && e.node === p.cutName), `the done of run ${run.id} from ${p.cutName} on its subject`);
        await until(() => intakeDrained(ctl), 'the ledger consumer drained');

        // The board: orphaned, as the controller decided; what the node said late is in the stream only.
        const stored = await ctl.ledger.events(run.id, 0, 1_000);
        expect(seqs(stored)).toEqual(oneToN(stored));
        expect(stored.at(-1)).toEqual(orphaned);
        expect(tokens(stored)).not.toContain('after the cut');
        expect(startsOf(stored)).toBe(1);
        expect(await ctl.service.get(run.id)).toMatchObject({ status: 'orphaned', node: p.cutName, ended_at: null, last_seq: stored.length });
        // On the subject each sequence once (JetStream's message ids), the orphan's the controller's.
        const onSubject = await streamEvents(ctl, run.id);
        expect(onSubject.map((e) => e.seq)).toEqual(onSubject.map((_, i) => i + 1));
        expect(onSubject.find((e) => e.seq === orphaned?.seq)?.node).toBe('@controller');
        expect(readFileSync(path.join(folder, 'starts'), 'utf8')).toBe('started\n');

        // The person decides: a cancel ends it; the node (back, its run ended) changes nothing.
        expect(await ctl.service.cancel(run.id)).toMatchObject({ status: 'cancelled', reason: 'cancelled_by_user' });
        const all = await ctl.ledger.events(run.id, 0, 1_000);
        expect(seqs(all)).toEqual(oneToN(all));
        expect(all.at(-1)).toMatchObject({ type: 'done', data: { outcome: 'cancelled' } });
        expect(await ctl.ledger.check()).toBe('ok');

        // The node is whole again: it takes a new run.
        const next = await ctl.service.submit({ backend: 'shell', prompt: 'echo back again', cwd: folder, node: p.cutName });
        const nextEvents = await followUntil(ctl.service, next.id, (e) => e.type === 'done');
        expect(nextEvents.at(-1)).toMatchObject({ type: 'done', data: { outcome: 'completed' } });
        expect(readFileSync(path.join(folder, 'starts'), 'utf8')).toBe('started\n');
      } finally {
        subject.stop();
      }
    } finally {
      await p.close();
    }
  });
});

/** Every event on run `runId`'s subject in the stream, in stream order, with the node that published it. */
async function streamEvents(ctl: TestController, runId: string): Promise<{ seq: number; node: string | undefined }[]> {
  const found: { seq: number; node: string | undefined }[] = [];
  for (let from = 1; ; ) {
    const stored = await ctl.cluster.jsm.direct.getMessage(EVENTS_STREAM, { seq: from, next_by_subj: eventSubject(runId) });
    if (stored === null) return found;
    const event = parseRunEvent(stored.data);
    if (event) found.push({ seq: event.seq, node: stored.header.get(NODE_HEADER) || undefined });
    from = stored.seq + 1;
  }
}
