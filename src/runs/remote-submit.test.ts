/**
 * A controller's run service governing runs on cluster nodes, over a RemoteRuns kept here (the
 * cluster's own, over NATS, is tested against a real server in test/cluster/): the concurrency
 * limits held over local and node runs, a run waiting for a place sent once one frees, the
 * controller's policy turning a backend off, the queue caps, a cancel of a run still waiting here,
 * the policy's hash on every run, and a restart taking up what was in flight.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Disposable } from '../core/disposable.js';
import { Emitter } from '../core/emitter.js';
import { isSwitchboardError } from '../core/errors.js';
import { parseGovernancePolicy, type GovernancePolicyInput } from '../governance/policy-file.js';
import { agentSessionEvent, decisionEvent, doneEvent, inputEvent, stateEvent, type NewRunEvent } from '../ledger/run-events.js';
import type { LedgerStore } from '../ledger/ledger-store.js';
import { RunLedger } from '../ledger/run-ledger.js';
import type { RunMode, RunSpec } from '../ledger/run-model.js';
import { SqliteLedgerStore } from '../ledger/sqlite-store.js';
import { FakeBackend } from './backends/fake-backend.js';
import type { ChooseOptions, ClusterNodeView, RemoteCancel, RemoteRuns, RunPlace, StopHow } from './remote-runs.js';
import { RunService } from './run-service.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** One node (or those named in `names`) with the `remote` backend; what was sent to them and claimed, and cancels sent. */
class OneNode implements RemoteRuns {
  readonly sent: { id: string; node: string | undefined; mode: 'auto' | RunMode; agentSession?: string; parent?: string }[] = [];
  /** The live nodes, each with `totalSlots`. */
  names = ['node-a'];
  /** Where the run service has its runs (trackPlaces). */
  placeOf: (runId: string) => RunPlace | undefined = () => undefined;
  readonly claims = new Set<string>();
  readonly cancelsSent: string[] = [];
  readonly interruptsSent: string[] = [];
  readonly stoppedForPolicy: { id: string; rule: string }[] = [];

  offers(backend: string): boolean {
    return backend === 'remote';
  }

  /** The node's slots, as its lease says. */
  totalSlots = 2;
  /** A lease that never shows a slot taken, as one not yet renewed after the node pulled a run. */
  staleLease = false;
  /** The runs sent that no longer take a slot on the node (ended there, or their node was lost). */
  readonly finished = new Set<string>();

  choose(backend: string, labels: readonly string[], options: ChooseOptions = {}): string | undefined {
    for (const node of this.nodes()) {
      if (!this.offers(backend) || (options.node !== undefined && options.node !== node.name) || (options.repo !== undefined && !node.repos.includes(options.repo)) || !labels.every((l) => node.labels.includes(l))) continue;
      const free = Math.min(node.slots.free, node.slots.total - (options.occupied?.(node.name) ?? 0));
      if (free > 0) return node.name;
    }
    return undefined;
  }

  /** The controller's store, as a restart would read it. */
  store: LedgerStore | undefined;
  /** Each run sent, and its node as the store had it then. */
  readonly storedAtDispatch: [string, string | undefined][] = [];

  async dispatch(spec: RunSpec, mode: 'auto' | RunMode): Promise<void> {
    this.sent.push({ id: spec.id, node: spec.node, mode, ...(spec.agent_session !== undefined ? { agentSession: spec.agent_session } : {}), ...(spec.parent !== null ? { parent: spec.parent } : {}) });
    if (this.store) this.storedAtDispatch.push([spec.id, (await this.store.run(spec.id))?.spec.node]);
  }

  /** The claim goes to the controller unless the node took it (a node claims what it was sent). */
  abandon(spec: RunSpec): Promise<boolean> {
    if (this.claims.has(spec.id)) return Promise.resolve(false);
    this.claims.add(spec.id);
    return Promise.resolve(true);
  }

  claimed(spec: RunSpec): Promise<boolean> {
    return Promise.resolve(this.claims.has(spec.id));
  }

  failForPolicy(spec: RunSpec, violation: { rule: string; reason: string }): Promise<void> {
    this.stoppedForPolicy.push({ id: spec.id, rule: violation.rule });
    return Promise.resolve();
  }

  async cancel(spec: RunSpec, how: StopHow = 'cancel'): Promise<RemoteCancel> {
    if (await this.abandon(spec)) return 'abandoned';
    (how === 'interrupt' ? this.interruptsSent : this.cancelsSent).push(spec.id);
    return 'sent';
  }

  backendNames(): string[] {
    return ['remote'];
  }

  private readonly changes = new Emitter<void>();

  onNodesChanged(listener: () => void): Disposable {
    return this.changes.event(() => listener());
  }

  trackPlaces(placeOf: (runId: string) => RunPlace | undefined): void {
    this.placeOf = placeOf;
  }

  /** Says a node changed (its lease renewed with the slots it has now). */
  tell(): void {
    this.changes.fire();
  }

  /** Labels other than `linux`, by node. */
  readonly labelsOf = new Map<string, string[]>();

  nodes(): ClusterNodeView[] {
    return this.names.map((name) => {
      const taken = this.sent.filter((r) => r.node === name && !this.finished.has(r.id)).length;
      return { name, labels: this.labelsOf.get(name) ?? ['linux'], clis: [{ name: 'remote', version: '1.0.0' }], repos: ['app'], slots: { total: this.totalSlots, free: this.staleLease ? this.totalSlots : Math.max(0, this.totalSlots - taken) }, started_at: 1, seen_at: 2 };
    });
  }
}

async function controller(policy: GovernancePolicyInput, file = ':memory:', node = new OneNode()): Promise<{ service: RunService; ledger: RunLedger; node: OneNode; work: string }> {
  const root = mkdtempSync(path.join(tmpdir(), 'sb-remote-submit-'));
  const store = new SqliteLedgerStore(file);
  node.store = store;
  const ledger = new RunLedger({ store });
  const { service } = await RunService.start({ ledger, policy: parseGovernancePolicy({ sandbox: { roots: [root] }, ...policy }), backends: [new FakeBackend({ stepMs: 0 })], remote: node, scope: root });
  cleanups.push(() => rmSync(root, { recursive: true, force: true }));
  cleanups.push(() => ledger.close());
  cleanups.push(() => service.dispose());
  return { service, ledger, node, work: root };
}

/** What a node would publish of a run it started and finished: its own numbering from 1 (and its slot free again, on `node`). */
function nodeRan(ledger: RunLedger, runId: string, node?: OneNode): void {
  node?.finished.add(runId);
  const events: NewRunEvent[] = [inputEvent(1, 'prompt', 'p'), stateEvent({ from: 'queued', to: 'running', at: 2, reason: null, message: '' }), stateEvent({ from: 'running', to: 'completed', at: 3, reason: 'finished', message: 'done' }), doneEvent(3, 'completed', 'finished', 'done')];
  events.forEach((e, i) => ledger.ingest({ ...e, run_id: runId, seq: i + 1 }));
}

async function refusal(p: Promise<unknown>): Promise<{ code: string; message: string; details: Record<string, unknown> }> {
  try {
    await p;
  } catch (err) {
    if (isSwitchboardError(err)) return { code: err.code, message: err.message, details: { ...err.details } };
    throw err;
  }
  throw new Error('expected a refusal');
}

/** Waits for a run's end through the ledger (bounded by the test's own timeout). */
function ended(ledger: RunLedger, runId: string): Promise<void> {
  return new Promise((resolve, reject) => ledger.subscribe(runId, 0, () => undefined, { onEnd: resolve, onError: reject }));
}

describe('runs on cluster nodes, governed by the controller', () => {
  it('holds the concurrency limit over the cluster: a run past it waits here, queued, and is sent once a node run ends', async () => {
    const { service, ledger, node, work } = await controller({ limits: { concurrency: 1 } });
    const first = await service.submit({ backend: 'remote', prompt: 'one', cwd: work });
    const second = await service.submit({ backend: 'remote', prompt: 'two', cwd: work });
    expect(node.sent.map((s) => s.id)).toEqual([first.id]);
    expect(second).toMatchObject({ status: 'queued', node: 'node-a', queue_position: 0 });
    // A local run waits for the same place.
    const local = await service.submit({ backend: 'fake', prompt: 'here', cwd: work });
    expect(local).toMatchObject({ status: 'queued', queue_position: 1 });
    node.claims.add(first.id);
    nodeRan(ledger, first.id);
    await ended(ledger, first.id);
    expect(node.sent.map((s) => s.id)).toEqual([first.id, second.id]);
    expect((await service.get(second.id)).queue_position).toBeNull();
    expect((await service.get(local.id)).queue_position).toBe(0);
    node.claims.add(second.id);
    nodeRan(ledger, second.id);
    await ended(ledger, local.id);
    expect(await service.get(local.id)).toMatchObject({ status: 'completed' });
  });

  it('records the hash of its policy on every run, local or sent to a node; the same rules in another order hash the same', async () => {
    const { service, work } = await controller({ limits: { concurrency: 2, wall_clock_ms: 60_000 } });
    const remote = await service.submit({ backend: 'remote', prompt: 'there', cwd: work });
    const local = await service.submit({ backend: 'fake', prompt: 'here', cwd: work });
    const reordered = parseGovernancePolicy({ limits: { wall_clock_ms: 60_000, concurrency: 2 }, sandbox: { roots: [work] } });
    expect(remote.policy_hash).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(local.policy_hash).toBe(remote.policy_hash);
    expect(reordered.hash).toBe(remote.policy_hash);
    expect(parseGovernancePolicy({ limits: { concurrency: 3 } }).hash).not.toBe(reordered.hash);
  });

  it('refuses a backend its policy turns off before any node sees it: recorded failed (policy), FORBIDDEN naming the run and the rule', async () => {
    const { service, node, work } = await controller({ backends: { remote: { enabled: false } } });
    const refused = await refusal(service.submit({ backend: 'remote', prompt: 'no', cwd: work }));
    expect(refused).toMatchObject({ code: 'FORBIDDEN', details: { rule: 'backends.remote.enabled' } });
    expect(node.sent).toEqual([]);
    expect(await service.get(refused.details.run_id as string)).toMatchObject({ status: 'failed', reason: 'policy', node: 'node-a' });
  });

  it("keeps the queue caps over the runs waiting for a node: a caller's third waiting run is refused", async () => {
    const { service, node, work } = await controller({ limits: { concurrency: 1 }, queue: { max_per_caller: 1 } });
    await service.submit({ backend: 'remote', prompt: 'runs', cwd: work, caller: 'pane-1' });
    await service.submit({ backend: 'remote', prompt: 'waits', cwd: work, caller: 'pane-1' });
    const refused = await refusal(service.submit({ backend: 'remote', prompt: 'one too many', cwd: work, caller: 'pane-1' }));
    expect(refused).toMatchObject({ code: 'LIMIT_EXCEEDED', details: { queued: 1, limit: 1 } });
    // Another caller still has room: both the node's slots are taken (one run sent, one waiting for its place), so it waits first in the node's line.
    expect(await service.submit({ backend: 'remote', prompt: 'mine', cwd: work, caller: 'pane-2' })).toMatchObject({ status: 'queued', queue_position: 0 });
    expect(node.sent).toHaveLength(1);
  });

  it('cancels a run still waiting here without sending it: cancelled, its place given up', async () => {
    const { service, node, work } = await controller({ limits: { concurrency: 1 } });
    const first = await service.submit({ backend: 'remote', prompt: 'runs', cwd: work });
    const waiting = await service.submit({ backend: 'remote', prompt: 'waits', cwd: work });
    expect(await service.cancel(waiting.id)).toMatchObject({ status: 'cancelled', reason: 'cancelled_by_user' });
    expect(node.cancelsSent).toEqual([]);
    // A run sent and claimed is the node's to end.
    node.claims.add(first.id);
    expect(await service.cancel(first.id)).toMatchObject({ status: 'queued' });
    expect(node.cancelsSent).toEqual([first.id]);
    expect(node.sent.map((s) => s.id)).toEqual([first.id]);
  });

  it("interrupts a node run on its node; one still waiting here, or orphaned, ends cancelled here; an ended one is left; another caller may not", async () => {
    const { service, ledger, node, work } = await controller({ limits: { concurrency: 1 } });
    const first = await service.submit({ backend: 'remote', prompt: 'runs', cwd: work, caller: 'pane-1' });
    const waiting = await service.submit({ backend: 'remote', prompt: 'waits', cwd: work, caller: 'pane-1' });
    expect(await refusal(service.interrupt(first.id, 'pane-2'))).toMatchObject({ code: 'FORBIDDEN', message: expect.stringContaining('may interrupt it') });
    // Never sent: there is no turn to end, and it is cancelled here.
    expect(await service.interrupt(waiting.id, 'pane-1')).toMatchObject({ status: 'cancelled', reason: 'cancelled_by_user' });
    // Sent and claimed: the node is told to interrupt it, not to cancel it, and its end comes as its events.
    node.claims.add(first.id);
    expect(await service.interrupt(first.id, 'pane-1')).toMatchObject({ status: 'queued' });
    expect(node.interruptsSent).toEqual([first.id]);
    expect(node.cancelsSent).toEqual([]);
    nodeRan(ledger, first.id, node);
    await ended(ledger, first.id);
    // Ended: as it is, and nothing is sent.
    expect(await service.interrupt(first.id, 'pane-1')).toMatchObject({ status: 'completed' });
    expect(node.interruptsSent).toEqual([first.id]);

    // Orphaned: ended cancelled here at once; its node, should it come back, is told to interrupt it (its conversation kept there).
    const lost = await service.submit({ backend: 'remote', prompt: 'lost', cwd: work });
    node.claims.add(lost.id);
    const events: NewRunEvent[] = [inputEvent(1, 'prompt', 'lost'), stateEvent({ from: 'queued', to: 'running', at: 2, reason: null, message: '' }), stateEvent({ from: 'running', to: 'orphaned', at: 3, reason: null, message: 'node-a was lost' })];
    events.forEach((e, i) => ledger.ingest({ ...e, run_id: lost.id, seq: i + 1 }));
    await ledger.flush();
    node.finished.add(lost.id);
    expect(await service.interrupt(lost.id)).toMatchObject({ status: 'cancelled', reason: 'cancelled_by_user' });
    await expect.poll(() => node.interruptsSent).toContain(lost.id);
    expect(node.cancelsSent).toEqual([]);
  });

  it("judges each call a node allowed again by its own rules: one they deny stops the run, naming the controller's rule", async () => {
    const { service, ledger, node, work } = await controller({ approvals: { rules: [{ decision: 'deny', tool: 'shell', command: '^git push' }], default: 'allow' } });
    const run = await service.submit({ backend: 'remote', prompt: 'push it', cwd: work });
    node.claims.add(run.id);
    const allowed = (seq: number, subject: Record<string, unknown>): void => {
      ledger.ingest({ ...decisionEvent(seq, { subject, decision: 'allow', rule: 'approvals.default', reason: 'the node allows it', by: 'policy' }), run_id: run.id, seq });
    };
    ledger.ingest({ ...stateEvent({ from: 'queued', to: 'running', at: 1, reason: null, message: '' }), run_id: run.id, seq: 1 });
    // Admission and calls both sides allow: nothing to do.
    allowed(2, { run: 'admission', backend: 'remote', cwd: work });
    allowed(3, { tool: 'shell', command: 'git status' });
    await ledger.flush();
    expect(node.stoppedForPolicy).toEqual([]);
    allowed(4, { tool: 'shell', command: 'git push origin main' });
    await expect.poll(() => node.stoppedForPolicy).toEqual([{ id: run.id, rule: 'approvals.rules[0]' }]);
    // Once: a second denied call does not stop it again.
    allowed(5, { tool: 'shell', command: 'git push --force' });
    await ledger.flush();
    expect(node.stoppedForPolicy).toHaveLength(1);
  });

  it("judges a repository run's calls against the folder its node admitted it in, inside its worktree there", async () => {
    const { service, ledger, node } = await controller({ approvals: { rules: [{ decision: 'deny', tool: 'file_write', path: 'outside_workdir' }], default: 'allow' } });
    const run = await service.submit({ backend: 'remote', prompt: 'fix it', repo: 'app' });
    node.claims.add(run.id);
    const onNode = '/srv/node/worktrees/app/run';
    const allowed = (seq: number, subject: Record<string, unknown>): void => {
      ledger.ingest({ ...decisionEvent(seq, { subject, decision: 'allow', rule: 'approvals.default', reason: 'the node allows it', by: 'policy' }), run_id: run.id, seq });
    };
    ledger.ingest({ ...stateEvent({ from: 'queued', to: 'running', at: 1, reason: null, message: '' }), run_id: run.id, seq: 1 });
    allowed(2, { run: 'admission', backend: 'remote', cwd: onNode });
    allowed(3, { tool: 'file_write', path: `${onNode}/src/fix.ts` });
    await ledger.flush();
    expect(node.stoppedForPolicy).toEqual([]);
    allowed(4, { tool: 'file_write', path: '/etc/passwd' });
    await expect.poll(() => node.stoppedForPolicy).toEqual([{ id: run.id, rule: 'approvals.rules[0]' }]);
  });

  it('stops a run whose node allowed a call too large to send whole: the controller cannot judge it again', async () => {
    const { service, ledger, node, work } = await controller({});
    const run = await service.submit({ backend: 'remote', prompt: 'p', cwd: work });
    node.claims.add(run.id);
    ledger.ingest({ ...stateEvent({ from: 'queued', to: 'running', at: 1, reason: null, message: '' }), run_id: run.id, seq: 1 });
    ledger.ingest({ type: 'decision', ts: 2, run_id: run.id, seq: 2, data: { subject: '(cut)', decision: 'allow', rule: 'approvals.default', reason: 'the node allows it', by: 'policy', cut_bytes: 2_000_000 }, compat: { text: '(cut)', status: 'allow', is_error: false } });
    await expect.poll(() => node.stoppedForPolicy).toEqual([{ id: run.id, rule: 'cluster.cut_decision' }]);
  });

  it('lists the live nodes it sends runs to', async () => {
    const { service, work } = await controller({});
    await service.submit({ backend: 'remote', prompt: 'there', cwd: work });
    expect(service.nodes()).toEqual({ cluster: true, nodes: [{ name: 'node-a', labels: ['linux'], clis: [{ name: 'remote', version: '1.0.0' }], repos: ['app'], slots: { total: 2, free: 1 }, started_at: 1, seen_at: 2 }] });
  });

  it('takes up node runs after a restart: their places held, and one never claimed is sent again', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'sb-remote-submit-file-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const file = path.join(dir, 'ledger.db');
    const before = await controller({ limits: { concurrency: 1 } }, file);
    const sent = await before.service.submit({ backend: 'remote', prompt: 'sent', cwd: before.work });
    const held = await before.service.submit({ backend: 'remote', prompt: 'held', cwd: before.work });
    before.node.claims.add(sent.id);
    await before.service.dispose();
    await before.ledger.close();

    const node = new OneNode();
    node.claims.add(sent.id);
    const after = await controller({ limits: { concurrency: 1 } }, file, node);
    // The claimed run holds the one place: the held one waits, then is sent once the first ends.
    expect(await after.service.get(held.id)).toMatchObject({ status: 'queued', queue_position: 0 });
    nodeRan(after.ledger, sent.id);
    await ended(after.ledger, sent.id);
    await expect.poll(() => node.sent.map((s) => s.id)).toEqual([held.id]);
  });

  it('holds the slot a run was chosen for while it waits for its place: a node is never sent more runs than it has slots', async () => {
    const node = new OneNode();
    const { service, ledger, work } = await controller({ limits: { concurrency: 3 } }, ':memory:', node);
    const local1 = await service.submit({ backend: 'fake', prompt: 'silent', cwd: work });
    const a = await service.submit({ backend: 'remote', prompt: 'a', cwd: work });
    const local2 = await service.submit({ backend: 'fake', prompt: 'silent', cwd: work });
    // Every place taken: b has the node's last slot and waits for a place; c finds no slot and waits in the node's line.
    const b = await service.submit({ backend: 'remote', prompt: 'b', cwd: work });
    const c = await service.submit({ backend: 'remote', prompt: 'c', cwd: work });
    expect(b).toMatchObject({ status: 'queued', queue_position: 0 });
    expect(c).toMatchObject({ status: 'queued', queue_position: 0 });
    await service.cancel(local1.id);
    await service.cancel(local2.id);
    await expect.poll(() => node.sent.map((s) => s.id)).toEqual([a.id, b.id]);
    // Two places free, no slot: c still waits for one.
    expect(await service.get(c.id)).toMatchObject({ status: 'queued', queue_position: 0 });
    nodeRan(ledger, a.id, node);
    await ended(ledger, a.id);
    await expect.poll(() => node.sent.map((s) => s.id)).toEqual([a.id, b.id, c.id]);
  });

  it('moves a run waiting for a full node to another that has a slot for it first, recorded in the ledger; a run for a node named stays in its line', async () => {
    const node = new OneNode();
    node.names = ['node-a', 'node-b'];
    node.totalSlots = 1;
    const { service, ledger, work } = await controller({}, ':memory:', node);
    const a = await service.submit({ backend: 'remote', prompt: 'a', cwd: work });
    const b = await service.submit({ backend: 'remote', prompt: 'b', cwd: work });
    expect(node.sent.map((s) => [s.id, s.node])).toEqual([
      [a.id, 'node-a'],
      [b.id, 'node-b'],
    ]);
    // Both full: one waits for node-a (the shortest line), and one names node-a.
    const waiting = await service.submit({ backend: 'remote', prompt: 'any node', cwd: work });
    const named = await service.submit({ backend: 'remote', prompt: 'node-a only', cwd: work, node: 'node-a' });
    expect(waiting).toMatchObject({ status: 'queued', node: 'node-a', queue_position: 0 });
    expect(named).toMatchObject({ status: 'queued', node: 'node-a', queue_position: 1 });
    expect(node.placeOf(waiting.id)).toEqual({ waiting: true });
    // node-b's run ends first: the run that may go anywhere goes there; the named one waits on.
    nodeRan(ledger, b.id, node);
    await ended(ledger, b.id);
    node.tell();
    await expect.poll(() => node.sent.map((s) => [s.id, s.node])).toContainEqual([waiting.id, 'node-b']);
    // Sent once its move was in the store: a restart looks for it where it went.
    expect(node.storedAtDispatch).toContainEqual([waiting.id, 'node-b']);
    expect(node.placeOf(waiting.id)).toEqual({ waiting: false, node: 'node-b' });
    expect((await ledger.run(waiting.id))?.spec.node).toBe('node-b');
    expect(await service.get(waiting.id)).toMatchObject({ node: 'node-b', policy: expect.stringContaining("its node's own") as unknown });
    expect(await service.get(named.id)).toMatchObject({ status: 'queued', node: 'node-a', queue_position: 0 });
    nodeRan(ledger, a.id, node);
    await ended(ledger, a.id);
    node.tell();
    await expect.poll(() => node.sent.map((s) => [s.id, s.node])).toContainEqual([named.id, 'node-a']);
    expect(node.sent).toHaveLength(4);
  });

  it('moves a run waiting for a node that went away to the line of another that can take it; one that must go to that node ends not started, saying so', async () => {
    const node = new OneNode();
    node.names = ['node-a', 'node-b'];
    node.totalSlots = 1;
    const { service, ledger, work } = await controller({}, ':memory:', node);
    await service.submit({ backend: 'remote', prompt: 'a', cwd: work });
    const b = await service.submit({ backend: 'remote', prompt: 'b', cwd: work });
    const waiting = await service.submit({ backend: 'remote', prompt: 'any node', cwd: work });
    const named = await service.submit({ backend: 'remote', prompt: 'node-a only', cwd: work, node: 'node-a' });
    expect(waiting).toMatchObject({ node: 'node-a' });
    // node-a goes: the run for any node waits for node-b instead (full), the named one ends.
    node.names = ['node-b'];
    node.tell();
    await ended(ledger, named.id);
    expect(await service.get(named.id)).toMatchObject({ status: 'failed', reason: 'not_started', message: expect.stringContaining('node node-a went away while the run waited for a slot there, and the run goes to that node only') as unknown });
    expect(await service.get(waiting.id)).toMatchObject({ status: 'queued', node: 'node-b', queue_position: 0 });
    expect(node.placeOf(waiting.id)).toEqual({ waiting: true });
    nodeRan(ledger, b.id, node);
    await ended(ledger, b.id);
    node.tell();
    await expect.poll(() => node.sent.map((s) => [s.id, s.node])).toContainEqual([waiting.id, 'node-b']);
    // With no node left that could take it, a run waiting for one that goes ends too.
    const last = await service.submit({ backend: 'remote', prompt: 'last', cwd: work });
    expect(last).toMatchObject({ status: 'queued', node: 'node-b' });
    node.names = [];
    node.tell();
    await ended(ledger, last.id);
    expect(await service.get(last.id)).toMatchObject({ status: 'failed', reason: 'not_started', message: expect.stringContaining('no other node can take it') as unknown });
  });

  it('puts a run that waited for a slot back in its line after a restart, and sends it once its node has room', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'sb-remote-submit-file-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const file = path.join(dir, 'ledger.db');
    const before = await controller({}, file);
    const one = await before.service.submit({ backend: 'remote', prompt: 'one', cwd: before.work });
    const two = await before.service.submit({ backend: 'remote', prompt: 'two', cwd: before.work });
    const three = await before.service.submit({ backend: 'remote', prompt: 'three', cwd: before.work });
    expect(three).toMatchObject({ status: 'queued', queue_position: 0 });
    await before.service.dispose();
    await before.ledger.close();

    // The node had started the two it was sent, and holds both its slots.
    const node = new OneNode();
    for (const id of [one.id, two.id]) {
      node.claims.add(id);
      node.sent.push({ id, node: 'node-a', mode: 'auto' });
    }
    const after = await controller({}, file, node);
    await expect.poll(async () => (await after.service.get(three.id)).queue_position).toBe(0);
    expect(node.sent.map((s) => s.id)).toEqual([one.id, two.id]);
    nodeRan(after.ledger, one.id, node);
    await ended(after.ledger, one.id);
    await expect.poll(() => node.sent.map((s) => s.id)).toEqual([one.id, two.id, three.id]);
  });

  it('resumes an orphaned node run on the node named: the orphan ends cancelled, saying so, and the new run takes its conversation and folder', async () => {
    const { service, ledger, node, work } = await controller({});
    const lost = await service.submit({ backend: 'remote', prompt: 'remember the word', cwd: work });
    node.claims.add(lost.id);
    // What the node sent before it was lost, then the controller's own move to orphaned.
    const events: NewRunEvent[] = [inputEvent(1, 'prompt', 'remember the word'), stateEvent({ from: 'queued', to: 'running', at: 2, reason: null, message: '' }), agentSessionEvent(3, 'remote', 'conv-7'), stateEvent({ from: 'running', to: 'orphaned', at: 4, reason: null, message: 'node-a was lost' })];
    events.forEach((e, i) => ledger.ingest({ ...e, run_id: lost.id, seq: i + 1 }));
    await ledger.flush();
    // Its node was lost: what it held is no node's slot now.
    node.finished.add(lost.id);
    expect(await service.get(lost.id)).toMatchObject({ status: 'orphaned' });

    const resumed = await service.submit({ backend: 'remote', prompt: 'which word?', resume: lost.id, node: 'node-a' });
    expect(resumed).toMatchObject({ parent: lost.id, agent_session: 'conv-7', cwd: work, node: 'node-a', mode: 'stdio' });
    expect(node.sent.at(-1)).toEqual({ id: resumed.id, node: 'node-a', mode: 'stdio', agentSession: 'conv-7', parent: lost.id });
    const orphan = await service.get(lost.id);
    expect(orphan).toMatchObject({ status: 'cancelled', reason: 'cancelled_by_user' });
    expect(orphan.message).toContain(`resumed as run ${resumed.id} on node node-a`);
    // Its node is told too, should it come back with the agent still running.
    await expect.poll(() => node.cancelsSent).toContain(lost.id);
    // One CLI process per conversation: while the resumed run goes, the conversation is its own.
    expect(await refusal(service.submit({ backend: 'remote', prompt: 'and again', resume: lost.id }))).toMatchObject({ code: 'INVALID_REQUEST', details: { run_id: resumed.id } });
    // Once it has ended, the ended orphan can be resumed again: the conversation is the CLI's, not the run's.
    node.claims.add(resumed.id);
    nodeRan(ledger, resumed.id, node);
    await ended(ledger, resumed.id);
    const again = await service.submit({ backend: 'remote', prompt: 'and again', resume: lost.id });
    expect(again).toMatchObject({ parent: lost.id, agent_session: 'conv-7' });
  });

  it('keeps a resume whose conversation is not carried between hosts to its own node while that is live, waiting there for a slot; another node once it is gone', async () => {
    const node = new OneNode();
    node.names = ['node-a', 'node-b'];
    node.totalSlots = 1;
    const { service, ledger, work } = await controller({}, ':memory:', node);
    // `remote` keeps its conversations where no other host reads them (as OpenCode's database does).
    const first = await service.submit({ backend: 'remote', prompt: 'remember', cwd: work, node: 'node-a' });
    node.claims.add(first.id);
    const events: NewRunEvent[] = [inputEvent(1, 'prompt', 'remember'), stateEvent({ from: 'queued', to: 'running', at: 2, reason: null, message: '' }), agentSessionEvent(3, 'remote', 'conv-9'), stateEvent({ from: 'running', to: 'completed', at: 4, reason: 'finished', message: '' }), doneEvent(4, 'completed', 'finished', '')];
    events.forEach((e, i) => ledger.ingest({ ...e, run_id: first.id, seq: i + 1 }));
    await ended(ledger, first.id);
    node.finished.add(first.id);
    const busy = await service.submit({ backend: 'remote', prompt: 'busy', cwd: work, node: 'node-a' });
    expect(busy).toMatchObject({ node: 'node-a' });

    // node-a is full, node-b free: the resume waits for node-a, and stays in its line when node-b frees again.
    const resumed = await service.submit({ backend: 'remote', prompt: 'go on', resume: first.id });
    expect(resumed).toMatchObject({ status: 'queued', node: 'node-a', queue_position: 0, agent_session: 'conv-9' });
    node.tell();
    expect(node.sent.map((s) => s.id)).not.toContain(resumed.id);
    expect(node.placeOf(resumed.id)).toEqual({ waiting: true });
    nodeRan(ledger, busy.id, node);
    await ended(ledger, busy.id);
    await expect.poll(() => node.sent.map((s) => [s.id, s.node])).toContainEqual([resumed.id, 'node-a']);

    // A resume asking for what its node lacks goes where it can, as asked (not refused).
    node.claims.add(resumed.id);
    nodeRan(ledger, resumed.id, node);
    await ended(ledger, resumed.id);
    node.labelsOf.set('node-b', ['linux', 'gpu']);
    const labelled = await service.submit({ backend: 'remote', prompt: 'on a gpu', resume: first.id, labels: ['gpu'] });
    expect(labelled).toMatchObject({ node: 'node-b' });
    node.claims.add(labelled.id);
    nodeRan(ledger, labelled.id, node);
    await ended(ledger, labelled.id);

    // Kept waiting for its node, and that node goes: it waits for another instead (one sharing its HOME may have the conversation).
    const holding = await service.submit({ backend: 'remote', prompt: 'hold a', cwd: work, node: 'node-a' });
    const holdingB = await service.submit({ backend: 'remote', prompt: 'hold b', cwd: work, node: 'node-b' });
    const kept = await service.submit({ backend: 'remote', prompt: 'go on', resume: first.id });
    expect(kept).toMatchObject({ status: 'queued', node: 'node-a' });
    node.names = ['node-b'];
    node.finished.add(holding.id);
    node.tell();
    await expect.poll(async () => (await service.get(kept.id)).node).toBe('node-b');
    nodeRan(ledger, holdingB.id, node);
    await ended(ledger, holdingB.id);
    node.tell();
    await expect.poll(() => node.sent.map((s) => [s.id, s.node])).toContainEqual([kept.id, 'node-b']);
    expect(await service.get(kept.id)).toMatchObject({ status: 'queued', agent_session: 'conv-9' });
  });

  it('resumes an orphan once: its slot is free, a second resume at the same time is refused, and another caller may not', async () => {
    const { service, ledger, node, work } = await controller({});
    const orphan = async (): Promise<string> => {
      const run = await service.submit({ backend: 'remote', prompt: 'remember', cwd: work });
      node.claims.add(run.id);
      const events: NewRunEvent[] = [inputEvent(1, 'prompt', 'remember'), stateEvent({ from: 'queued', to: 'running', at: 2, reason: null, message: '' }), agentSessionEvent(3, 'remote', `conv-${run.id}`), stateEvent({ from: 'running', to: 'orphaned', at: 4, reason: null, message: 'lost' })];
      events.forEach((e, i) => ledger.ingest({ ...e, run_id: run.id, seq: i + 1 }));
      await ledger.flush();
      return run.id;
    };
    const a = await orphan();
    const b = await orphan();
    // Two orphans on a 2-slot node: the node (come back under its name, its lease all free) takes new runs.
    node.finished.add(a);
    node.finished.add(b);
    expect(await service.submit({ backend: 'remote', prompt: 'fresh', cwd: work })).toMatchObject({ node: 'node-a' });
    const both = await Promise.allSettled([service.submit({ backend: 'remote', prompt: 'go on', resume: a }), service.submit({ backend: 'remote', prompt: 'go on too', resume: a })]);
    expect(both.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
    expect(node.sent.filter((r) => r.agentSession === `conv-${a}`)).toHaveLength(1);

    // Another caller than its maker (a pane's token) may not take the owner's conversation over.
    expect(await refusal(service.submit({ backend: 'remote', prompt: 'mine now', resume: b, caller: 'pane-7' }))).toMatchObject({ code: 'FORBIDDEN' });
    expect(await service.get(b)).toMatchObject({ status: 'orphaned' });
    expect(await refusal(service.submit({ backend: 'remote', prompt: 'go on', parent: 'run-nope' }))).toMatchObject({ code: 'RUN_NOT_FOUND' });
  });

  it('leaves an orphan orphaned when the run resuming it is refused by the policy', async () => {
    const { service, ledger, work } = await controller({ backends: { remote: { enabled: false } } });
    // Recorded before the policy turned the backend off.
    const spec: RunSpec = { id: 'run_0123456789abcdef', backend: 'remote', mode: 'stdio', prompt: 'remember', cwd: work, policy: 'test', limits: {}, schema_version: 'v2', parent: null, keep_alive: true, node: 'node-a', created_at: 1 };
    ledger.createRun(spec);
    const events: NewRunEvent[] = [stateEvent({ from: 'queued', to: 'running', at: 2, reason: null, message: '' }), agentSessionEvent(3, 'remote', 'conv-x'), stateEvent({ from: 'running', to: 'orphaned', at: 4, reason: null, message: 'lost' })];
    events.forEach((e, i) => ledger.ingest({ ...e, run_id: spec.id, seq: i + 1 }));
    await ledger.flush();
    expect(await refusal(service.submit({ backend: 'remote', prompt: 'go on', resume: spec.id }))).toMatchObject({ code: 'FORBIDDEN' });
    expect(await service.get(spec.id)).toMatchObject({ status: 'orphaned' });
  });



  it('refuses a resume it cannot do, and a node it cannot use, with a stable code and the run left as it was', async () => {
    const { service, ledger, node, work } = await controller({});
    const plain = await service.submit({ backend: 'remote', prompt: 'no conversation said', cwd: work });
    node.claims.add(plain.id);
    expect(await refusal(service.submit({ backend: 'remote', prompt: 'go on', resume: plain.id }))).toMatchObject({ code: 'INVALID_REQUEST', details: { status: 'queued' } });
    nodeRan(ledger, plain.id);
    await ended(ledger, plain.id);
    expect(await refusal(service.submit({ backend: 'remote', prompt: 'go on', resume: plain.id }))).toMatchObject({ code: 'INVALID_PARAMS', message: expect.stringContaining('recorded no conversation of its CLI') as unknown });
    expect(await refusal(service.submit({ backend: 'fake', prompt: 'go on', resume: plain.id }))).toMatchObject({ code: 'INVALID_PARAMS', message: expect.stringContaining('same backend') as unknown });
    expect(await refusal(service.submit({ backend: 'remote', prompt: 'go on', resume: 'run-nope' }))).toMatchObject({ code: 'RUN_NOT_FOUND' });
    expect(await refusal(service.submit({ backend: 'remote', prompt: 'go on', resume: plain.id, parent: plain.id }))).toMatchObject({ code: 'INVALID_PARAMS' });
    expect(await refusal(service.submit({ backend: 'remote', prompt: 'there', cwd: work, node: 'node-z' }))).toMatchObject({ code: 'NODE_UNREACHABLE', details: { node: 'node-z' } });
    expect(await refusal(service.submit({ backend: 'remote', prompt: 'there', cwd: work, node: 'node-a', labels: ['gpu'] }))).toMatchObject({ code: 'INVALID_PARAMS', details: { labels: ['gpu'] } });
    expect(await refusal(service.submit({ backend: 'fake', prompt: 'here', cwd: work, node: 'node-a' }))).toMatchObject({ code: 'INVALID_PARAMS' });
    expect(node.sent.map((s) => s.id)).toEqual([plain.id]);
    expect(await service.get(plain.id)).toMatchObject({ status: 'completed' });
  });

  it('sends a follow-up of a node run to its node, in its folder, and refuses one its conversation cannot take', async () => {
    const { service, ledger, node, work } = await controller({});
    const first = await service.submit({ backend: 'remote', prompt: 'one', cwd: work });
    expect(first).toMatchObject({ keep_alive: true });
    node.claims.add(first.id);
    expect(await refusal(service.submit({ backend: 'remote', prompt: 'two', parent: first.id }))).toMatchObject({ code: 'INVALID_REQUEST', details: { parent: first.id } });
    nodeRan(ledger, first.id, node);
    await ended(ledger, first.id);
    const next = await service.submit({ backend: 'remote', prompt: 'two', parent: first.id });
    expect(next).toMatchObject({ parent: first.id, node: 'node-a', cwd: work, keep_alive: true });
    expect(node.sent.at(-1)).toEqual({ id: next.id, node: 'node-a', mode: 'auto', parent: first.id });
    expect(await refusal(service.submit({ backend: 'remote', prompt: 'three', parent: first.id, node: 'node-b' }))).toMatchObject({ code: 'INVALID_PARAMS', details: { node: 'node-b' } });
    expect(await refusal(service.submit({ backend: 'remote', prompt: 'three', parent: first.id, cwd: path.join(work, 'elsewhere') }))).toMatchObject({ code: 'INVALID_PARAMS' });
    const closed = await service.submit({ backend: 'remote', prompt: 'alone', cwd: work, keep_alive: false });
    node.claims.add(closed.id);
    nodeRan(ledger, closed.id, node);
    await ended(ledger, closed.id);
    expect(await refusal(service.submit({ backend: 'remote', prompt: 'more', parent: closed.id }))).toMatchObject({ code: 'INVALID_PARAMS', message: expect.stringContaining('resume it instead') as unknown });
    // A local run's follow-up stays here, whatever the nodes offer.
    const local = await service.submit({ backend: 'fake', prompt: 'hello', cwd: work });
    await ended(ledger, local.id);
    const localNext = await service.submit({ backend: 'fake', prompt: 'hello again', parent: local.id });
    expect(localNext.node).toBeUndefined();
  });

  it('runs a repository run on a node that has the repository, on a branch of its own; its follow-up goes on on that branch; what cannot be is refused', async () => {
    const { service, ledger, node } = await controller({});
    const first = await service.submit({ backend: 'remote', prompt: 'fix it', repo: 'app', ref: 'main', push: true });
    expect(first).toMatchObject({ node: 'node-a', cwd: '.', repo: { name: 'app', ref: 'main', branch: `switchboard/runs/${first.id}`, push: true } });
    const inside = await service.submit({ backend: 'remote', prompt: 'in a folder', repo: 'app', cwd: 'src/lib' });
    expect(inside).toMatchObject({ cwd: 'src/lib', repo: { name: 'app', branch: `switchboard/runs/${inside.id}`, push: false } });
    expect(inside.repo?.ref).toBeUndefined();
    node.claims.add(first.id);
    nodeRan(ledger, first.id, node);
    await ended(ledger, first.id);
    // A follow-up names no repository: it is its parent's, on its parent's branch (push as asked now).
    const next = await service.submit({ backend: 'remote', prompt: 'and the tests', parent: first.id, push: false });
    expect(next).toMatchObject({ cwd: '.', repo: { name: 'app', ref: 'main', branch: `switchboard/runs/${first.id}`, push: false } });
    expect(await refusal(service.submit({ backend: 'remote', prompt: 'elsewhere', parent: first.id, repo: 'other' }))).toMatchObject({ code: 'INVALID_PARAMS', details: { repo: 'other' } });
    // No node has the repository; a named node lacks it; a ref or push without one; a folder outside the worktree.
    expect(await refusal(service.submit({ backend: 'remote', prompt: 'p', repo: 'other' }))).toMatchObject({ code: 'LIMIT_EXCEEDED', details: { repo: 'other' } });
    expect(await refusal(service.submit({ backend: 'remote', prompt: 'p', repo: 'other', node: 'node-a' }))).toMatchObject({ code: 'INVALID_PARAMS', details: { node: 'node-a', repo: 'other' } });
    expect(await refusal(service.submit({ backend: 'remote', prompt: 'p', ref: 'main', cwd: '/tmp' }))).toMatchObject({ code: 'INVALID_PARAMS', details: { ref: 'main' } });
    for (const cwd of ['/etc', '../up', 'src/../../up', 'C:\\work']) expect(await refusal(service.submit({ backend: 'remote', prompt: 'p', repo: 'app', cwd }))).toMatchObject({ code: 'INVALID_PARAMS', details: { cwd } });
    // A local backend takes no repository.
    expect(await refusal(service.submit({ backend: 'fake', prompt: 'p', repo: 'app' }))).toMatchObject({ code: 'INVALID_PARAMS', details: { backend: 'fake' } });
  });

  it("counts the runs it sent a node against its slots until they end, whatever the node's lease says yet", async () => {
    const node = new OneNode();
    node.staleLease = true;
    const { service, ledger, work } = await controller({}, ':memory:', node);
    const one = await service.submit({ backend: 'remote', prompt: 'one', cwd: work });
    const two = await service.submit({ backend: 'remote', prompt: 'two', cwd: work });
    expect(node.nodes()[0]?.slots.free).toBe(2);
    // Full: the next runs wait here for a slot, in line (named or not), never sent to a node with none.
    const three = await service.submit({ backend: 'remote', prompt: 'three', cwd: work });
    const four = await service.submit({ backend: 'remote', prompt: 'four', cwd: work, node: 'node-a' });
    expect(three).toMatchObject({ status: 'queued', node: 'node-a', queue_position: 0 });
    expect(four).toMatchObject({ status: 'queued', node: 'node-a', queue_position: 1 });
    expect(node.sent.map((s) => s.id)).toEqual([one.id, two.id]);
    // Once one ends, its slot is the next run's, in order.
    node.claims.add(one.id);
    nodeRan(ledger, one.id);
    await ended(ledger, one.id);
    expect(node.sent.map((s) => s.id)).toEqual([one.id, two.id, three.id]);
    expect(await service.get(four.id)).toMatchObject({ status: 'queued', queue_position: 0 });
    node.claims.add(two.id);
    nodeRan(ledger, two.id);
    await ended(ledger, two.id);
    expect(node.sent.map((s) => s.id)).toEqual([one.id, two.id, three.id, four.id]);
  });

  it('keeps a run every node is full for waiting here for a slot, sends it when its node tells of a free one, and ends it at once on cancel', async () => {
    const node = new OneNode();
    const { service, ledger, work } = await controller({ queue: { max_per_owner: 2 } }, ':memory:', node);
    await service.submit({ backend: 'remote', prompt: 'one', cwd: work });
    await service.submit({ backend: 'remote', prompt: 'two', cwd: work });
    const three = await service.submit({ backend: 'remote', prompt: 'three', cwd: work });
    const four = await service.submit({ backend: 'remote', prompt: 'four', cwd: work });
    // Waiting for a slot counts against the queue caps.
    expect(await refusal(service.submit({ backend: 'remote', prompt: 'five', cwd: work }))).toMatchObject({ code: 'LIMIT_EXCEEDED', details: { queued: 2, limit: 2 } });
    // The node comes back with a third slot (its lease says so): three goes, four still waits.
    node.totalSlots = 3;
    node.tell();
    await expect.poll(() => node.sent.map((s) => s.id)).toContain(three.id);
    expect(node.sent.map((s) => s.id)).not.toContain(four.id);
    // A run waiting for a slot is cancelled here: no node ever had it.
    await service.cancel(four.id);
    await ended(ledger, four.id);
    expect(await service.get(four.id)).toMatchObject({ status: 'cancelled', queue_position: null });
    // No node has the labels asked for: refused, not waited for.
    expect(await refusal(service.submit({ backend: 'remote', prompt: 'six', cwd: work, labels: ['gpu'] }))).toMatchObject({ code: 'LIMIT_EXCEEDED', details: { labels: ['gpu'] } });
  });
});
