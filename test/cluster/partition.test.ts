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
 *   (the pool's consumer delivers once), and once the consumer's ack wait has passed the
 *   controller's sweep takes the run's claim and ends it `failed (not_started)`, saying so: it
 *   started nowhere, its slot is free again, and the node runs new runs.
 * - A long cut (past a short TTL): the controller sees the node lost and the run `orphaned`; when
 *   the link is back the node registers again under a new epoch and finishes the run, and its late
 *   events reach the stream but not the ledger: the board keeps `orphaned` (the person decides), no
 *   event is stored twice, nothing started twice; a cancel then ends the run, and the node takes
 *   new runs again.
 *
 * The tests of one TTL share a controller, relay and nodes: each test leaves the link restored and
 * the nodes idle, and one that fails closes them, so the next starts afresh. Nothing here waits on
 * a fixed sleep: each step waits for the event or state that proves it, with a bound. The ledger
 * is SQLite or PostgreSQL by $SWITCHBOARD_TEST_LEDGER.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import type { NatsConnection } from '@nats-io/transport-node';
import { afterAll, describe, expect, it } from 'vitest';
import { EVENTS_STREAM, eventSubject, NODE_HEADER, parseRunEvent, type DirectoryEvent } from '../../src/cluster/index.js';
import { LEDGER_CONSUMER, WORK_STREAM } from '../../src/cluster/topology.js';
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
/** How often the controller sweeps its queued node runs (60 s by default): the lost work item is found soon after the ack wait. */
const SWEEP_EVERY_MS = 500;

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
  /** The controller's sandbox: each test's folder is in it. */
  readonly root: string;
  close(): Promise<void>;
}

/** One test on a shared Partitioned. */
interface Case extends Partitioned {
  /** Every change the controller's directory saw since the test began. */
  readonly directory: EventLog<DirectoryEvent>;
  /** The test's own folder, the runs' working folder. */
  readonly folder: string;
}

async function startPartitioned(label: string, nodeTtlMs?: number): Promise<Partitioned> {
  const root = path.join(scratch.dir, label);
  mkdirSync(root, { recursive: true });
  const ctl = await startTestController(testLedger, root, { sweepEveryMs: SWEEP_EVERY_MS, ...(nodeTtlMs !== undefined && { nodeTtlMs }) });
  const started: SwitchboardNode[] = [];
  let relay: TcpCut | undefined;
  const close = async (): Promise<void> => {
    // A test that failed mid-cut: the link back first, so the nodes can leave the cluster as they stop.
    relay?.restore('reset');
    for (const node of started.reverse()) await node.stop();
    await relay?.close();
    endLeftRunProcesses();
    await ctl.close();
  };
  const directory = new EventLog(ctl.runs.directory.onChange);
  try {
    relay = await startTcpCut(ctl.cluster.server.port);
    const cutName = `${label}-cut`;
    const peerName = `${label}-peer`;
    started.push(await startSwitchboardNode({ url: relay.url, scratch: scratch.dir, name: cutName }));
    started.push(await startSwitchboardNode({ url: ctl.cluster.server.url, scratch: scratch.dir, name: peerName }));
    await nodeSeen(ctl, directory, cutName);
    await nodeSeen(ctl, directory, peerName);
    return { ctl, relay, cutNode: started[0] as SwitchboardNode, cutName, peerName, root, close };
  } catch (err) {
    await close();
    throw err;
  } finally {
    directory.dispose();
  }
}

/** The clusters the tests share, by label; a test that fails closes its own, and the rest are closed at the end. */
const shared = new Map<string, Partitioned>();

/** Runs `body` on the shared cluster `label` (started with `nodeTtlMs` when first asked for), in a folder of the test's own. */
async function onPartitioned(label: string, nodeTtlMs: number | undefined, test: string, body: (c: Case) => Promise<void>): Promise<void> {
  let p = shared.get(label);
  if (p === undefined) {
    p = await startPartitioned(label, nodeTtlMs);
    shared.set(label, p);
  }
  const folder = path.join(p.root, test);
  mkdirSync(folder, { recursive: true });
  const directory = new EventLog(p.ctl.runs.directory.onChange);
  try {
    await body({ ...p, directory, folder });
    expect(p.relay.isCut).toBe(false);
  } catch (err) {
    shared.delete(label);
    await p.close();
    throw err;
  } finally {
    directory.dispose();
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

function watchSubject(nc: NatsConnection, node: string, runId: string): SubjectLog {
  const sub = nc.subscribe(eventSubject(node, runId));
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
async function peerRunCompletes(p: Case): Promise<void> {
  const run = await p.ctl.service.submit({ backend: 'shell', prompt: 'echo from the peer', cwd: p.folder, node: p.peerName });
  const events = await followUntil(p.ctl.service, run.id, (e) => e.type === 'done');
  expect(events.at(-1)).toMatchObject({ type: 'done', data: { outcome: 'completed' } });
  expect(tokens(events)).toContain('from the peer');
}

const HOWS: RestoreHow[] = ['resume', 'reset'];

describe('a node cut off the network and back', () => {
  afterAll(async () => {
    for (const p of shared.values()) await p.close();
    shared.clear();
  });

  it.each(HOWS)('a short cut (restored by %s): the run goes on writing, completes, and the ledger has every event once, in order, started once', { timeout: 4 * WAIT_MS }, async (how) => {
    await onPartitioned('ttl-default', undefined, `short-${how}`, async (p) => {
      const { ctl, relay, folder } = p;
      const acceptedBefore = relay.accepted;
      const run = await ctl.service.submit({ backend: 'shell', prompt: partitionPrompt(5), cwd: folder, node: p.cutName });
      await followUntil(ctl.service, run.id, (e) => e.type === 'token' && String(e.data.text).includes('before the cut'));

      relay.cut();
      writeFileSync(path.join(folder, 'go'), '');
      // The run wrote its lines while cut off, and the node tried to send its events: held by the
      // black hole (the outbox sends a run's events one after another, so what it tries first may
      // be an event from before the cut whose acknowledgement the cut held).
      await until(() => existsSync(path.join(folder, 'said')), 'output of the run while cut off');
      await relay.untilHeld(eventSubject(p.cutName, run.id), WAIT_MS);
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
      if (how === 'resume') expect(relay.accepted).toBe(acceptedBefore);
      else expect(relay.accepted).toBeGreaterThan(acceptedBefore);
    });
  });

  /**
   * A run dispatched to the node just as it is cut off: the node's pull is waiting on the server,
   * which hands it the work item into the black hole. After the restore the run must end within
   * WAIT_MS (or the consumer's ack wait and a sweep, when the item was lost), started at most once,
   * its events in order. Resolves with its events.
   */
  async function sentAsCut(p: Case, how: RestoreHow, prompt: string): Promise<RunEvent[]> {
    const { ctl, relay } = p;
    // The link dies the moment the server hands the node its work item (found by a mark in the
    // prompt, known before the run's id): cut before the submit instead, the item would reach the
    // node only if a pull of the node's was still pending at the server, which is a race.
    const mark = `sent-as-cut-${randomUUID()}`;
    const handed = relay.cutWhen(mark, 'server', WAIT_MS);
    const run = await ctl.service.submit({ backend: 'shell', prompt: `${prompt} # ${mark}`, cwd: p.folder, node: p.cutName });
    await handed;
    relay.restore(how);
    const followed = followRun(ctl.service, run.id);
    const ended = await within(followed.ended.then(() => true), WAIT_MS, () => false);
    expect(ended, `run ${run.id} still ${(await ctl.service.get(run.id)).status} after the cut`).toBe(true);
    expect(seqs(followed.events)).toEqual(oneToN(followed.events));
    expect(startsOf(followed.events)).toBeLessThanOrEqual(1);
    expect(await ctl.ledger.check()).toBe('ok');
    return followed.events;
  }

  it('a run sent to the node as it is cut off, the link resumed: the held work item arrives, and the run starts once and completes', { timeout: 4 * WAIT_MS }, async () => {
    await onPartitioned('ttl-default', undefined, 'sent-resume', async (p) => {
      const events = await sentAsCut(p, 'resume', 'echo started >> starts; echo sent while cut');
      expect(events.at(-1)).toMatchObject({ type: 'done', data: { outcome: 'completed' } });
      expect(startsOf(events)).toBe(1);
      expect(readFileSync(path.join(p.folder, 'starts'), 'utf8')).toBe('started\n');
    });
  });

  /**
   * The server hands the item to the node's pull on the connection that is then reset: the node
   * never sees it, and the pool's consumer (max_deliver 1) never hands it again; the item stays
   * in SB_WORK unacknowledged, unclaimed. Once it has been so for longer than the consumer's ack
   * wait, the controller's sweep takes the claim and ends the run, and removes the item.
   */
  it('a run sent to the node as it is cut off, the link reset: the lost work item is found, and the run ends failed (not_started), started nowhere, its slot free again', { timeout: 4 * WAIT_MS }, async () => {
    await onPartitioned('ttl-default', undefined, 'sent-reset', async (p) => {
      const { ctl, folder } = p;
      const events = await sentAsCut(p, 'reset', 'echo started >> starts; echo sent while cut');
      const done = events.at(-1);
      expect(done).toMatchObject({ type: 'done', data: { outcome: 'failed', reason: 'not_started' } });
      expect(String(done?.data.message)).toBe(`its work item was lost on the way to node ${p.cutName}; nothing was started: submit it again`);
      expect(startsOf(events)).toBe(0);
      expect(existsSync(path.join(folder, 'starts'))).toBe(false);
      expect(await ctl.runs.claimOf({ id: done?.run_id ?? '', node: p.cutName })).toMatchObject({ role: 'controller' });
      // The item is out of the queue: the node can never be handed it.
      expect((await ctl.cluster.jsm.streams.info(WORK_STREAM)).state.messages).toBe(0);

      // Its slot is free again: the node (2 slots) takes two runs at once, and runs them.
      const held = await ctl.service.submit({ backend: 'shell', prompt: 'echo held started; while [ ! -f release ]; do sleep 0.05; done; echo held ends', cwd: folder, node: p.cutName });
      await followUntil(ctl.service, held.id, (e) => e.type === 'token' && String(e.data.text).includes('held started'));
      const next = await ctl.service.submit({ backend: 'shell', prompt: 'echo after the loss', cwd: folder, node: p.cutName });
      const nextEvents = await followUntil(ctl.service, next.id, (e) => e.type === 'done');
      expect(nextEvents.at(-1)).toMatchObject({ type: 'done', data: { outcome: 'completed' } });
      expect(tokens(nextEvents)).toContain('after the loss');
      writeFileSync(path.join(folder, 'release'), '');
      const heldEvents = await followUntil(ctl.service, held.id, (e) => e.type === 'done');
      expect(heldEvents.at(-1)).toMatchObject({ type: 'done', data: { outcome: 'completed' } });
      expect(existsSync(path.join(folder, 'starts'))).toBe(false);
    });
  });

  it.each(HOWS)('a long cut (restored by %s): the run is orphaned, the node comes back under a new epoch, its late events are not stored, nothing is stored twice or started twice', { timeout: 5 * WAIT_MS }, async (how) => {
    await onPartitioned('ttl-short', SHORT_TTL_MS, `long-${how}`, async (p) => {
      const { ctl, relay, folder } = p;
      const firstEpoch = ctl.runs.directory.get(p.cutName)?.record.epoch;
      const run = await ctl.service.submit({ backend: 'shell', prompt: partitionPrompt(1), cwd: folder, node: p.cutName });
      const subject = watchSubject(ctl.cluster.controller.nc, p.cutName, run.id);
      try {
        await followUntil(ctl.service, run.id, (e) => e.type === 'token' && String(e.data.text).includes('before the cut'));

        relay.cut();
        writeFileSync(path.join(folder, 'go'), '');
        await until(() => existsSync(path.join(folder, 'said')), 'output of the run while cut off');
        await relay.untilHeld(eventSubject(p.cutName, run.id), WAIT_MS);
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
        // On the subject, in stream order: each sequence once up to the orphan, which is the
        // controller's; after it only what the node sent late (its own number for the orphan's
        // place among them), none of it in the ledger.
        const onSubject = await streamEvents(ctl, p.cutName, run.id);
        const orphanAt = onSubject.findIndex((e) => e.node === '@controller');
        expect(onSubject[orphanAt]?.seq).toBe(orphaned?.seq);
        expect(onSubject.slice(0, orphanAt + 1).map((e) => e.seq)).toEqual(oneToN(stored));
        const late = onSubject.slice(orphanAt + 1);
        expect(late.length).toBeGreaterThan(0);
        expect(late.every((e) => e.node === p.cutName && e.seq >= (orphaned?.seq ?? 0))).toBe(true);
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
    });
  });
});

/** Every event on run `runId`'s subject in the stream, in stream order, with the node that published it. */
async function streamEvents(ctl: TestController, node: string, runId: string): Promise<{ seq: number; node: string | undefined }[]> {
  const found: { seq: number; node: string | undefined }[] = [];
  for (let from = 1; ; ) {
    const stored = await ctl.cluster.jsm.direct.getMessage(EVENTS_STREAM, { seq: from, next_by_subj: eventSubject(node, runId) });
    if (stored === null) return found;
    const event = parseRunEvent(stored.data);
    if (event) found.push({ seq: event.seq, node: stored.header.get(NODE_HEADER) || undefined });
    from = stored.seq + 1;
  }
}
