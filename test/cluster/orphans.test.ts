/**
 * What happens to runs across machines when a side goes away (issue 26), on a real nats-server
 * with the node as a process of its own (`switchboard node`, the shell backend):
 *
 * - the controller restarted mid-run (its cluster side and ledger closed while the node keeps
 *   publishing, then opened again on the same ledger): the run's every event is in the ledger
 *   once, in order, and the run completes;
 * - the node killed by SIGKILL mid-run (its whole process group, the shell's children too): the
 *   run becomes `orphaned` within the lease's TTL, was started once, and a cancel then ends it
 *   `cancelled` without asking the node;
 * - a work item handed to a pull whose connection then died, while the controller was down: the
 *   controller started next sends the unclaimed queued run again, which the queue stores once (the
 *   same run id within its duplicate window), so it learns where the lost item is, and ends the run
 *   `failed (not_started)` once a node holding it could no longer be claiming it.
 *
 * The ledger is SQLite or PostgreSQL by $SWITCHBOARD_TEST_LEDGER.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { jetstream } from '@nats-io/jetstream';
import { ensurePool, NodeLease, poolConsumer, WORK_STREAM } from '../../src/cluster/index.js';
import { ClusterRuns } from '../../src/cluster-runs/index.js';
import { createStreamLogger, silentLogger } from '../../src/core/logger.js';
import { parseGovernancePolicy } from '../../src/governance/policy-file.js';
import type { LedgerStore } from '../../src/ledger/ledger-store.js';
import { RunLedger } from '../../src/ledger/run-ledger.js';
import type { RunEvent } from '../../src/ledger/run-events.js';
import { RunService } from '../../src/runs/run-service.js';
import { startTestCluster, type TestCluster } from '../support/cluster.js';
import { tempDir } from '../support/shell.js';
import { startSwitchboardNode, within } from '../support/switchboard-node.js';
import { endRunProcessesIn } from '../support/run-processes.js';
import { atTestProcessEnd } from '../support/test-process-end.js';
import { useTestLedger } from '../support/test-ledger.js';

/** A bound on a wait for something that must happen; never a measure of how fast it did. */
const WAIT_MS = 60_000;
/** The node lease's TTL in the SIGKILL test: short, so the loss is seen soon; renewed every third of it. */
const SHORT_TTL_MS = 3_000;
/** The lost-item test's pool ack wait: short, so only the claim's own budget of tries is waited out. */
const SHORT_ACK_WAIT_MS = 3_000;
/** How often that test's controllers sweep their queued node runs (60 s by default). */
const SWEEP_EVERY_MS = 500;

const testLedger = useTestLedger();
const scratch = tempDir('sb-cluster-orphans-');

const endLeftRunProcesses = (): void => endRunProcessesIn(scratch.dir);
atTestProcessEnd(() => {
  endLeftRunProcesses();
  scratch.cleanup();
});
const work = path.join(scratch.dir, 'work');
mkdirSync(work, { recursive: true });

afterAll(() => {
  endLeftRunProcesses();
  scratch.cleanup();
});

/** A controller in this process: its cluster side, its ledger and a run service that drives no agent itself. */
interface Controller {
  readonly runs: ClusterRuns;
  readonly ledger: RunLedger;
  readonly service: RunService;
  /** What it logged (its cluster side, ledger and run service; info and up): said when a wait on it fails. */
  readonly log: readonly string[];
  close(): Promise<void>;
}

/** Lines a failure message carries from a log. */
const LOG_TAIL = 40;

/** The last lines of `log`, for a failure message. */
const tailOf = (log: readonly string[]): string => log.slice(-LOG_TAIL).join('');

async function openController(cluster: TestCluster, store: LedgerStore, options: { nodeTtlMs?: number; sweepEveryMs?: number } = {}): Promise<Controller> {
  const log: string[] = [];
  const logger = createStreamLogger({ write: (line: string) => log.push(line) }, { level: 'info' });
  const ledger = new RunLedger({ store, logger });
  const runs = await step('open the cluster side', log, ClusterRuns.open({ nc: cluster.controller.nc, logger, ...options }));
  const service = (await step('start the run service', log, RunService.start({ ledger, policy: parseGovernancePolicy({ sandbox: { roots: [scratch.dir] } }), backends: [], remote: runs, scope: `${scratch.dir}#controller`, logger }))).service;
  await step('take the events', log, runs.takeEvents(ledger));
  return {
    runs,
    ledger,
    service,
    log,
    async close() {
      await step('dispose of the run service', log, service.dispose());
      await step('close the cluster side', log, runs.close());
      await step('close the ledger', log, ledger.close());
    },
  };
}

/** `work`, bounded: a step of a controller's opening or closing that never ends fails the test naming it, with the controller's log. */
function step<T>(name: string, log: readonly string[], work: Promise<T>): Promise<T> {
  return within(work, WAIT_MS, () => {
    throw new Error(`the controller did not ${name} within ${WAIT_MS} ms; it logged:\n${tailOf(log)}`);
  });
}

/** Waits until the directory sees node `name`, as a submit needs. */
async function nodeSeen(runs: ClusterRuns, name: string): Promise<void> {
  if (runs.directory.get(name)) return;
  const seen = new Promise<void>((resolve) => {
    const sub = runs.directory.onChange((change) => {
      if (change.node.record.name === name && change.kind !== 'left' && change.kind !== 'lost') {
        sub.dispose();
        resolve();
      }
    });
  });
  await within(seen, WAIT_MS, () => {
    throw new Error(`the controller never saw node ${name}`);
  });
}

/**
 * Follows a run on `controller` from its start until `until` holds for an event (or its done);
 * rejects after WAIT_MS saying what came, what the controller logged and what `more` tells.
 */
async function followUntil(controller: Controller, runId: string, until: (event: RunEvent) => boolean, more: () => string = () => ''): Promise<RunEvent[]> {
  const events: RunEvent[] = [];
  let dispose: (() => void) | undefined;
  const reached = new Promise<void>((resolve, reject) => {
    controller.service
      .subscribe(
        runId,
        0,
        (event) => {
          events.push(event);
          if (until(event)) resolve();
        },
        { onEnd: resolve, onError: reject },
      )
      .then((sub) => (dispose = () => sub.dispose()), reject);
  });
  try {
    await within(reached, WAIT_MS, () => {
      throw new Error(`run ${runId} did not get there; its events: ${JSON.stringify(events.map((e) => [e.seq, e.type, e.data.to ?? e.data.text ?? '']))}\nthe controller logged:\n${tailOf(controller.log)}${more()}`);
    });
  } finally {
    dispose?.();
  }
  return events;
}

const tokens = (events: readonly RunEvent[]): string => events.filter((e) => e.type === 'token').map((e) => String(e.data.text)).join('');
const startsOf = (events: readonly RunEvent[]): number => events.filter((e) => e.type === 'state' && e.data.to === 'running').length;

describe('runs across machines when a side goes away', () => {
  it('a controller restarted mid-run (the node publishing while it is down) has every event of the run once, in order, and the run completes', { timeout: 4 * WAIT_MS }, async () => {
    const cluster = await startTestCluster();
    const openStore = await testLedger.reopenable(scratch.dir);
    let controller = await openController(cluster, await openStore());
    const node = await startSwitchboardNode({ url: cluster.server.url, scratch: scratch.dir, name: 'node-restart' });
    const go = path.join(work, 'go-on');
    const nodeSaid = (): string => `\nthe node said:\n${node.said.slice(-LOG_TAIL).join('\n')}`;
    try {
      await nodeSeen(controller.runs, 'node-restart');
      const prompt = `echo before the restart; while [ ! -f ${JSON.stringify(go)} ]; do sleep 0.05; done; for i in 1 2 3 4 5; do echo after the restart $i; done`;
      const run = await controller.service.submit({ backend: 'shell', prompt, cwd: work });
      const before = await followUntil(controller, run.id, (e) => e.type === 'token' && String(e.data.text).includes('before the restart'), nodeSaid);
      expect(before.at(-1)?.type).toBe('token');

      await controller.close();
      // The node goes on while no controller takes its events: they wait in the stream.
      writeFileSync(go, '');
      controller = await openController(cluster, await openStore());
      const events = await followUntil(controller, run.id, (e) => e.type === 'done', nodeSaid);
      expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
      expect(events.at(-1)).toMatchObject({ type: 'done', data: { outcome: 'completed' } });
      expect(tokens(events)).toContain('before the restart\nafter the restart 1\nafter the restart 2\nafter the restart 3\nafter the restart 4\nafter the restart 5');
      expect(startsOf(events)).toBe(1);
      expect(await controller.service.get(run.id)).toMatchObject({ status: 'completed', node: 'node-restart', last_seq: events.length });
      expect(await controller.ledger.events(run.id, 0, 1_000)).toEqual(events);
      expect(await controller.ledger.check()).toBe('ok');
    } finally {
      await node.stop();
      await controller.close();
      await cluster.close();
    }
  });

  it('a node killed by SIGKILL mid-run leaves its run orphaned within the lease TTL, started once; a cancel then ends it cancelled without the node', { timeout: 4 * WAIT_MS }, async () => {
    const cluster = await startTestCluster();
    const folder = path.join(scratch.dir, 'killed');
    mkdirSync(folder, { recursive: true });
    const controller = await openController(cluster, await testLedger.store(folder), { nodeTtlMs: SHORT_TTL_MS });
    const node = await startSwitchboardNode({ url: cluster.server.url, scratch: scratch.dir, name: 'node-killed' });
    try {
      await nodeSeen(controller.runs, 'node-killed');
      const run = await controller.service.submit({ backend: 'shell', prompt: 'echo started on the node; sleep 600', cwd: work });
      const running = await followUntil(controller, run.id, (e) => e.type === 'token' && String(e.data.text).includes('started on the node'));
      expect(startsOf(running)).toBe(1);
      expect(await controller.runs.claimOf({ id: run.id, node: 'node-killed' })).toMatchObject({ holder: 'node-killed', role: 'node' });

      const lostAt = Date.now();
      node.killGroup('SIGKILL');
      await node.exited;
      const events = await followUntil(controller, run.id, (e) => e.type === 'state' && e.data.to === 'orphaned');
      const orphaned = events.at(-1);
      expect(orphaned).toMatchObject({ type: 'state', data: { from: expect.stringMatching(/^(running|streaming)$/), to: 'orphaned' } });
      // Seen by the lease's lapse: a TTL, the server's expiry and the directory's check after it (room left for a loaded machine).
      expect(Date.now() - lostAt).toBeLessThan(6 * SHORT_TTL_MS);
      expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
      expect(startsOf(events)).toBe(1);
      const view = await controller.service.get(run.id);
      expect(view).toMatchObject({ status: 'orphaned', node: 'node-killed', ended_at: null });
      // Still the node's claim: nothing can start it again.
      expect(await controller.runs.claimOf({ id: run.id, node: 'node-killed' })).toMatchObject({ holder: 'node-killed', role: 'node' });

      const cancelled = await controller.service.cancel(run.id);
      expect(cancelled).toMatchObject({ status: 'cancelled', reason: 'cancelled_by_user' });
      const all = await controller.ledger.events(run.id, 0, 1_000);
      expect(all.at(-1)).toMatchObject({ type: 'done', data: { outcome: 'cancelled' } });
      expect(all.map((e) => e.seq)).toEqual(all.map((_, i) => i + 1));
      expect(await controller.ledger.check()).toBe('ok');
    } finally {
      await node.stop();
      endLeftRunProcesses();
      await controller.close();
      await cluster.close();
    }
  });

  it('a run waiting for a slot on a node killed by SIGKILL waits for another node instead, and runs there once, when a slot frees', { timeout: 4 * WAIT_MS }, async () => {
    const cluster = await startTestCluster();
    const folder = path.join(scratch.dir, 'moved');
    mkdirSync(folder, { recursive: true });
    const controller = await openController(cluster, await testLedger.store(folder), { nodeTtlMs: SHORT_TTL_MS });
    const nodes = new Map(await Promise.all(['node-full-1', 'node-full-2'].map(async (name) => [name, await startSwitchboardNode({ url: cluster.server.url, scratch: scratch.dir, name, slots: 1 })] as const)));
    try {
      for (const name of nodes.keys()) await nodeSeen(controller.runs, name);
      // Each node's one slot taken, each run until its gate file is there.
      const gates = new Map([...nodes.keys()].map((name) => [name, path.join(folder, `${name}.gate`)]));
      const held = new Map<string, string>();
      for (const [name, gate] of gates) {
        const run = await controller.service.submit({ backend: 'shell', prompt: `echo holding ${name}; while [ ! -f ${gate} ]; do sleep 0.1; done`, cwd: work, node: name });
        await followUntil(controller, run.id, (e) => e.type === 'token' && String(e.data.text).includes(`holding ${name}`));
        held.set(name, run.id);
      }
      const waiting = await controller.service.submit({ backend: 'shell', prompt: 'echo the waiting run ran', cwd: work });
      expect(waiting).toMatchObject({ status: 'queued', queue_position: 0 });
      const lostName = waiting.node ?? '';
      const other = [...nodes.keys()].find((n) => n !== lostName) ?? '';
      const lost = nodes.get(lostName);
      if (!lost) throw new Error(`the waiting run waits for no node of this test: ${lostName}`);

      lost.killGroup('SIGKILL');
      await lost.exited;
      // The killed node's own run is orphaned; the waiting run, never on it, is not ended with it.
      await followUntil(controller, held.get(lostName) ?? '', (e) => e.type === 'state' && e.data.to === 'orphaned');
      await expect.poll(async () => (await controller.service.get(waiting.id)).node, { timeout: WAIT_MS }).toBe(other);
      expect(await controller.service.get(waiting.id)).toMatchObject({ status: 'queued', queue_position: 0 });

      writeFileSync(gates.get(other) ?? '', '');
      const events = await followUntil(controller, waiting.id, (e) => e.type === 'done');
      expect(tokens(events)).toContain('the waiting run ran');
      expect(startsOf(events)).toBe(1);
      expect(await controller.service.get(waiting.id)).toMatchObject({ status: 'completed', node: other });
      expect(controller.log.join('')).toContain('a run waiting for a slot goes to another node');
    } finally {
      for (const node of nodes.values()) await node.stop();
      endLeftRunProcesses();
      await controller.close();
      await cluster.close();
    }
  });

  it('a work item lost in delivery while the controller was down is found by the restarted controller: the run ends failed (not_started), started nowhere, and the queue is empty', { timeout: 4 * WAIT_MS }, async () => {
    const cluster = await startTestCluster();
    const folder = path.join(scratch.dir, 'lost-item');
    mkdirSync(folder, { recursive: true });
    const openStore = await testLedger.reopenable(folder);
    const sweeping = { sweepEveryMs: SWEEP_EVERY_MS };
    let controller = await openController(cluster, await openStore(), sweeping);
    // A live node with a pool of its own that never pulls: the test pulls its item as a node whose link then dies would.
    const nodeConnection = await cluster.connect('node-lost-item');
    const lease = await NodeLease.register({ nc: nodeConnection.nc, node: { name: 'node-lost-item', labels: [], clis: [{ name: 'shell', version: '' }], repos: [], slots: { total: 1, free: 1 } }, logger: silentLogger });
    try {
      await ensurePool(cluster.jsm, { name: 'node-lost-item' }, SHORT_ACK_WAIT_MS);
      await nodeSeen(controller.runs, 'node-lost-item');
      const run = await controller.service.submit({ backend: 'shell', prompt: 'echo started >> starts', cwd: folder, node: 'node-lost-item' });
      await controller.close();

      // Handed to a pull on a connection that then closes unacknowledged: with max_deliver 1 the
      // pool's consumer never hands it again, and it stays in the queue, unclaimed.
      const pull = await cluster.connect('lost-pull');
      const handed = await (await jetstream(pull.nc).consumers.get(WORK_STREAM, poolConsumer('node-lost-item'))).next({ expires: WAIT_MS });
      expect(handed?.json()).toMatchObject({ run_id: run.id, pool: 'node-lost-item' });
      await pull.close();

      // The new controller never dispatched it: it sends it again, and the queue answers with the lost item's place.
      controller = await openController(cluster, await openStore(), sweeping);
      const events = await followUntil(controller, run.id, (e) => e.type === 'done');
      expect(events.at(-1)).toMatchObject({ type: 'done', data: { outcome: 'failed', reason: 'not_started', message: 'its work item was lost on the way to node node-lost-item; nothing was started: submit it again' } });
      expect(startsOf(events)).toBe(0);
      expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
      expect(await controller.runs.claimOf({ id: run.id, node: 'node-lost-item' })).toMatchObject({ role: 'controller' });
      expect((await cluster.jsm.streams.info(WORK_STREAM)).state.messages).toBe(0);
      expect(existsSync(path.join(folder, 'starts'))).toBe(false);
      expect(await controller.ledger.check()).toBe('ok');
    } finally {
      await lease.leave();
      await controller.close();
      await cluster.close();
    }
  });
});
