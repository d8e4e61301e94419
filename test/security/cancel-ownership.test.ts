/**
 * Issue 21, item 9: cancels did not check ownership. A pane's token (read, ask) cancelled the
 * owner's ask, and a pane granted `create` cancelled the owner's run. Only the caller that made a
 * run or an ask, or the owner, may cancel it: who made it is recorded when it is made (the pane of
 * the token, or the owner), and anyone else is refused with FORBIDDEN saying why.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type SwitchboardClient } from '../../src/client/index.js';
import { FakeBackend } from '../../src/runs/backends/fake-backend.js';
import { findProcessesByEnv } from '../../src/platform/index.js';
import { startTestDaemon } from '../support/daemon.js';
import { cleanEnv } from '../support/cli.js';
import { tempDir } from '../support/shell.js';
import { agentHeldAtApproval } from '../support/held-agent.js';
import { until } from '../support/processes.js';

const customAgent = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'custom-agent');
const scratch = tempDir('sb-cancel-owner-');
const home = path.join(scratch.dir, 'home');
const work = path.join(scratch.dir, 'work');
let started: Awaited<ReturnType<typeof startTestDaemon>> | undefined;
const clients: SwitchboardClient[] = [];

beforeAll(async () => {
  mkdirSync(work, { recursive: true });
  mkdirSync(home, { recursive: true, mode: 0o700 });
  writeFileSync(path.join(home, 'policy.yaml'), `sandbox:\n  roots: [${JSON.stringify(scratch.dir)}]\nlimits:\n  concurrency: 8\n`);
  started = await startTestDaemon({
    home,
    agentsFile: path.join(customAgent, 'agents.yaml'),
    env: { ...cleanEnv(), SWITCHBOARD_AGENT_PATH: customAgent },
    bridge: { backends: [new FakeBackend()] },
  });
});

afterAll(async () => {
  for (const c of clients) c.close();
  await started?.stop();
  scratch.cleanup();
});

function daemon(): NonNullable<typeof started>['daemon'] {
  if (!started) throw new Error('not started');
  return started.daemon;
}

/** A client that presents `token` (the owner's when none is given). */
async function client(token?: string): Promise<SwitchboardClient> {
  const c = await connect(token === undefined ? { home, env: cleanEnv() } : { socketPath: daemon().socketPath as string, token, env: {} });
  clients.push(c);
  return c;
}

/** The error a call ends with (its stable code and message), or 'ok'. */
async function outcome(call: Promise<unknown>): Promise<{ code: string; message: string } | 'ok'> {
  return call.then(
    () => 'ok' as const,
    (err: unknown) => ({ code: String((err as { code?: unknown }).code), message: (err as Error).message }),
  );
}

describe.runIf(process.platform !== 'win32')('cancel ownership', () => {
  it("refuses a pane's token cancelling the owner's run; its own run, and the owner, may", { timeout: 60_000 }, async () => {
    const owner = await client();
    const { pane_id: paneId } = await owner.createPane({ argv: ['sleep', '600'], cwd: work });
    const paneToken = daemon().tokens.issue(paneId, ['read', 'create']);
    const pane = await client(paneToken);

    const { run: ownersRun } = await owner.runSubmit({ backend: 'fake', prompt: 'silent', cwd: work });
    const refused = await outcome(pane.runCancel(ownersRun.id));
    expect(refused).toMatchObject({ code: 'FORBIDDEN' });
    expect(refused !== 'ok' && refused.message).toMatch(/owner/);
    expect((await owner.runGet(ownersRun.id)).run.status).not.toBe('cancelled');

    // Its own run: yes. The owner may cancel any run.
    const { run: panesRun } = await pane.runSubmit({ backend: 'fake', prompt: 'silent', cwd: work });
    expect((await pane.runCancel(panesRun.id)).run.status).toBe('cancelled');
    const { run: another } = await pane.runSubmit({ backend: 'fake', prompt: 'silent', cwd: work });
    expect((await owner.runCancel(another.id)).run.status).toBe('cancelled');
    // Another pane's token, also granted create, may not cancel the first pane's run.
    const { pane_id: otherPane } = await owner.createPane({ argv: ['sleep', '600'], cwd: work });
    const other = await client(daemon().tokens.issue(otherPane, ['read', 'create']));
    const { run: third } = await pane.runSubmit({ backend: 'fake', prompt: 'silent', cwd: work });
    expect(await outcome(other.runCancel(third.id))).toMatchObject({ code: 'FORBIDDEN' });
    expect((await owner.runCancel(third.id)).run.status).toBe('cancelled');
    expect((await owner.runCancel(ownersRun.id)).run.status).toBe('cancelled');
    await owner.kill(paneId);
    await owner.kill(otherPane);
  });

  it('cancel_run ends a run of the run service by its run_id, under the same rule (one cancel for every run)', { timeout: 60_000 }, async () => {
    const owner = await client();
    const { pane_id: paneId } = await owner.createPane({ argv: ['sleep', '600'], cwd: work });
    const pane = await client(daemon().tokens.issue(paneId, ['read', 'create']));
    const { run } = await owner.runSubmit({ backend: 'fake', prompt: 'silent', cwd: work });
    expect(await outcome(pane.request('cancel_run', { run_id: run.id }))).toMatchObject({ code: 'FORBIDDEN' });
    expect(await owner.request('cancel_run', { run_id: run.id })).toEqual({ cancelled: true });
    expect((await owner.runGet(run.id)).run).toMatchObject({ status: 'cancelled', reason: 'cancelled_by_user' });
    // Already ended: nothing to cancel.
    expect(await owner.request('cancel_run', { run_id: run.id })).toEqual({ cancelled: false });
    // One name, not both, not neither.
    expect(await outcome(owner.request('cancel_run', { run_id: run.id, session_id: run.id }))).toMatchObject({ code: 'INVALID_PARAMS' });
    expect(await outcome(owner.request('cancel_run', {}))).toMatchObject({ code: 'INVALID_PARAMS' });
    await owner.kill(paneId);
  });

  it("refuses a pane's token cancelling the owner's ask; the owner may", { timeout: 90_000 }, async () => {
    const owner = await client();
    const target = await agentHeldAtApproval(owner, work);
    const { pane_id: paneId } = await owner.createPane({ argv: ['sleep', '600'], cwd: work });
    const pane = await client(daemon().tokens.issue(paneId, ['read', 'ask']));

    const ask = await owner.ask(target, 'what is in this folder?', { wait: false });
    expect(ask.status).toBe('queued');
    const refused = await outcome(pane.askCancel(ask.ask_id));
    expect(refused).toMatchObject({ code: 'FORBIDDEN' });
    expect((await owner.askGet(ask.ask_id)).status).toBe('queued');
    expect((await owner.askCancel(ask.ask_id)).status).toBe('cancelled');

    // The pane's own ask: it may cancel it.
    const own = await pane.ask(target, 'and now?', { wait: false });
    expect((await pane.askCancel(own.ask_id)).status).toBe('cancelled');
    await until(async () => (await owner.askGet(own.ask_id)).status === 'cancelled', 'the pane cancelled its own ask');
    await owner.kill(paneId);
    await owner.kill(target);
  });
});

describe.runIf(process.platform !== 'win32')('cancel ownership of structured runs', () => {
  const runScratch = tempDir('sb-cancel-run-');
  let runDaemon: Awaited<ReturnType<typeof startTestDaemon>> | undefined;
  beforeAll(async () => {
    // A headless "agent" that only waits: a structured run to cancel, without an agent CLI.
    const agents = path.join(runScratch.dir, 'agents.yaml');
    writeFileSync(
      agents,
      [
        'agents:',
        '  - name: waiter',
        '    binary: { names: [sh] }',
        '    headless_args: ["-c", "sleep 600", "waiter"]',
        '    screens: [{ versions: "*", idle: [{ pattern: "^waiting$" }] }]',
        '    approval_keys: { allow_once: [y], deny: [n] }',
        // A CLI that is not installed: its run cannot start.
        '  - name: ghost',
        '    binary: { names: [sb-no-such-cli] }',
        '    headless_args: ["{prompt}"]',
        '    screens: [{ versions: "*", idle: [{ pattern: "^waiting$" }] }]',
        '    approval_keys: { allow_once: [y], deny: [n] }',
        '',
      ].join('\n'),
    );
    // run_agent is a face of the run service: the bridge is on (by default) for it.
    runDaemon = await startTestDaemon({ agentsFile: agents, env: cleanEnv() });
  });
  afterAll(async () => {
    await runDaemon?.stop();
    runScratch.cleanup();
  });

  it.runIf(process.platform === 'linux')("refuses a pane's token cancelling the owner's structured run (cancel_run); the owner may", async () => {
    const d = runDaemon?.daemon;
    if (!d) throw new Error('not started');
    const owner = await connect({ socketPath: d.socketPath as string, token: d.token, env: {} });
    const pane = await connect({ socketPath: d.socketPath as string, token: d.tokens.issue('p-runner', ['read', 'create']), env: {} });
    clients.push(owner, pane);
    /** Resolves once the run's program runs (a cancel before its exec is another test's business). */
    const running = (runId: string): Promise<void> =>
      until(() => findProcessesByEnv('SWITCHBOARD_RUN_ID', runId).some((pid) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').startsWith('sleep')), `run ${runId} to start`);
    const { session_id: ownersRun } = await owner.request('run_agent', { agent: 'waiter', prompt: 'wait', cwd: runScratch.dir });
    await running(ownersRun);
    const refused = await outcome(pane.request('cancel_run', { session_id: ownersRun }));
    expect(refused).toMatchObject({ code: 'FORBIDDEN' });
    expect(refused !== 'ok' && refused.message).toBe(`forbidden: run ${ownersRun} was made by the owner; only the caller that made a run, or the owner, may cancel it (the token of pane p-runner did not)`);
    // Its own run it may cancel; the owner may cancel any.
    const { session_id: panesRun } = await pane.request('run_agent', { agent: 'waiter', prompt: 'wait', cwd: runScratch.dir });
    await running(panesRun);
    expect(await pane.request('cancel_run', { session_id: panesRun })).toEqual({ cancelled: true });
    expect(await owner.request('cancel_run', { session_id: ownersRun })).toEqual({ cancelled: true });
  });

  it.runIf(process.platform === 'linux')('answers run_agent of a CLI that cannot start with SPAWN_FAILED, its run recorded failed', async () => {
    const d = runDaemon?.daemon;
    if (!d) throw new Error('not started');
    const owner = await connect({ socketPath: d.socketPath as string, token: d.token, env: {} });
    clients.push(owner);
    const refused = await outcome(owner.request('run_agent', { agent: 'ghost', prompt: 'hello', cwd: runScratch.dir }));
    expect(refused).toMatchObject({ code: 'SPAWN_FAILED' });
    const failed = (await owner.runList({ backend: 'ghost' })).runs;
    expect(failed).toEqual([expect.objectContaining({ status: 'failed', reason: 'spawn_failed' })]);
  });
});
