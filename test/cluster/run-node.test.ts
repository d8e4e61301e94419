/**
 * The node's side of runs on the cluster (issue 26), on a real nats-server: a controller (a run
 * service whose RemoteRuns is the cluster, its ledger in SQLite or PostgreSQL by
 * $SWITCHBOARD_TEST_LEDGER) and a node in this process (startClusterNode over the fake backend),
 * with a hook that holds a claimed run before the node looks at it. A cancel that comes while the
 * node has won the claim but not started the run ends it cancelled, never started; the node's
 * ledger answers while NATS is frozen, and everything it wrote reaches the controller once and in
 * order afterwards; a run the node cannot start ends failed through the node's own ledger.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { controllerControlClient, parseNatsOptions } from '../../src/cluster/index.js';
import { silentLogger } from '../../src/core/logger.js';
import { startClusterNode } from '../../src/daemon/cluster-node.js';
import type { RunEvent } from '../../src/ledger/run-events.js';
import type { RunSpec } from '../../src/ledger/run-model.js';
import { FakeBackend } from '../../src/runs/backends/fake-backend.js';
import { startTestController, type TestController } from '../support/cluster-controller.js';
import { followRun, type FollowedRun } from '../support/run-follow.js';
import { tempDir } from '../support/shell.js';
import { atTestProcessEnd } from '../support/test-process-end.js';
import { useTestLedger } from '../support/test-ledger.js';

/** A bound on a wait for something that must happen; never a measure of how fast it did. */
const WAIT_MS = 60_000;

const testLedger = useTestLedger();
const scratch = tempDir('sb-run-node-');
atTestProcessEnd(() => scratch.cleanup());
const work = path.join(scratch.dir, 'work');
const fake = new FakeBackend();

/**
 * Holds the next claimed run before the node looks at it, once armed (before the submit, so the
 * node cannot pass the hook first): `held` resolves with its id, `release` lets it go on.
 */
class ClaimGate {
  private armed: ((runId: string) => void) | undefined;
  private readonly held = new Map<string, () => void>();

  readonly hook = (runId: string): Promise<void> => {
    const arrived = this.armed;
    if (!arrived) return Promise.resolve();
    this.armed = undefined;
    return new Promise((resolve) => {
      this.held.set(runId, resolve);
      arrived(runId);
    });
  };

  /** Arms the gate: resolves with the id of the next run that reaches the hook, held there. */
  holdNext(): Promise<string> {
    return new Promise((resolve) => (this.armed = resolve));
  }

  release(runId: string): void {
    this.held.get(runId)?.();
    this.held.delete(runId);
  }
}

const gate = new ClaimGate();
/** Holds a run once the node's service has it, before the node applies the stops asked meanwhile. */
const takenGate = new ClaimGate();
let node: Awaited<ReturnType<typeof startClusterNode>> | undefined;

/** The controller in this process (startTestController). */
let ctl: TestController | undefined;

const need = <T>(value: T | undefined): T => {
  if (value === undefined) throw new Error('the cluster has not started');
  return value;
};

beforeAll(async () => {
  mkdirSync(work, { recursive: true });
  const opened = await startTestController(testLedger, scratch.dir);
  ctl = opened;
  const home = path.join(scratch.dir, 'node-home');
  mkdirSync(home, { recursive: true, mode: 0o700 });
  writeFileSync(path.join(home, 'policy.yaml'), `sandbox:\n  roots: [${JSON.stringify(scratch.dir)}]\n`);
  const { directory } = opened.runs;
  const seen = directory.get('node-x') ? Promise.resolve() : new Promise<void>((resolve) => directory.onChange((c) => c.node.record.name === 'node-x' && c.kind !== 'left' && c.kind !== 'lost' && resolve()));
  node = await startClusterNode({ home, nats: parseNatsOptions({ url: opened.cluster.server.url }), name: 'node-x', slots: 2, backends: [fake], logger: silentLogger, claimed: gate.hook, taken: takenGate.hook });
  await bounded(seen, 'the controller to see node-x');
}, WAIT_MS);

afterAll(async () => {
  await node?.close();
  await ctl?.close();
  scratch.cleanup();
}, WAIT_MS);

/** `promise`, or an error naming `what` once WAIT_MS passed first. */
async function bounded<T>(promise: Promise<T>, what: string, ms = WAIT_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no ${what} within ${ms} ms`)), ms)));
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Follows run `runId` on the controller from its first event to its done. */
const follow = (runId: string, onEvent?: (event: RunEvent) => void): FollowedRun => followRun(need(ctl).service, runId, onEvent);

/** Follows run `runId` on the controller, once it is running on the node. */
async function followRunning(runId: string): Promise<FollowedRun> {
  let running: () => void = () => undefined;
  const started = new Promise<void>((resolve) => (running = resolve));
  const run = follow(runId, (e) => e.type === 'state' && e.data.to === 'running' && running());
  await bounded(started, `run ${runId} running on the node`);
  return run;
}

/** The events as (seq, type) pairs, to compare the controller's copy with the node's. */
const shape = (events: readonly RunEvent[]): string[] => events.map((e) => `${e.seq}:${e.type}`);

describe('a cluster node', () => {
  it.each(['cancel', 'interrupt'] as const)('ends a run cancelled, never started, when a %s comes after its claim was won but before the node looked at it', { timeout: 2 * WAIT_MS }, async (how) => {
    const controller = need(ctl).service;
    const threadsBefore = fake.threads.size;
    const held = gate.holdNext();
    const submitted = await controller.submit({ backend: 'fake', prompt: 'hello', cwd: work });
    const run = follow(submitted.id);
    // The puller calls the hook only after the claim is won: the node holds the run now, unknown to its service.
    expect(await bounded(held, `hold of run ${submitted.id} at its claim`)).toBe(submitted.id);
    const answered = await controller[how](submitted.id);
    // The node did not know the run: the stop stands by its mark, not by the node's answer (a run
    // not started has no turn to interrupt).
    expect(answered.status).toBe('queued');
    gate.release(submitted.id);
    await bounded(run.ended, `end of run ${submitted.id}`);
    expect(run.events.map((e) => e.seq)).toEqual([1, 2]);
    expect(run.events.at(-1)).toMatchObject({ type: 'done', data: { outcome: 'cancelled' } });
    expect(await controller.get(submitted.id)).toMatchObject({ status: 'cancelled', reason: 'cancelled_by_user', message: 'cancelled by the caller before the node started it', node: 'node-x' });
    // Never started on the backend, and recorded in the node's own ledger as the controller has it.
    expect(fake.threads.size).toBe(threadsBefore);
    expect(fake.interrupted).not.toContain(submitted.id);
    expect(await need(node).service.get(submitted.id)).toMatchObject({ status: 'cancelled', reason: 'cancelled_by_user' });
  });

  it('keeps its ledger answering while NATS is frozen, and the controller gets every event once and in order afterwards', { timeout: 3 * WAIT_MS }, async () => {
    const controller = need(ctl).service;
    const { server } = need(ctl).cluster;
    const nodeService = need(node).service;
    const submitted = await controller.submit({ backend: 'fake', prompt: 'silent', cwd: work });
    let markRunning: () => void = () => undefined;
    const running = new Promise<void>((resolve) => (markRunning = resolve));
    const run = follow(submitted.id, (event) => {
      if (event.type === 'state' && event.data.to === 'running') markRunning();
    });
    await bounded(Promise.race([running, run.ended.then(() => Promise.reject(new Error(`run ended before running: ${JSON.stringify(run.events)}`)))]), `run ${submitted.id} running on the controller`);
    const pid = server.pid;
    process.kill(pid, 'SIGSTOP');
    try {
      // Cancelled and read on the node with the stream unreachable: nothing here waits on it.
      const cancelled = await bounded(nodeService.cancel(submitted.id), 'cancel on the node while NATS is frozen', 20_000);
      expect(cancelled.status).toBe('cancelled');
      expect(await bounded(nodeService.get(submitted.id), 'read on the node while NATS is frozen', 20_000)).toMatchObject({ status: 'cancelled' });
      expect(need(node).outbox.unsent).toBeGreaterThan(0);
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    await bounded(run.ended, `end of run ${submitted.id} on the controller`);
    const onNode = await nodeService.events(submitted.id, 0, 1_000);
    // Each event once, in order, and what the node recorded.
    expect(run.events.map((e) => e.seq)).toEqual(run.events.map((_, i) => i + 1));
    expect(shape(run.events)).toEqual(shape(onNode.events));
    expect(await need(ctl).ledger.events(submitted.id, 0, 1_000)).toEqual(run.events);
    expect(await controller.get(submitted.id)).toMatchObject({ status: 'cancelled', node: 'node-x' });
  });

  it('ends a run it cannot start (its folder missing here) failed, recorded in its own ledger and sent from there', { timeout: 2 * WAIT_MS }, async () => {
    const controller = need(ctl).service;
    const submitted = await controller.submit({ backend: 'fake', prompt: 'hello', cwd: path.join(scratch.dir, 'not-on-this-node') });
    const run = follow(submitted.id);
    await bounded(run.ended, `end of run ${submitted.id}`);
    expect(run.events.map((e) => `${e.seq}:${e.type}`)).toEqual(['1:state', '2:done']);
    expect(run.events.at(-1)).toMatchObject({ data: { outcome: 'failed', reason: 'spawn_failed' } });
    expect(String(run.events.at(-1)?.data.message)).toContain('cwd is not a folder');
    expect(await controller.get(submitted.id)).toMatchObject({ status: 'failed', reason: 'spawn_failed', node: 'node-x' });
    expect(await need(node).service.get(submitted.id)).toMatchObject({ status: 'failed', reason: 'spawn_failed' });
  });

  it("ends a live run failed (policy) when the controller's policy denies what the node allowed, naming the controller's rule", { timeout: 2 * WAIT_MS }, async () => {
    const controller = need(ctl).service;
    const submitted = await controller.submit({ backend: 'fake', prompt: 'silent', cwd: work });
    const run = await followRunning(submitted.id);
    await need(ctl).runs.failForPolicy(await controller.get(submitted.id), { rule: 'approvals.rules[0]', reason: 'denied: git push is not for agents' });
    await bounded(run.ended, `end of run ${submitted.id}`);
    expect(run.events.at(-1)).toMatchObject({ type: 'done', data: { outcome: 'failed', reason: 'policy' } });
    expect(String(run.events.at(-1)?.data.message)).toContain("the controller's policy denies what this node's allowed (approvals.rules[0]): denied: git push is not for agents");
    expect(await controller.get(submitted.id)).toMatchObject({ status: 'failed', reason: 'policy', node: 'node-x' });
  });

  it.each(['cancel', 'interrupt'] as const)('applies a %s that comes while the service takes the run as asked, once it has it', { timeout: 2 * WAIT_MS }, async (how) => {
    const controller = need(ctl).service;
    const held = takenGate.holdNext();
    const submitted = await controller.submit({ backend: 'fake', prompt: 'silent, in a conversation', cwd: work });
    const run = follow(submitted.id);
    // The service has it, running: the node has not looked for stops yet, and the request finds it starting.
    expect(await bounded(held, `hold of run ${submitted.id} once taken`)).toBe(submitted.id);
    await controller[how](submitted.id);
    takenGate.release(submitted.id);
    await bounded(run.ended, `end of run ${submitted.id}`);
    const ended = await controller.get(submitted.id);
    expect(ended).toMatchObject({ status: 'cancelled', reason: 'cancelled_by_user', node: 'node-x' });
    if (how === 'interrupt') {
      // The turn only: the conversation stays open for a follow-up.
      expect(ended.message).toBe('the turn was interrupted by the caller');
      expect(fake.interrupted).toContain(submitted.id);
      expect(fake.open.has(submitted.id)).toBe(true);
    } else {
      expect(ended.message).toBe('cancelled by the caller');
      expect(fake.interrupted).not.toContain(submitted.id);
      expect(fake.open.has(submitted.id)).toBe(false);
    }
  });

  it('interrupts a live run on the node: it ends cancelled, the conversation stays there, and a follow-up goes on in it', { timeout: 2 * WAIT_MS }, async () => {
    const controller = need(ctl).service;
    const submitted = await controller.submit({ backend: 'fake', prompt: 'silent, in a conversation', cwd: work });
    const run = await followRunning(submitted.id);
    await controller.interrupt(submitted.id);
    await bounded(run.ended, `end of run ${submitted.id}`);
    expect(run.events.at(-1)).toMatchObject({ type: 'done', data: { outcome: 'cancelled', reason: 'cancelled_by_user' } });
    expect(await controller.get(submitted.id)).toMatchObject({ status: 'cancelled', message: 'the turn was interrupted by the caller', node: 'node-x' });
    // The CLI's own interrupt, not a cancel: its conversation is still open on the node.
    expect(fake.interrupted).toContain(submitted.id);
    expect(fake.open.has(submitted.id)).toBe(true);
    const threadsBefore = fake.threads.size;

    const next = await controller.submit({ backend: 'fake', prompt: 'hello again', parent: submitted.id });
    expect(next).toMatchObject({ parent: submitted.id, node: 'node-x' });
    const second = follow(next.id);
    await bounded(second.ended, `end of follow-up ${next.id}`);
    expect(await controller.get(next.id)).toMatchObject({ status: 'completed', node: 'node-x' });
    expect(fake.threads.size).toBe(threadsBefore);
  });

  it('ends a queued run a node says it refused when no node holds its claim, and leaves one a node holds', { timeout: 2 * WAIT_MS }, async () => {
    const controller = need(ctl).service;
    const client = controllerControlClient(need(ctl).cluster.controller.nc, 'node-x', WAIT_MS);
    // Held at its claim: node-x has it, so a refusal said of it changes nothing.
    const held = gate.holdNext();
    const claimed = await controller.submit({ backend: 'fake', prompt: 'hello', cwd: work });
    const claimedRun = follow(claimed.id);
    await bounded(held, `hold of run ${claimed.id} at its claim`);
    expect(await client.call('refused', { node: 'node-x', run_id: claimed.id, reason: 'made up' })).toEqual({ ended: false });
    gate.release(claimed.id);
    await bounded(claimedRun.ended, `end of run ${claimed.id}`);
    expect(await controller.get(claimed.id)).toMatchObject({ status: 'completed' });
    // Recorded for node-x but never put in its queue (as when the work item was refused there): no claim, so it ends.
    const spec: RunSpec = { id: 'run_0123456789abcdef', backend: 'fake', mode: 'stdio', prompt: 'never sent', cwd: work, policy: 'test', limits: {}, schema_version: 'v2', parent: null, keep_alive: false, node: 'node-x', created_at: Date.now() };
    need(ctl).ledger.createRun(spec);
    await need(ctl).ledger.flush();
    const unsent = follow(spec.id);
    expect(await controllerControlClient(need(ctl).cluster.controller.nc, 'node-y', WAIT_MS).call('refused', { node: 'node-y', run_id: spec.id, reason: 'not its run' })).toEqual({ ended: false });
    expect(await client.call('refused', { node: 'node-x', run_id: spec.id, reason: 'its claim could not be tried' })).toEqual({ ended: true });
    await bounded(unsent.ended, `end of run ${spec.id}`);
    expect(await controller.get(spec.id)).toMatchObject({ status: 'failed', reason: 'not_started', message: 'node node-x could not take it: its claim could not be tried' });
  });
});
