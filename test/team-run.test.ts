/**
 * A team run end to end in real PTYs (issue 24): a planner CLI that speaks only marker lines (a
 * scripted program standing in for a model) drives a shell worker through the tools: it lists the
 * team, adds a task, has the worker write a file, waits for it, reads its output, tries to send
 * `git reset --hard` (held by the risk gate and denied by a person here: the worker never gets
 * it), drafts the report and completes the run. Every result reaches the planner once, when it is
 * idle, in order.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { AgentPane, BUILTIN_PROFILES, defineProfile, startAgent, type AgentProfile } from '../src/agents/index.js';
import { PaneRegistry } from '../src/pane/index.js';
import { TeamRun, type TeamHost } from '../src/orchestration/team-run.js';
import { parsePreset } from '../src/orchestration/presets/preset.js';
import { SHELL_AGENT_ENV, tempDir } from './support/shell.js';
import { busyWorkerProgram, PLANNER_PROFILE_DATA, plannerProgram, taskWorkerProgram, type PlannerCall } from './support/scripted-planner.js';
import { until } from './support/processes.js';

const registry = new PaneRegistry();
const scratch = tempDir('sb-team-run-');
const agents: AgentPane[] = [];

afterAll(async () => {
  for (const agent of agents) agent.dispose();
  await registry.close({ graceMs: 500 });
  scratch.cleanup();
});

/** The planner's calls, in order: each printed once the result of the one before is back. */
const CALLS: PlannerCall[] = [
  ['tabs.list', {}],
  ['tasks.add', { title: 'write made.txt' }],
  ['tabs.send', { tabId: 'executor-1', text: 'echo made-by-the-team > made.txt' }],
  ['tabs.wait', { tabId: 'executor-1', until: ['idle'], timeoutMs: 20_000 }],
  ['tabs.read', { tabId: 'executor-1', lines: 5 }],
  ['tabs.send', { tabId: 'executor-1', text: 'git reset --hard' }],
  ['run.report_draft', { text: '# made.txt\nThe executor wrote it.\n' }],
  ['run.complete', { summary: 'made.txt is written' }],
];

const plannerProfile = defineProfile(PLANNER_PROFILE_DATA, { builtin: false, resolveBinary: () => process.execPath });

/** The test's host: the scripted planner running `planner`, shell workers in `work`. */
function hostFor(planner: string, work: string, calls: Partial<Pick<TeamHost, 'callsVia'>> = {}): TeamHost {
  const shell = BUILTIN_PROFILES.find((p) => p.data.name === 'shell') as AgentProfile;
  return {
    async startAgent(spec, signal) {
      const scripted = spec.agent === 'scripted-planner' || spec.agent === 'busy-worker' || spec.agent === 'task-worker';
      const profile = scripted ? plannerProfile : shell;
      const program = spec.agent === 'busy-worker' ? busyWorkerProgram(scratch.dir) : spec.agent === 'task-worker' ? taskWorkerProgram(scratch.dir, spec.folder, 100) : planner;
      const started = await startAgent(registry, profile, { cwd: spec.folder, title: spec.title, signal, ...(scripted ? { args: [program] } : { env: SHELL_AGENT_ENV(work) }) });
      const agent = new AgentPane(started.pane, profile);
      agents.push(agent);
      return agent;
    },
    callsVia: calls.callsVia ?? (() => 'markers'),
    async closeAgent(agent) {
      await agent.pane.kill({ graceMs: 500 });
    },
  };
}

describe('a team run', () => {
  it('has the planner drive a worker through the tools, with the risk gate between them', async () => {
    const log = path.join(scratch.dir, 'results.jsonl');
    const work = path.join(scratch.dir, 'work');
    mkdirSync(work);
    const host = hostFor(plannerProgram(scratch.dir, log, CALLS), work);
    const preset = parsePreset({ name: 'scripted', planner: 'lead', roles: [{ name: 'lead', agent: 'scripted-planner' }, { name: 'executor', agent: 'shell' }] });
    const run = new TeamRun({ id: 'team-1', preset, goal: 'write made.txt', folder: work, home: scratch.dir, host });
    // A person at the board: denies what the gate holds.
    const held: string[] = [];
    run.onConfirmation((pending) => {
      held.push(`${pending.judgement.level}: ${pending.workerId}: ${pending.text}`);
      run.answerConfirmation(pending.id, 'deny', 'a person at the board');
    });
    await run.start();
    expect(run.state).toBe('running');
    await until(() => run.state === 'completed', 'the planner completed the run', 60_000);

    expect(readFileSync(path.join(work, 'made.txt'), 'utf8')).toBe('made-by-the-team\n');
    expect(held).toEqual(['high: executor-1: git reset --hard']);
    const results = readFileSync(log, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as { id?: string; ok?: boolean; result?: unknown; error?: { code: string } });
    // The brief, then one result per call but the last (the run ended with it), in order.
    expect(results.map((r) => r.id ?? 'brief')).toEqual(['brief', 'c1', 'c2', 'c3', 'c4', 'c5', 'c6', 'c7']);
    expect(results[1]).toMatchObject({ ok: true, result: { tabs: [{ id: 'executor-1', role: 'executor', agent: 'shell' }] } });
    expect(results[3]).toEqual({ id: 'c3', ok: true, result: { sent: true, risk: 'low' } });
    expect(results[4]).toMatchObject({ ok: true, result: { reached: true, tab: { state: 'idle' } } });
    expect(results[6]).toMatchObject({ id: 'c6', ok: false, error: { code: 'FORBIDDEN' } });
    // The worker never got the held text.
    const worker = agents.find((a) => a.pane.title.startsWith('executor-1')) as AgentPane;
    expect(worker.pane.readText(100).lines.join('\n')).not.toContain('git reset');
    expect(run.callLog().map((c) => `${c.id} ${c.method} ${c.outcome} ${c.delivered}`)).toEqual([
      'c1 tabs.list ok delivered',
      'c2 tasks.add ok delivered',
      'c3 tabs.send ok delivered',
      'c4 tabs.wait ok delivered',
      'c5 tabs.read ok delivered',
      'c6 tabs.send FORBIDDEN delivered',
      'c7 run.report_draft ok delivered',
      // The run ended on it: nothing is typed into the planner after the end.
      'c8 run.complete ok undelivered',
    ]);
    const report = run.report();
    expect(report).toContain('# Team run: write made.txt');
    expect(report).toContain('## Summary\n\nmade.txt is written');
    expect(report).toContain('| task-1 | write made.txt | — | open | — |');
    expect(report).toContain('The executor wrote it.');
    await run.end('the test', true);
    expect(run.state).toBe('completed');
    await until(() => agents.every((a) => !a.pane.alive), 'the agents closed');
    expect(existsSync(log)).toBe(true);
    run.dispose();
  }, 90_000);

  it('waits on a worker just sent text past the idle screen it showed before the text went in', async () => {
    const log = path.join(scratch.dir, 'settle.jsonl');
    const times = path.join(scratch.dir, 'settle-times.txt');
    const work = path.join(scratch.dir, 'work-settle');
    mkdirSync(work);
    const calls: PlannerCall[] = [
      // A shell takes the line at once (no Enter to confirm): the wait starts on its old idle screen.
      ['tabs.send', { tabId: 'executor-1', text: 'sleep 2; date +%s%3N > finished.txt' }],
      ['tabs.wait', { tabId: 'executor-1', until: ['idle'], timeoutMs: 30_000 }],
      ['run.complete', { summary: 'waited' }],
    ];
    const host = hostFor(plannerProgram(scratch.dir, log, calls, { timesTo: times }), work);
    const preset = parsePreset({ name: 'scripted', planner: 'lead', roles: [{ name: 'lead', agent: 'scripted-planner' }, { name: 'executor', agent: 'shell' }] });
    const run = new TeamRun({ id: 'team-settle', preset, goal: 'wait for the sleep', folder: work, home: scratch.dir, host });
    await run.start();
    await until(() => run.state === 'completed', 'the run completed', 60_000);
    const results = readFileSync(log, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as { id?: string });
    expect(results[2]).toMatchObject({ id: 'c2', ok: true, result: { reached: true, tab: { state: 'idle' } } });
    // The wait's result reached the planner after the worker's command finished, not before.
    const [, waitResultAt] = readFileSync(times, 'utf8').trim().split('\n').map(Number);
    expect(waitResultAt).toBeGreaterThanOrEqual(Number(readFileSync(path.join(work, 'finished.txt'), 'utf8')));
    await run.end('the test', true);
    run.dispose();
  }, 90_000);

  it('gives each worker of a worktree role a branch of its own, and the report each one\u2019s files and diff', async () => {
    const log = path.join(scratch.dir, 'worktrees.jsonl');
    const repo = path.join(scratch.dir, 'repo');
    mkdirSync(repo);
    const git = (...args: string[]): string => execFileSync('git', args, { cwd: repo, encoding: 'utf8', env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@example.com', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@example.com' } });
    git('init', '--quiet', '-b', 'main');
    writeFileSync(path.join(repo, 'README.md'), 'shared\n');
    git('add', '.');
    git('commit', '--quiet', '-m', 'first');
    const calls: PlannerCall[] = [
      ['tabs.send', { tabId: 'executor-1', text: 'echo one > one.txt && echo edited-by-one >> README.md' }],
      ['tabs.wait', { tabId: 'executor-1', until: ['idle'], timeoutMs: 30_000 }],
      ['tabs.send', { tabId: 'executor-2', text: 'echo two > two.txt' }],
      ['tabs.wait', { tabId: 'executor-2', until: ['idle'], timeoutMs: 30_000 }],
      ['run.complete', { summary: 'both wrote' }],
    ];
    const host = hostFor(plannerProgram(scratch.dir, log, calls), repo);
    const preset = parsePreset({ name: 'worktrees', planner: 'lead', roles: [{ name: 'lead', agent: 'scripted-planner' }, { name: 'executor', agent: 'shell', worktree: true, count: 3 }] });
    const run = new TeamRun({ id: 'team-wt', preset, goal: 'two workers, two branches', folder: repo, home: scratch.dir, worktrees: path.join(scratch.dir, 'worktrees'), host });
    await run.start();
    await until(() => run.state === 'completed', 'the run completed', 60_000);
    await until(() => existsSync(path.join(scratch.dir, 'worktrees', 'team-wt', 'executor-2', 'two.txt')), 'two.txt written');
    await run.refreshChanges();
    const [one, two] = run.board().workers;
    expect(one?.folder).toBe(path.join(scratch.dir, 'worktrees', 'team-wt', 'executor-1'));
    expect(one?.changes).toMatchObject({ branch: 'switchboard/team-wt/executor-1', files: [{ path: 'README.md', change: 'modified' }, { path: 'one.txt', change: 'added' }] });
    expect(two?.changes).toMatchObject({ branch: 'switchboard/team-wt/executor-2', files: [{ path: 'two.txt', change: 'added' }] });
    const report = run.report();
    expect(report).toContain('branch `switchboard/team-wt/executor-1`');
    expect(report).toContain('+edited-by-one');
    expect(report).toContain('- added `two.txt`');
    expect(report).toMatch(/### executor-2[\s\S]*\+two/);
    // Neither wrote over the other, nor into the repository's own tree.
    expect(readFileSync(path.join(repo, 'README.md'), 'utf8')).toBe('shared\n');
    expect(existsSync(path.join(one?.folder ?? '', 'two.txt'))).toBe(false);
    const branches = (): string[] => git('branch', '--list', 'switchboard/*').split('\n').map((b) => b.trim()).filter(Boolean);
    expect(branches()).toEqual(['+ switchboard/team-wt/executor-1', '+ switchboard/team-wt/executor-2', '+ switchboard/team-wt/executor-3']);
    // Ended with its workers closed: executor-3 changed nothing, so its worktree and branch go; the others stay.
    await run.end('the test', true);
    expect(existsSync(path.join(scratch.dir, 'worktrees', 'team-wt', 'executor-3'))).toBe(false);
    expect(branches()).toEqual(['+ switchboard/team-wt/executor-1', '+ switchboard/team-wt/executor-2']);
    expect(readFileSync(path.join(two?.folder ?? '', 'two.txt'), 'utf8')).toBe('two\n');
    run.dispose();
  }, 90_000);

  it("runs a role's check when a task is said done: failing, its output goes back to the worker and the task stays open", async () => {
    const log = path.join(scratch.dir, 'checks.jsonl');
    const work = path.join(scratch.dir, 'work-checks');
    mkdirSync(work);
    const calls: PlannerCall[] = [
      ['tasks.add', { title: 'implement' }],
      ['tasks.add', { title: 'document', dependsOn: ['task-1'] }],
      ['tasks.claim', { taskId: 'task-1', tabId: 'executor-1' }],
      ['tasks.complete', { taskId: 'task-1' }],
      ['tasks.list', {}],
      ['tasks.complete', { taskId: 'task-1' }],
      ['tasks.list', {}],
      ['run.complete', { summary: 'checked' }],
    ];
    const host = hostFor(plannerProgram(scratch.dir, log, calls), work);
    // Fails the first time (and leaves the file that makes the next pass).
    const check = 'test -f checked.txt || { echo "checked.txt is missing"; touch checked.txt; exit 3; }';
    const preset = parsePreset({ name: 'checks', planner: 'lead', roles: [{ name: 'lead', agent: 'scripted-planner' }, { name: 'executor', agent: 'task-worker', check }] });
    const run = new TeamRun({ id: 'team-check', preset, goal: 'checked work', folder: work, home: scratch.dir, host });
    const checks: unknown[] = [];
    run.onRecord((entry) => entry.kind === 'check' && checks.push(entry));
    await run.start();
    await until(() => run.state === 'completed', 'the run completed', 60_000);
    const results = readFileSync(log, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as { id?: string; result?: unknown });
    expect(results[4]).toMatchObject({ id: 'c4', ok: true, result: { task: { state: 'claimed', failedCheck: 'checked.txt is missing\n' }, check: { command: check, passed: false, exitCode: 3 } } });
    expect(results[5]).toMatchObject({ id: 'c5', ok: true, result: { ready: [] } });
    expect(results[6]).toMatchObject({ id: 'c6', ok: true, result: { task: { state: 'done', failedCheck: null }, check: { passed: true } } });
    expect(results[7]).toMatchObject({ id: 'c7', ok: true, result: { ready: ['task-2'] } });
    expect(checks).toEqual([expect.objectContaining({ worker: 'executor-1', task: 'task-1', passed: false, exitCode: 3 }), expect.objectContaining({ passed: true, exitCode: 0 })]);
    // The worker was told, with the output.
    const worker = agents.find((a) => a.pane.title.startsWith('executor-1') && a.pane.cwd === work) as AgentPane;
    await until(() => worker.pane.readText(40, { joinWrapped: true }).lines.join('\n').includes('finished The check for task-1 failed'), 'the worker told of the failed check');
    const report = run.report();
    expect(report).toContain('failed\n\n```\nchecked.txt is missing');
    expect(report).toContain('passed');
    expect(report).not.toContain('failed` failed');
    await run.end('the test', true);
    run.dispose();
  }, 90_000);

  it('shows a result the planner did not take as not confirmed, never types it again by itself, and resends it once a person says so', async () => {
    const log = path.join(scratch.dir, 'resend.jsonl');
    const work = path.join(scratch.dir, 'work-resend');
    mkdirSync(work);
    const calls: PlannerCall[] = [
      ['tasks.add', { title: 'hear this twice? no: once' }],
      ['run.report_draft', { text: 'the result of c1 arrived' }],
      ['run.complete', { summary: 'c1 resent by a person' }],
    ];
    // The planner drops every key of c1's result, as a CLI busy elsewhere would.
    const host = hostFor(plannerProgram(scratch.dir, log, calls, { deafTo: 'c1' }), work);
    const preset = parsePreset({ name: 'scripted', planner: 'lead', roles: [{ name: 'lead', agent: 'scripted-planner' }, { name: 'executor', agent: 'shell' }] });
    const run = new TeamRun({ id: 'team-resend', preset, goal: 'resend c1', folder: work, home: scratch.dir, host, deliveryTimeoutMs: 3_000 });
    await run.start();
    const c1 = (): string | undefined => run.callLog().find((c) => c.id === 'c1')?.delivered;
    await until(() => c1() === 'undelivered' || c1() === 'unconfirmed', 'c1 not confirmed at the planner', 60_000);
    // Nothing more happens by itself: the planner waits for c1's result, and it is not typed again.
    expect(() => run.resend('c9', 'a person')).toThrow(/no call c9/);
    expect(run.callLog().map((c) => c.id)).toEqual(['c1']);
    run.resend('c1', 'a person at the board');
    expect(() => run.resend('c1', 'a person at the board')).toThrow(/cannot be sent again: it is pending/);
    await until(() => run.state === 'completed', 'the run completed after the resend', 60_000);
    const results = readFileSync(log, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as { id?: string });
    // The planner heard c1's result once: the resend.
    expect(results.map((r) => r.id ?? 'brief')).toEqual(['brief', 'c1', 'c2']);
    // (Typed and taken; on a loaded machine the planner may show its next call before its work shows: unconfirmed.)
    expect(run.callLog().map((c) => `${c.id} ${c.delivered.replace('unconfirmed', 'delivered')}`)).toEqual(['c1 delivered', 'c2 delivered', 'c3 undelivered']);
    expect(() => run.resend('c1', 'a person')).toThrow(/the team run has ended/);
    await run.end('the test', true);
    run.dispose();
  }, 90_000);

  it('marks a worker busy on an unchanged screen stuck, nudges it within the cap, and restarts it when a person says so', async () => {
    const log = path.join(scratch.dir, 'stuck.jsonl');
    const work = path.join(scratch.dir, 'work-stuck');
    mkdirSync(work);
    const calls: PlannerCall[] = [
      ['tabs.send', { tabId: 'executor-1', text: 'work on it' }],
      ['tabs.wait', { tabId: 'executor-1', until: ['stuck'], timeoutMs: 60_000 }],
      ['tabs.wait', { tabId: 'executor-1', until: ['idle'], timeoutMs: 60_000 }],
      ['run.complete', { summary: 'the executor was restarted' }],
    ];
    const host = hostFor(plannerProgram(scratch.dir, log, calls), work);
    const preset = parsePreset({
      name: 'stuck',
      planner: 'lead',
      roles: [{ name: 'lead', agent: 'scripted-planner' }, { name: 'executor', agent: 'busy-worker', stuck_after_s: 10 }],
      stuck: { nudge: 'status please', max_nudges: 1, max_restarts: 1 },
    });
    const run = new TeamRun({ id: 'team-stuck', preset, goal: 'get stuck', folder: work, home: scratch.dir, host });
    const entries: string[] = [];
    run.onRecord((e) => entries.push(e.kind === 'stuck' || e.kind === 'nudge' || e.kind === 'restart' || e.kind === 'moving' ? `${e.kind} ${e.worker}` : e.kind));
    await run.start();
    // The planner's wait for `stuck` comes back once the worker has sat on its unchanged screen past the limit.
    const heard = (): { id?: string; result?: unknown }[] => (existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as { id?: string; result?: unknown }) : []);
    await until(() => heard().some((r) => r.id === 'c2'), 'the planner heard the worker is stuck', 60_000);
    expect(heard().find((r) => r.id === 'c2')).toMatchObject({ result: { reached: true, tab: { id: 'executor-1', state: 'stuck' } } });
    // Stuck though its spinner and seconds never stopped; nudged once (the cap): the worker shows the nudge typed while it works.
    const first = agents.find((a) => a.pane.id === run.board().workers[0]?.paneId) as AgentPane;
    await until(() => first.pane.screenLines().join('\n').includes('typed: status please'), 'the nudge typed into the worker', 20_000);
    expect(entries.filter((e) => e.startsWith('nudge'))).toEqual(['nudge executor-1']);
    // The nudge moved its screen; stuck again after the limit, and not nudged twice (the cap).
    await until(() => entries.includes('moving executor-1'), 'the worker moving after the nudge', 20_000);
    await until(() => entries.filter((e) => e === 'stuck executor-1').length === 2, 'the worker stuck again', 30_000);
    expect(run.board().workers[0]?.state).toBe('stuck');
    expect(entries.filter((e) => e.startsWith('nudge'))).toEqual(['nudge executor-1']);

    // A person restarts it: a new pane, idle; the planner's wait for idle ends and it completes the run.
    await expect(run.restartWorker('nobody-1', 'a person')).rejects.toThrow(/no worker nobody-1/);
    const restarted = await run.restartWorker('executor-1', 'a person at the board');
    expect(first.pane.alive).toBe(false);
    expect(restarted).toMatchObject({ id: 'executor-1', role: 'executor', agent: 'busy-worker' });
    await until(() => run.state === 'completed', 'the run completed after the restart', 60_000);
    // The planner's wait for idle, begun on the old pane, went on across the restart and ended on the new one.
    await until(() => heard().some((r) => r.id === 'c3'), 'the planner heard the restarted worker is idle', 20_000);
    expect(heard().find((r) => r.id === 'c3')).toMatchObject({ result: { reached: true, tab: { id: 'executor-1', state: 'idle' } } });
    expect(entries).toContain('restart executor-1');
    await expect(run.restartWorker('executor-1', 'a person')).rejects.toThrow(/the team run has ended/);
    await run.end('the test', true);
    run.dispose();
  }, 120_000);

  it('briefs a planner that calls over MCP only once its MCP server has its client, and by marker lines if that never comes', async () => {
    const work = path.join(scratch.dir, 'work-mcp');
    mkdirSync(work);
    const preset = parsePreset({ name: 'scripted', planner: 'lead', roles: [{ name: 'lead', agent: 'scripted-planner' }, { name: 'executor', agent: 'shell' }] });
    for (const ready of [true, false]) {
      let release: (ready: boolean) => void = () => undefined;
      const waitedFor: string[] = [];
      const mcpReady = (paneId: string): Promise<boolean> => {
        waitedFor.push(paneId);
        return new Promise<boolean>((resolve) => (release = resolve));
      };
      const log = path.join(scratch.dir, `mcp-${String(ready)}.jsonl`);
      const host = hostFor(plannerProgram(scratch.dir, log, []), work, { callsVia: () => 'mcp' });
      const run = new TeamRun({ id: `team-mcp-${String(ready)}`, preset, goal: 'wait for the tools', folder: work, home: scratch.dir, host, mcpReady });
      const starting = run.start();
      await until(() => waitedFor.length === 1, 'the run waiting for the planner’s MCP server');
      // Not briefed, not running, while the tools are not there.
      expect(run.state).toBe('starting');
      const planner = agents.find((a) => a.pane.id === waitedFor[0]) as AgentPane;
      expect(planner.pane.readText(50).lines.join('\n')).not.toContain('GOAL');
      release(ready);
      await starting;
      expect(run.state).toBe('running');
      await until(() => existsSync(log), 'the brief typed in');
      expect(JSON.parse(readFileSync(log, 'utf8'))).toMatchObject({ via: ready ? 'mcp' : 'markers' });
      await run.end('the test', true);
      run.dispose();
    }
  }, 60_000);
});
