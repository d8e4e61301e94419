import { afterEach, describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { RunLedger } from '../ledger/run-ledger.js';
import { SqliteLedgerStore } from '../ledger/sqlite-store.js';
import { parseGovernancePolicy, type GovernancePolicyInput } from '../governance/policy-file.js';
import { negotiateRunSchema, RunService, type RunFace, type RunView } from './run-service.js';
import { FakeBackend } from './backends/fake-backend.js';
import { CallerGovernance } from '../governance/caller-governance.js';
import { renderEvent, type RunEvent } from '../ledger/run-events.js';
import { isSwitchboardError } from '../core/errors.js';
import { noticeEvent } from '../ledger/run-events.js';
import type { BeforeEnd } from './live-run.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

interface Setup {
  service: RunService;
  ledger: RunLedger;
  root: string;
  work: string;
  fake: FakeBackend;
}

async function setup(policy: GovernancePolicyInput = {}, options: { stepMs?: number; file?: string; beforeEnd?: BeforeEnd } = {}): Promise<Setup> {
  const root = mkdtempSync(path.join(tmpdir(), 'sb-runs-'));
  const work = path.join(root, 'work');
  mkdirSync(work);
  const ledger = new RunLedger({ store: new SqliteLedgerStore(options.file ?? ':memory:') });
  const fake = new FakeBackend({ stepMs: options.stepMs ?? 0 });
  const { service } = await RunService.start({ ledger, policy: parseGovernancePolicy({ sandbox: { roots: [root] }, ...policy }), backends: [fake], scope: root, ...(options.beforeEnd ? { beforeEnd: options.beforeEnd } : {}) });
  cleanups.push(() => rmSync(root, { recursive: true, force: true }));
  cleanups.push(() => ledger.close());
  cleanups.push(() => service.dispose());
  return { service, ledger, root, work, fake };
}

/** Follows a run to its end: every event from `after`. */
function follow(service: RunService, runId: string, after = 0): Promise<RunEvent[]> {
  const got: RunEvent[] = [];
  return new Promise((resolve, reject) => {
    service.subscribe(runId, after, (e) => got.push(e), { onEnd: () => resolve(got), onError: reject }).catch(reject);
  });
}

/** Waits until `check` holds, looking every 10 ms (bounded: it must happen, and soon). */
async function until(check: () => boolean, what: string): Promise<void> {
  for (const deadline = Date.now() + 30_000; !check(); await new Promise((r) => setTimeout(r, 10))) if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
}

const types = (events: RunEvent[]): string[] => events.map((e) => (e.type === 'state' ? `state:${String(e.data.to)}` : e.type));

async function refusal(p: Promise<unknown>): Promise<{ code: string; details: Record<string, unknown> }> {
  try {
    await p;
  } catch (err) {
    if (isSwitchboardError(err)) return { code: err.code, details: { ...err.details } };
    throw err;
  }
  throw new Error('expected a refusal');
}

describe('the run service', () => {
  it("records what the service adds once the agent is done after all it said and before the end; a cancel meanwhile stops it and decides the end", async () => {
    const asked: { outcome: string; stopped: AbortSignal }[] = [];
    let hold: Promise<void> = Promise.resolve();
    const { service, work } = await setup({}, {
      beforeEnd: async (_spec, outcome, stopped) => {
        asked.push({ outcome: outcome.type, stopped });
        await hold;
        return [noticeEvent(Date.now(), `wrapped up after ${outcome.type}`)];
      },
    });
    // A reply only streamed: its last pieces, still being merged when the agent is done, come first.
    const run = await service.submit({ backend: 'fake', prompt: 'pieces 3 only', cwd: work });
    const events = await follow(service, run.id);
    expect(events.filter((e) => e.type === 'token').map((e) => String(e.data.text)).join('')).toBe('p0 p1 p2 ');
    expect(events.slice(-3).map((e) => e.type)).toEqual(['notice', 'state', 'done']);
    expect(events.at(-3)?.data.text).toBe('wrapped up after complete');
    expect((await service.get(run.id)).status).toBe('completed');

    let release: () => void = () => undefined;
    hold = new Promise((resolve) => (release = resolve));
    const held = await service.submit({ backend: 'fake', prompt: 'hello', cwd: work });
    const ended = follow(service, held.id);
    await until(() => asked.length === 2, 'the second run to wrap up');
    // Its agent is done; a cancel now aborts what is being made, and the run ends cancelled.
    const cancelling = service.cancel(held.id);
    await until(() => asked[1]?.stopped.aborted === true, 'the wrap-up to be stopped');
    release();
    await cancelling;
    await ended;
    expect(await service.get(held.id)).toMatchObject({ status: 'cancelled', reason: 'cancelled_by_user' });
  });

  it('tells the wrap-up the end that stands: the last pieces recorded past the output limit fail the run', async () => {
    const asked: string[] = [];
    const { service, work } = await setup({}, {
      beforeEnd: (_spec, outcome) => {
        asked.push(outcome.type === 'fail' ? outcome.reason : outcome.type);
        return Promise.resolve([]);
      },
    });
    const run = await service.submit({ backend: 'fake', prompt: 'pieces 3 only', cwd: work, limits: { max_output_bytes: 120 } });
    await follow(service, run.id);
    expect(await service.get(run.id)).toMatchObject({ status: 'failed', reason: 'output_limit' });
    expect(asked).toEqual(['output_limit']);
  });

  it('ends a run whose wrap-up throws at once, as its agent ended', async () => {
    const { service, work } = await setup({}, {
      beforeEnd: () => {
        throw new Error('broken');
      },
    });
    const run = await service.submit({ backend: 'fake', prompt: 'hello', cwd: work });
    await follow(service, run.id);
    expect((await service.get(run.id)).status).toBe('completed');
  });

  it('runs a prompt: queued, running, streaming, completed, with token, tool_call, tool_result, patch and done', async () => {
    const { service, work } = await setup({ approvals: { rules: [{ decision: 'allow', tool: ['shell', 'file_write'] }], default: 'deny' } });
    const run = await service.submit({ backend: 'fake', prompt: 'use a tool please', cwd: work });
    expect(run).toMatchObject({ backend: 'fake', mode: 'stdio', schema_version: 'v2', parent: null });
    const events = await follow(service, run.id);
    expect(types(events)).toEqual(['input', 'decision', 'state:running', 'decision', 'state:streaming', 'tool_call', 'tool_result', 'decision', 'tool_call', 'tool_result', 'patch', 'token', 'state:completed', 'done']);
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    expect(events[3]?.data).toMatchObject({ decision: 'allow', rule: 'approvals.rules[0]', by: 'policy' });
    expect(events.find((e) => e.type === 'patch')?.data).toMatchObject({ path: 'note.txt', applied: true });
    expect(await service.get(run.id)).toMatchObject({ status: 'completed', reason: 'finished', last_seq: events.length });
    // The same records in either schema version, with the compat fields.
    const done = events.at(-1) as RunEvent;
    expect(renderEvent(done, 'v1')).toEqual({ schema_version: 'v1', type: 'done', run_id: run.id, seq: done.seq, ts: done.ts, text: 'end_turn', status: 'completed', is_error: false });
    expect(renderEvent(done, 'v2')).toMatchObject({ schema_version: 'v2', data: { outcome: 'completed', reason: 'finished' }, compat: { status: 'completed', is_error: false } });
  });

  it('replays a run from the ledger exactly as it streamed live, from any point', async () => {
    const { service, work } = await setup({}, { stepMs: 1 });
    const run = await service.submit({ backend: 'fake', prompt: 'tokens 300', cwd: work });
    const live = await follow(service, run.id);
    expect(await service.events(run.id, 0, 10_000)).toEqual({ events: live, next_after: null });
    for (const from of [1, 7, 150, live.length - 1]) expect(await follow(service, run.id, from)).toEqual(live.slice(from));
  });

  it('with a limit of 2, ten runs at once never have more than 2 running, and all complete in order', async () => {
    const { service, work, fake } = await setup({ limits: { concurrency: 2 } }, { stepMs: 5 });
    const runs: RunView[] = [];
    for (let i = 0; i < 10; i++) runs.push(await service.submit({ backend: 'fake', prompt: `tokens ${20 + i}`, cwd: work }));
    expect(runs.slice(2).map((r) => r.status)).toEqual(Array(8).fill('queued'));
    expect(runs.slice(2).map((r) => r.queue_position)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    const all = await Promise.all(runs.map((r) => follow(service, r.id)));
    // From the ledger: the intervals each run spent running never overlap more than two deep.
    const spans = all.map((events) => {
      const at = (to: string): number => events.find((e) => e.type === 'state' && e.data.to === to)?.seq ?? -1;
      return { start: events[at('running') - 1]?.ts ?? 0, end: events.find((e) => e.type === 'done')?.ts ?? 0, startSeq: at('running') };
    });
    const points = spans.flatMap((s) => [{ t: s.start, d: 1 }, { t: s.end, d: -1 }]).sort((a, b) => a.t - b.t || a.d - b.d);
    let depth = 0;
    let most = 0;
    for (const p of points) most = Math.max(most, (depth += p.d));
    expect(most).toBeLessThanOrEqual(2);
    expect(fake.maxRunning).toBe(2);
    const records = await Promise.all(runs.map((r) => service.get(r.id)));
    expect(records.map((r) => r.status)).toEqual(Array(10).fill('completed'));
    // First in, first started.
    const started = records.map((r) => r.started_at ?? 0);
    expect([...started].sort((a, b) => a - b)).toEqual(started);
    // The queued ones say why they waited.
    expect(all[5]?.find((e) => e.type === 'decision' && e.data.decision === 'queue')?.data).toMatchObject({ rule: 'limits.concurrency' });
  });

  it('refuses a folder outside the sandbox, and records the refusal with its rule', async () => {
    const { service } = await setup();
    const outside = mkdtempSync(path.join(tmpdir(), 'sb-outside-'));
    cleanups.push(() => rmSync(outside, { recursive: true, force: true }));
    const refused = await refusal(service.submit({ backend: 'fake', prompt: 'hello', cwd: outside }));
    expect(refused).toMatchObject({ code: 'FORBIDDEN', details: { rule: 'sandbox.roots' } });
    const runId = refused.details.run_id as string;
    expect(await service.get(runId)).toMatchObject({ status: 'failed', reason: 'policy' });
    const events = await follow(service, runId);
    expect(types(events)).toEqual(['input', 'decision', 'error', 'state:failed', 'done']);
    expect(events[1]?.data).toMatchObject({ decision: 'deny', rule: 'sandbox.roots' });
  });

  it('denies a file write outside the sandbox and records it', async () => {
    const { service, work } = await setup({ approvals: { rules: [], default: 'allow' } });
    const run = await service.submit({ backend: 'fake', prompt: 'write outside /etc/sb-test.txt', cwd: work });
    const events = await follow(service, run.id);
    const decision = events.find((e) => e.type === 'decision' && (e.data.subject as { tool?: string }).tool === 'file_write');
    expect(decision?.data).toMatchObject({ decision: 'deny', rule: 'sandbox.roots', subject: { path: '/etc/sb-test.txt', tool_call_id: 'w1' } });
    expect(events.some((e) => e.type === 'patch')).toBe(false);
    // A denial ends the run as the policy says: failed (policy), never completed.
    expect(await service.get(run.id)).toMatchObject({ status: 'failed', reason: 'policy', message: expect.stringContaining('sandbox.roots') as unknown });
  });

  it('judges a tool call through the approval broker, governance its first step: what it leaves open is denied by the chain\u2019s end, in the broker\u2019s words', async () => {
    const { service, work } = await setup({ approvals: { rules: [{ decision: 'deny', tool: 'network' }], default: 'ask', replace: true } });
    const run = await service.submit({ backend: 'fake', prompt: 'use a tool please', cwd: work });
    const events = await follow(service, run.id);
    const decisions = events.filter((e) => e.type === 'decision' && (e.data.subject as { tool?: string }).tool !== undefined).map((e) => e.data);
    expect(decisions[0]).toMatchObject({ decision: 'deny', rule: 'approvals.default', by: 'default', subject: { tool: 'shell', tool_call_id: 't1' }, reason: expect.stringContaining('nobody answers for this run') as unknown });
    expect(await service.get(run.id)).toMatchObject({ status: 'failed', reason: 'policy' });
  });

  it('records a streamed reply as coalesced tokens, each piece once, with time in the order of the numbering', async () => {
    const { service, work } = await setup({}, { stepMs: 0 });
    const run = await service.submit({ backend: 'fake', prompt: 'pieces 200', cwd: work });
    const events = await follow(service, run.id);
    const tokens = events.filter((e) => e.type === 'token');
    expect(tokens.map((e) => String(e.data.text)).join('')).toBe(Array.from({ length: 200 }, (_, i) => `p${i} `).join(''));
    // Coalesced: far fewer events than pieces (200 pieces with no pause between them).
    expect(tokens.length).toBeLessThan(200);
    for (let i = 1; i < events.length; i++) expect(events[i]?.ts, `event ${i + 1}`).toBeGreaterThanOrEqual(events[i - 1]?.ts ?? 0);
  });

  it('lets the agent go on after a denial when the policy says on_deny: continue', async () => {
    const { service, work } = await setup({ approvals: { rules: [], default: 'allow', on_deny: 'continue' } });
    const run = await service.submit({ backend: 'fake', prompt: 'write outside /etc/sb-test.txt', cwd: work });
    const events = await follow(service, run.id);
    expect(events.find((e) => e.type === 'decision' && (e.data.subject as { tool?: string }).tool === 'file_write')?.data).toMatchObject({ decision: 'deny', rule: 'sandbox.roots' });
    expect(events.find((e) => e.type === 'tool_result')?.data).toMatchObject({ is_error: true });
    expect(await service.get(run.id)).toMatchObject({ status: 'completed' });
  });

  it('ends a run past its output limit as failed (output_limit), keeping what came before', async () => {
    const { service, work } = await setup({ limits: { max_events: 50 } });
    const run = await service.submit({ backend: 'fake', prompt: 'tokens 500', cwd: work });
    const events = await follow(service, run.id);
    expect(await service.get(run.id)).toMatchObject({ status: 'failed', reason: 'output_limit' });
    expect(events.filter((e) => e.type === 'token')).toHaveLength(50);
    expect(types(events).slice(-3)).toEqual(['error', 'state:failed', 'done']);
    const bytes = await setup({ limits: { max_output_bytes: 2_000 } });
    const second = await bytes.service.submit({ backend: 'fake', prompt: 'tokens 500', cwd: bytes.work });
    await follow(bytes.service, second.id);
    expect(await bytes.service.get(second.id)).toMatchObject({ status: 'failed', reason: 'output_limit' });
  });

  it('does not count the time an agent waits on a person as silence', async () => {
    const { service, work } = await setup({ limits: { no_output_ms: 150 } });
    const run = await service.submit({ backend: 'fake', prompt: 'person 600', cwd: work });
    await follow(service, run.id);
    expect(await service.get(run.id)).toMatchObject({ status: 'completed' });
  });

  it('runs a face: its own driver and governance, its id before it runs, what it reports, its end; no follow-up', async () => {
    const { service, work } = await setup();
    const own = new FakeBackend({ name: 'fake', mode: 'stdio', permissionRequests: false });
    const seen: { opened?: string; entries: string[]; ended?: string } = { entries: [] };
    const face = {
      name: 'run_agent',
      driver: own,
      governance: new CallerGovernance({ face: 'run_agent', reason: 'the caller governs' }),
      opened: (id: string) => (seen.opened = id),
      observe: (e: { kind: string; entry?: { content: string } }) => {
        if (e.kind === 'entry' && e.entry) seen.entries.push(e.entry.content);
      },
      ended: (state: { status: string }) => (seen.ended = state.status),
    };
    // A driver that cannot ask is taken for a face (its caller governs), never for the bridge's own runs.
    const run = await service.submit({ backend: 'fake', prompt: 'tool', cwd: work, keep_alive: true }, face);
    expect(seen.opened).toBe(run.id);
    const events = await follow(service, run.id);
    expect(await service.get(run.id)).toMatchObject({ status: 'completed', keep_alive: false, policy: "run_agent (the caller's own rules)" });
    expect(seen).toMatchObject({ ended: 'completed', entries: expect.arrayContaining(['Done: wrote tool_out.txt.']) });
    const decisions = events.filter((e) => e.type === 'decision').map((e) => e.data);
    expect(decisions[0]).toMatchObject({ decision: 'allow', rule: 'run_agent.caller' });
    // Its tool calls are judged by the caller's governance, not the policy file's.
    expect(decisions.slice(1).map((d) => d.rule)).toEqual(['run_agent.cli', 'run_agent.cli']);
    await until(() => own.open.size === 0, 'the face\'s driver to close');
    expect((await refusal(service.submit({ backend: 'fake', prompt: 'hello', parent: run.id }, { ...face, driver: new FakeBackend() }))).code).toBe('INVALID_PARAMS');
  });

  it('runs a face that keeps its conversation: each run continues the last, a limit interrupts the turn and keeps it, a cancel closes it', async () => {
    const { service, work } = await setup();
    const own = new FakeBackend();
    let kept: (() => Promise<void>) | undefined;
    const face = (continues?: { thread: string; parent: string }): RunFace => ({
      name: 'agent_session',
      driver: own,
      governance: new CallerGovernance({ face: 'agent_session', reason: 'the caller governs' }),
      conversation: { continues, keep: (close) => (kept = close) },
    });
    const first = await service.submit({ backend: 'fake', prompt: 'hello', cwd: work }, face());
    await follow(service, first.id);
    expect(kept).toBeDefined();
    expect(own.open.has(first.id)).toBe(true);
    // Not the idle pool's: the face holds it.
    expect(service.idleConversations().conversations).toBe(0);
    kept = undefined;
    const second = await service.submit({ backend: 'fake', prompt: 'slow', cwd: work, limits: { wall_clock_ms: 100 } }, face({ thread: first.id, parent: first.id }));
    await follow(service, second.id);
    expect(await service.get(second.id)).toMatchObject({ status: 'failed', reason: 'timeout', parent: first.id, keep_alive: true });
    // The limit ended the turn, not the conversation.
    expect(own.interrupted).toEqual([second.id]);
    expect(kept).toBeDefined();
    expect(own.open.has(first.id)).toBe(true);
    kept = undefined;
    const third = await service.submit({ backend: 'fake', prompt: 'slow', cwd: work }, face({ thread: first.id, parent: second.id }));
    await until(() => own.running === 1, 'the third run to start');
    await service.cancel(third.id);
    expect(await service.get(third.id)).toMatchObject({ status: 'cancelled', parent: second.id });
    expect(kept).toBeUndefined();
    expect(own.open.has(first.id)).toBe(false);
    // A face names what it continues itself, never by parent.
    expect((await refusal(service.submit({ backend: 'fake', prompt: 'x', parent: first.id }, face()))).code).toBe('INVALID_PARAMS');
  });

  it('ends at once a run told to cancel while an interrupt its CLI ignores is under way, its first reason recorded', async () => {
    const { service, work } = await setup();
    const own = new FakeBackend({ ignoresInterrupts: true });
    const face: RunFace = { name: 'agent_session', driver: own, governance: new CallerGovernance({ face: 'agent_session', reason: 'the caller governs' }), conversation: { keep: () => undefined } };
    const run = await service.submit({ backend: 'fake', prompt: 'slow', cwd: work }, face);
    await until(() => own.running === 1, 'the run to start');
    const interrupting = service.interrupt(run.id);
    await until(() => own.interrupted.length === 1, 'the interrupt to reach the driver');
    await service.cancel(run.id);
    await interrupting;
    expect(await service.get(run.id)).toMatchObject({ status: 'cancelled', message: 'the turn was interrupted by the caller' });
    expect(own.open.size).toBe(0);
  });

  it('ends a run past its wall clock, or silent too long, with that reason', async () => {
    const { service, work } = await setup({ limits: { wall_clock_ms: 200 } });
    const slow = await service.submit({ backend: 'fake', prompt: 'slow', cwd: work });
    await follow(service, slow.id);
    expect(await service.get(slow.id)).toMatchObject({ status: 'failed', reason: 'timeout' });
    const quiet = await setup({ limits: { no_output_ms: 150 } });
    const silent = await quiet.service.submit({ backend: 'fake', prompt: 'silent', cwd: quiet.work });
    await follow(quiet.service, silent.id);
    expect(await quiet.service.get(silent.id)).toMatchObject({ status: 'failed', reason: 'no_output_timeout' });
    // A caller may tighten a limit, never loosen it.
    const tight = await service.submit({ backend: 'fake', prompt: 'slow', cwd: work, limits: { wall_clock_ms: 100_000, no_output_ms: 50 } });
    expect(tight.limits).toMatchObject({ wall_clock_ms: 200, no_output_ms: 50 });
    await follow(service, tight.id);
  });

  it('cancels a queued run and a running one', async () => {
    const { service, work, fake } = await setup({ limits: { concurrency: 1 } });
    const running = await service.submit({ backend: 'fake', prompt: 'slow', cwd: work });
    const queued = await service.submit({ backend: 'fake', prompt: 'hello', cwd: work });
    expect((await service.cancel(queued.id)).status).toBe('cancelled');
    expect(await service.cancel(running.id)).toMatchObject({ status: 'cancelled', reason: 'cancelled_by_user' });
    expect(fake.running).toBe(0);
    // Cancelling an ended run changes nothing.
    expect(await service.cancel(running.id)).toMatchObject({ status: 'cancelled' });
    const next = await service.submit({ backend: 'fake', prompt: 'hello', cwd: work });
    await follow(service, next.id);
    expect((await service.get(next.id)).status).toBe('completed');
  });

  it('records a crash as failed (crashed) and a model error as failed (agent_error)', async () => {
    const { service, work } = await setup();
    const crash = await service.submit({ backend: 'fake', prompt: 'crash', cwd: work });
    await follow(service, crash.id);
    expect(await service.get(crash.id)).toMatchObject({ status: 'failed', reason: 'crashed', message: expect.stringContaining('SIGKILL') });
    const fail = await service.submit({ backend: 'fake', prompt: 'fail', cwd: work });
    await follow(service, fail.id);
    expect(await service.get(fail.id)).toMatchObject({ status: 'failed', reason: 'agent_error' });
  });

  it('continues a run in the same conversation, and refuses follow-ups that cannot be', async () => {
    const { service, work, fake } = await setup();
    const first = await service.submit({ backend: 'fake', prompt: 'hello', cwd: work });
    await follow(service, first.id);
    const second = await service.submit({ backend: 'fake', prompt: 'hello again', parent: first.id });
    expect(second).toMatchObject({ parent: first.id, cwd: work });
    await follow(service, second.id);
    expect([...fake.threads]).toEqual([first.id]);
    expect((await refusal(service.submit({ backend: 'fake', prompt: 'x', parent: 'run_nope' }))).code).toBe('RUN_NOT_FOUND');
    const busy = await service.submit({ backend: 'fake', prompt: 'slow', cwd: work });
    expect((await refusal(service.submit({ backend: 'fake', prompt: 'x', parent: busy.id }))).code).toBe('INVALID_REQUEST');
    await service.cancel(busy.id);
  });

  it('keeps a conversation open only for a run that can be followed up (keep_alive), and counts it', async () => {
    const { service, work, fake } = await setup();
    const once = await service.submit({ backend: 'fake', prompt: 'hello', cwd: work, keep_alive: false });
    expect(once.keep_alive).toBe(false);
    await follow(service, once.id);
    // Closed with the run: nothing idle, and a follow-up is refused at once, saying why.
    expect(fake.open.has(once.id)).toBe(false);
    expect(service.idleConversations()).toMatchObject({ conversations: 0, max: 4 });
    const refused = await refusal(service.submit({ backend: 'fake', prompt: 'x', parent: once.id }));
    expect(refused).toMatchObject({ code: 'INVALID_PARAMS' });
    const kept = await service.submit({ backend: 'fake', prompt: 'hello', cwd: work });
    expect(kept.keep_alive).toBe(true);
    await follow(service, kept.id);
    expect(fake.open.has(kept.id)).toBe(true);
    expect(service.idleConversations()).toMatchObject({ conversations: 1, backends: { fake: { conversations: 1 } } });
    expect((await service.backends())[0]).toMatchObject({ idle: { conversations: 1, processes: 0 } });
    // A follow-up takes it out of the idle ones while it runs; with keep_alive: false it is closed after.
    const last = await service.submit({ backend: 'fake', prompt: 'hello again', parent: kept.id, keep_alive: false });
    expect(service.idleConversations().conversations).toBe(0);
    await follow(service, last.id);
    expect(await service.get(last.id)).toMatchObject({ status: 'completed' });
    expect(fake.open.size).toBe(0);
  });

  it('holds at most limits.idle_conversations open over every backend, closing the least recently used first', async () => {
    const root = mkdtempSync(path.join(tmpdir(), 'sb-idle-'));
    cleanups.push(() => rmSync(root, { recursive: true, force: true }));
    const ledger = new RunLedger({ store: new SqliteLedgerStore(':memory:') });
    const a = new FakeBackend({ name: 'a' });
    const b = new FakeBackend({ name: 'b' });
    const { service } = await RunService.start({ ledger, policy: parseGovernancePolicy({ sandbox: { roots: [root] }, limits: { idle_conversations: 2 } }), backends: [a, b], scope: root });
    cleanups.push(() => ledger.close());
    cleanups.push(() => service.dispose());
    const ids: string[] = [];
    for (const backend of ['a', 'b', 'a']) {
      const run = await service.submit({ backend, prompt: 'hello', cwd: root });
      await follow(service, run.id);
      ids.push(run.id);
    }
    await service.idleSettled();
    // The first (on a) was the least recently used: closed; the other two stay.
    expect(service.idleConversations()).toMatchObject({ conversations: 2, max: 2, backends: { a: { conversations: 1 }, b: { conversations: 1 } } });
    expect([...a.open]).toEqual([ids[2]]);
    expect([...b.open]).toEqual([ids[1]]);
    expect((await refusal(service.submit({ backend: 'a', prompt: 'x', parent: ids[0] }))).code).toBe('INVALID_PARAMS');
    // Using one makes it the most recently used: the next one past the cap closes the other.
    const again = await service.submit({ backend: 'b', prompt: 'again', parent: ids[1] });
    await follow(service, again.id);
    const fourth = await service.submit({ backend: 'a', prompt: 'hello', cwd: root });
    await follow(service, fourth.id);
    await service.idleSettled();
    expect([...a.open]).toEqual([fourth.id]);
    expect([...b.open]).toEqual([ids[1]]);
  });

  it('closes an idle conversation after limits.idle_ms, and all of them when it shuts down', async () => {
    const { service, work, fake } = await setup({ limits: { idle_ms: 50 } });
    const run = await service.submit({ backend: 'fake', prompt: 'hello', cwd: work });
    await follow(service, run.id);
    await until(() => fake.open.size === 0, 'the idle conversation to close');
    expect(service.idleConversations().conversations).toBe(0);
    const other = await setup();
    const kept = await other.service.submit({ backend: 'fake', prompt: 'hello', cwd: other.work });
    await follow(other.service, kept.id);
    expect(other.fake.open.size).toBe(1);
    await other.service.dispose();
    expect(other.fake.open.size).toBe(0);
  });

  it('gives a follow-up that never started its conversation back (cancelled while queued)', async () => {
    const { service, work, fake } = await setup({ limits: { concurrency: 1 } });
    const first = await service.submit({ backend: 'fake', prompt: 'hello', cwd: work });
    await follow(service, first.id);
    const blocker = await service.submit({ backend: 'fake', prompt: 'slow', cwd: work });
    const queued = await service.submit({ backend: 'fake', prompt: 'again', parent: first.id });
    expect(queued.status).toBe('queued');
    await service.cancel(queued.id);
    expect(service.idleConversations().conversations).toBe(1);
    expect(fake.open.has(first.id)).toBe(true);
    await service.cancel(blocker.id);
  });

  it('refuses an idle limit given per backend: the cap is one over every backend', () => {
    expect(() => parseGovernancePolicy({ backends: { claude: { limits: { idle_conversations: 2 } as never } } })).toThrow(/idle_conversations/);
    expect(parseGovernancePolicy({}).idle).toEqual({ maxConversations: 4, idleMs: 600_000 });
    expect(parseGovernancePolicy({ limits: { idle_conversations: 0, idle_ms: 1000 } }).idle).toEqual({ maxConversations: 0, idleMs: 1000 });
  });

  it('refuses bad requests without recording them', async () => {
    const { service, work } = await setup();
    expect((await refusal(service.submit({ backend: 'nope', prompt: 'x', cwd: work }))).code).toBe('INVALID_PARAMS');
    expect((await refusal(service.submit({ backend: 'fake', prompt: '  ', cwd: work }))).code).toBe('INVALID_PARAMS');
    expect((await refusal(service.submit({ backend: 'fake', prompt: 'x', cwd: path.join(work, 'missing') }))).code).toBe('INVALID_PARAMS');
    expect((await refusal(service.submit({ backend: 'fake', prompt: 'x', cwd: work, mode: 'pty' }))).code).toBe('INVALID_PARAMS');
    expect((await refusal(service.get('run_nope'))).code).toBe('RUN_NOT_FOUND');
    expect((await service.list()).runs).toEqual([]);
  });

  it('records the runs a service that died left in flight as failed (interrupted)', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'sb-recover-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const file = path.join(dir, 'ledger.db');
    const first = new RunLedger({ store: new SqliteLedgerStore(file) });
    first.createRun({ id: 'run_old', backend: 'fake', mode: 'stdio', prompt: 'p', cwd: dir, policy: 'x', limits: {}, schema_version: 'v2', parent: null, created_at: 1 });
    first.append('run_old', { type: 'state', ts: 2, data: { from: 'queued', to: 'running', reason: null, message: '' }, compat: { text: '', status: 'running', is_error: false } });
    first.append('run_old', { type: 'token', ts: 3, data: { text: 'hi' }, compat: { text: 'hi', status: 'streaming', is_error: false } });
    await first.close();
    const { service } = await setup({}, { file });
    expect(await service.get('run_old')).toMatchObject({ status: 'failed', reason: 'interrupted', last_seq: 4 });
    expect(types((await service.events('run_old')).events)).toEqual(['state:running', 'token', 'state:failed', 'done']);
  });

  it('removes ended runs past the retention policy, at start and on request', async () => {
    const { service, work } = await setup({ ledger: { retention: { max_age_days: 1 } } });
    const run = await service.submit({ backend: 'fake', prompt: 'hello', cwd: work });
    await follow(service, run.id);
    expect(await service.applyRetention()).toMatchObject({ runs: 0 });
    const old = await setup({ ledger: { retention: { max_bytes: 1 } } });
    const first = await old.service.submit({ backend: 'fake', prompt: 'hello', cwd: old.work });
    await follow(old.service, first.id);
    expect(await old.service.applyRetention()).toMatchObject({ runs: 1 });
    expect((await refusal(old.service.get(first.id))).code).toBe('RUN_NOT_FOUND');
  });

  it('negotiates the schema version as ACP does', () => {
    expect(negotiateRunSchema('v2')).toBe('v2');
    expect(negotiateRunSchema('v1')).toBe('v1');
    expect(negotiateRunSchema('v7')).toBe('v2');
    expect(negotiateRunSchema(undefined)).toBe('v2');
    expect(() => negotiateRunSchema('v0')).toThrow(/no common schema_version/);
    expect(() => negotiateRunSchema('latest')).toThrow(/look like v1/);
  });

  it('lists its backends with capabilities and health', async () => {
    const { service } = await setup();
    expect(await service.backends()).toEqual([{ name: 'fake', modes: ['stdio'], default_mode: 'stdio', capabilities: [expect.objectContaining({ backend: 'fake', followUps: true })], health: expect.objectContaining({ ok: true, version: '1.0.0' }), idle: { conversations: 0, processes: 0 } }]);
  });

  it('refuses a run on a backend that cannot ask before it acts: its policy could only be judged afterwards', async () => {
    const root = mkdtempSync(path.join(tmpdir(), 'sb-runs-'));
    cleanups.push(() => rmSync(root, { recursive: true, force: true }));
    const ledger = new RunLedger({ store: new SqliteLedgerStore(':memory:') });
    cleanups.push(() => ledger.close());
    const { service } = await RunService.start({ ledger, policy: parseGovernancePolicy({ sandbox: { roots: [root] } }), backends: [new FakeBackend({ name: 'blind', permissionRequests: false })], scope: root });
    cleanups.push(() => service.dispose());
    const refused = await refusal(service.submit({ backend: 'blind', prompt: 'hello', cwd: root }));
    expect(refused).toMatchObject({ code: 'FORBIDDEN', details: { backend: 'blind', rule: 'capabilities.permission_requests' } });
    expect(await service.list({})).toMatchObject({ runs: [] });
  });

  it("resumes an ended run's conversation in a new CLI by the id its CLI said, and refuses one that never said it", async () => {
    const { service, fake, work } = await setup();
    const first = await service.submit({ backend: 'fake', prompt: 'start a conversation', cwd: work, keep_alive: false });
    const said = await follow(service, first.id);
    expect(said.find((e) => e.type === 'notice')?.data).toEqual({ text: `fake's own conversation: fake-${first.id}`, agent_session: `fake-${first.id}` });
    // Its conversation is closed (no follow-up can take it), but the CLI's own resume can.
    expect(await refusal(service.submit({ backend: 'fake', prompt: 'hello', parent: first.id }))).toMatchObject({ code: 'INVALID_PARAMS' });
    const resumed = await service.submit({ backend: 'fake', prompt: 'hello again', resume: first.id });
    expect(resumed).toMatchObject({ parent: first.id, agent_session: `fake-${first.id}`, cwd: work, mode: 'stdio' });
    await follow(service, resumed.id);
    expect(await service.get(resumed.id)).toMatchObject({ status: 'completed' });
    expect(fake.resumed).toEqual([`fake-${first.id}`]);

    const quiet = await service.submit({ backend: 'fake', prompt: 'hello', cwd: work, keep_alive: false });
    await follow(service, quiet.id);
    expect(await refusal(service.submit({ backend: 'fake', prompt: 'go on', resume: quiet.id }))).toMatchObject({ code: 'INVALID_PARAMS' });
    expect(await refusal(service.submit({ backend: 'fake', prompt: 'go on', resume: first.id, node: 'n1' }))).toMatchObject({ code: 'INVALID_PARAMS', details: { node: 'n1' } });
  });

  it('closes the CLI a conversation kept open before it resumes it, so one process has it; and only the maker or the owner may resume', async () => {
    const { service, fake, work } = await setup();
    const first = await service.submit({ backend: 'fake', prompt: 'start a conversation', cwd: work, caller: 'pane-1' });
    await follow(service, first.id);
    await until(() => fake.open.has(first.id), 'the conversation to be kept open');
    expect(await refusal(service.submit({ backend: 'fake', prompt: 'mine now', resume: first.id, caller: 'pane-2' }))).toMatchObject({ code: 'FORBIDDEN' });
    expect(fake.open.has(first.id)).toBe(true);
    const resumed = await service.submit({ backend: 'fake', prompt: 'hello again', resume: first.id, caller: 'pane-1' });
    expect(fake.open.has(first.id)).toBe(false);
    await follow(service, resumed.id);
    expect(await service.get(resumed.id)).toMatchObject({ status: 'completed', parent: first.id });
  });
});
