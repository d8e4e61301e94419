/**
 * A team run through the daemon (issue 24 items 2, 5, 6 and 12): started over JSON-RPC from an
 * inline preset, its agents in the daemon's panes, its board watched live by version from two
 * clients, the risk gate's held text denied from the second one, a person's own send judged the
 * same way, the report read, and the run ended with its panes closed. Bad input answers clear
 * codes and changes nothing.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { connect, type SwitchboardClient } from '../src/index.js';
import type { TeamBoardInfo } from '../src/protocol/methods.js';
import { useTestDaemon } from './support/daemon.js';
import { CLI, cleanEnv, runCli } from './support/cli.js';
import { SHELL_AGENT_ENV, tempDir } from './support/shell.js';
import { mcpPlannerProgram, PLANNER_PROFILE_DATA, plannerProgram, type PlannerCall } from './support/scripted-planner.js';
import { apiClient } from './support/sse.js';
import { ModelServer } from '../src/model-server/index.js';
import { until } from './support/processes.js';
import { boardUntil } from './support/team-board.js';

const scratch = tempDir('sb-team-daemon-');
const work = path.join(scratch.dir, 'work');
mkdirSync(work);
const log = path.join(scratch.dir, 'results.jsonl');

const CALLS: PlannerCall[] = [
  ['tasks.add', { title: 'write made.txt' }],
  ['tabs.send', { tabId: 'executor-1', text: 'echo made-by-the-team > made.txt' }],
  ['tabs.wait', { tabId: 'executor-1', until: ['idle'], timeoutMs: 20_000 }],
  ['tabs.send', { tabId: 'executor-1', text: 'git reset --hard' }],
  ['run.report_draft', { text: '# made.txt\nThe executor wrote it.\n' }],
  ['run.complete', { summary: 'made.txt is written' }],
];

/** The MCP planner's calls: by their MCP names, as a CLI's model would make them. */
const MCP_CALLS: PlannerCall[] = [
  ['tasks_add', { title: 'write mcp.txt' }],
  ['tabs_send', { tabId: 'executor-1', text: 'echo made-over-mcp > mcp.txt' }],
  ['tabs_wait', { tabId: 'executor-1', until: ['idle'], timeoutMs: 20_000 }],
  ['tabs_read', { tabId: 'executor-1', lines: 5 }],
  ['tabs_send', { tabId: 'nobody-1', text: 'echo not in this run' }],
  ['tabs_send', { tabId: 'executor-1', text: 'git clean -fdx' }],
  ['run_report_draft', { text: '# mcp.txt\nWritten over MCP.\n' }],
  ['run_complete', { summary: 'mcp.txt is written' }],
];
const mcpLog = path.join(scratch.dir, 'mcp-results.jsonl');

/** A planner that has an aider worker run a shell command: the worker's role policy answers its prompt. */
const AIDER_CALLS: PlannerCall[] = [
  ['tabs.send', { tabId: 'executor-1', text: 'run the shell command please' }],
  ['tabs.wait', { tabId: 'executor-1', until: ['idle'], timeoutMs: 30_000 }],
  ['run.complete', { summary: 'aider ran it' }],
];
const aiderLog = path.join(scratch.dir, 'aider-results.jsonl');
const SDK_ROOT = path.join(path.dirname(CLI), '..', '..', 'node_modules', '@modelcontextprotocol', 'sdk');

// The planners are user profiles of the daemon's: node running a scripted planner, one that prints
// marker lines and one that calls the tools over MCP.
const agentsFile = path.join(scratch.dir, 'agents.json');
writeFileSync(
  agentsFile,
  JSON.stringify({
    agents: [
      { ...PLANNER_PROFILE_DATA, binary: { names: ['scripted-planner'], env: 'SCRIPTED_PLANNER_BIN' }, interactive_args: [plannerProgram(scratch.dir, log, CALLS)] },
      { ...PLANNER_PROFILE_DATA, name: 'aider-planner', binary: { names: ['aider-planner'], env: 'SCRIPTED_PLANNER_BIN' }, interactive_args: [plannerProgram(scratch.dir, aiderLog, AIDER_CALLS)] },
      { ...PLANNER_PROFILE_DATA, name: 'mcp-planner', binary: { names: ['mcp-planner'], env: 'SCRIPTED_PLANNER_BIN' }, interactive_args: [mcpPlannerProgram(scratch.dir, mcpLog, MCP_CALLS, CLI, SDK_ROOT)] },
    ],
  }),
);

// The aider stand-in (a node program) is the one agent CLI this project can run without installing one.
const AIDER_DIR = path.join(path.dirname(CLI), '..', '..', 'test', 'fixtures', 'aider-standin');
const t = useTestDaemon({ agentsFile, checkResults: true, dashboard: { port: 0 }, env: { ...process.env, SCRIPTED_PLANNER_BIN: process.execPath, SWITCHBOARD_AGENT_PATH: AIDER_DIR, ...SHELL_AGENT_ENV(work) } });
const clients: SwitchboardClient[] = [];

afterAll(() => {
  for (const client of clients) client.close();
  scratch.cleanup();
});

async function client(): Promise<SwitchboardClient> {
  const c = await connect({ home: t.home, env: cleanEnv() });
  clients.push(c);
  return c;
}


const PRESET = { name: 'scripted', planner: 'lead', roles: [{ name: 'lead', agent: 'scripted-planner' }, { name: 'executor', agent: 'shell' }] };

describe('a team run in the daemon', () => {
  it('runs from a preset and a goal, with a live board on two clients and the risk gate answered from the second', async () => {
    const owner = await client();
    const second = await client();
    const started = await owner.teamRunStart({ preset: PRESET, goal: 'write made.txt', folder: work });
    expect(started).toMatchObject({ goal: 'write made.txt', preset: 'scripted', state: 'starting', planner: { role: 'lead', agent: 'scripted-planner' } });
    const runId = started.run_id;
    expect((await second.teamRunList()).runs.map((r) => r.run_id)).toContain(runId);

    // The second board sees the held text and denies it; the first sees the run complete.
    const held = await boardUntil(second, runId, (b) => b.confirmations.length > 0, 'a text held by the risk gate');
    expect(held.confirmations).toEqual([expect.objectContaining({ worker_id: 'executor-1', text: 'git reset --hard', judgement: expect.objectContaining({ level: 'high' }) })]);
    await second.teamRunAnswer(runId, held.confirmations[0]?.id ?? '', 'deny');
    await expect(second.teamRunAnswer(runId, held.confirmations[0]?.id ?? '', 'allow')).rejects.toMatchObject({ code: 'CONFLICT' });
    const done = await boardUntil(owner, runId, (b) => b.state === 'completed', 'the run completed');

    expect(readFileSync(path.join(work, 'made.txt'), 'utf8')).toBe('made-by-the-team\n');
    expect(done.why).toBe('completed by the planner');
    expect(done.summary).toBe('made.txt is written');
    expect(done.tasks).toEqual([{ id: 'task-1', title: 'write made.txt', owner: null, state: 'open', depends_on: [], failed_check: null }]);
    expect(done.next_step).toBe('task-1: write made.txt');
    expect(done.calls.map((c) => `${c.method} ${c.outcome}`)).toEqual(['tasks.add ok', 'tabs.send ok', 'tabs.wait ok', 'tabs.send FORBIDDEN', 'run.report_draft ok', 'run.complete ok']);
    const [worker] = done.workers;
    expect(worker).toMatchObject({ id: 'executor-1', role: 'executor', agent: 'shell', folder: work });
    // The worker's pane is a pane of the daemon like any other, titled with its role.
    const panes = (await owner.list()).panes;
    expect(panes.find((p) => p.pane_id === worker?.pane_id)?.title).toBe('executor-1 (shell)');
    expect(panes.find((p) => p.pane_id === done.planner.pane_id)?.title).toBe('lead (planner)');
    const results = readFileSync(log, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as { id?: string; ok?: boolean; error?: { code: string } });
    expect(results[4]).toMatchObject({ ok: false, error: { code: 'FORBIDDEN' } });

    // A person's own text is judged as the planner's: high waits for `confirmed`.
    const risky = await second.teamRunSend(runId, 'rm -rf build', { workerId: 'executor-1' });
    expect(risky).toMatchObject({ sent: [], held: true, judgement: { level: 'high' } });
    const broadcast = await second.teamRunSend(runId, 'echo broadcast-from-a-person > person.txt');
    expect(broadcast).toMatchObject({ sent: ['executor-1'], held: false, judgement: { level: 'low' } });
    await boardUntil(owner, runId, () => existsSync(path.join(work, 'person.txt')), 'the broadcast written');

    const report = (await owner.teamRunReport(runId)).markdown;
    expect(report).toContain('# Team run: write made.txt');
    expect(report).toContain('The executor wrote it.');

    const ended = await owner.teamRunEnd(runId, { closeAgents: true });
    expect(ended.state).toBe('completed');
    const left = (await owner.list()).panes.map((p) => p.pane_id);
    expect(left).not.toContain(worker?.pane_id);
    expect(left).not.toContain(done.planner.pane_id);
  });

  it('is run, watched, steered and ended from the command line', async () => {
    rmSync(log, { force: true });
    const sb = (...args: string[]) => runCli(t.home, args);
    const started = await sb('team', 'run', '--preset', 'scripted', '--folder', work, 'write made.txt');
    // A preset by name: this one is saved first, as a person would.
    expect(started.code).toBe(1);
    expect(started.stderr).toMatch(/no team preset is named 'scripted'/);
    const presetFile = path.join(scratch.dir, 'scripted.json');
    writeFileSync(presetFile, JSON.stringify(PRESET));
    expect((await sb('team', 'preset', 'save', presetFile)).code).toBe(0);
    // (--markers: its scripted planner calls by marker lines anyway; the flag is taken.)
    const run = await sb('team', 'run', '--preset', 'scripted', '--folder', work, '--markers', 'write made.txt');
    expect(run.code, run.stderr).toBe(0);
    const runId = /^(team-[0-9a-f]{8}): scripted on "write made.txt"/.exec(run.stdout)?.[1] ?? '';
    expect(runId).not.toBe('');
    expect((await sb('team', 'runs')).stdout).toMatch(new RegExp(`${runId}\\s+(starting|running|paused|completed)\\s+scripted`));

    // The held text, answered from the command line; the board followed to the run's end.
    const c = await client();
    const held = await boardUntil(c, runId, (b) => b.confirmations.length > 0, 'a text held by the risk gate');
    const heldId = held.confirmations[0]?.id ?? '';
    const once = await sb('team', 'board', runId, '--once');
    expect(once.stdout).toContain(`HELD ${heldId} for executor-1: git reset --hard`);
    expect(once.stdout).toContain(`answer: switchboard team answer ${runId} ${heldId} allow|deny`);
    expect((await sb('team', 'answer', runId, heldId, 'deny')).stdout).toBe(`${heldId}: denied\n`);
    // Not a terminal: the board prints each change until the run ends, then exits 0.
    const followed = await sb('team', 'board', runId);
    expect(followed.code, followed.stderr).toBe(0);
    expect(followed.stdout).toMatch(/completed \(completed by the planner\)/);
    expect(followed.stdout).toContain('summary: made.txt is written');

    const risky = await sb('team', 'send', runId, '--worker', 'executor-1', 'rm -rf build');
    expect(risky.code).toBe(1);
    expect(risky.stderr).toMatch(/held, nothing sent: high risk .*--confirmed/);
    expect((await sb('team', 'mark', runId, 'executor-1', 'blocked')).stdout).toBe('executor-1: stuck\n');
    expect((await sb('team', 'report', runId)).stdout).toContain('# Team run: write made.txt');
    // The run's record from the ledger, a line an entry, with who did what.
    const record = (await sb('team', 'record', runId)).stdout;
    expect(record).toMatch(/^ +1 +\S+ +(worker|state) +/m);
    expect(record).toMatch(/ call +planner tabs\.send \{"tabId":"executor-1","text":"git reset --hard"\} via markers: FORBIDDEN/);
    expect(record).toMatch(new RegExp(` answer +${heldId}: deny by the owner`));
    expect(record).toMatch(/ send +the owner to executor-1 \(high, held\): rm -rf build/);
    expect(record).toMatch(/ mark +executor-1 marked stuck by the owner/);
    expect(record).toMatch(/ state +running -> completed: completed by the planner/);
    const json = (await sb('team', 'record', runId, '--json')).stdout.trim().split('\n').map((line) => JSON.parse(line) as { seq: number });
    expect(json.map((e) => e.seq)).toEqual(json.map((_, i) => i + 1));
    expect((await sb('team', 'pause', runId)).stderr).toMatch(/cannot pause the run: the team run has ended \(completed\)/);
    expect((await sb('team', 'end', runId, '--close-agents')).stdout).toBe(`${runId}: completed\n`);
    for (const bad of [['team', 'run', 'no preset'], ['team', 'answer', runId, 'x', 'maybe'], ['team', 'mark', runId, 'executor-1', 'sideways'], ['team', 'board'], ['team', 'fly']]) {
      expect((await sb(...bad)).code, bad.join(' ')).toBe(64);
    }
  });

  it('is run and answered over HTTP as over JSON-RPC', async () => {
    rmSync(log, { force: true });
    const api = apiClient(`http://127.0.0.1:${t.daemon.dashboard?.port ?? 0}`, t.daemon.token);
    const started = await api.call('POST', '/api/v2/teams', { preset: PRESET, goal: 'write made.txt', folder: work });
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    const runId = (started.body as TeamBoardInfo).run_id;
    let board = started.body as TeamBoardInfo;
    while (board.confirmations.length === 0) {
      const watched = await api.call('GET', `/api/v2/teams/${runId}?after_version=${board.version}&wait_ms=5000`);
      expect(watched.status).toBe(200);
      board = watched.body as TeamBoardInfo;
    }
    const heldId = board.confirmations[0]?.id ?? '';
    expect(await api.call('POST', `/api/v2/teams/${runId}/confirmations/${heldId}`, { decision: 'maybe' })).toMatchObject({ status: 400, body: { error: { code: 'INVALID_PARAMS' } } });
    expect(await api.call('POST', `/api/v2/teams/${runId}/confirmations/${heldId}`, { decision: 'deny' })).toMatchObject({ status: 200, body: { answered: true } });
    expect(await api.call('POST', `/api/v2/teams/${runId}/confirmations/${heldId}`, { decision: 'deny' })).toMatchObject({ status: 409, body: { error: { code: 'CONFLICT' } } });
    while (board.state !== 'completed') board = (await api.call('GET', `/api/v2/teams/${runId}?after_version=${board.version}&wait_ms=5000`)).body as TeamBoardInfo;
    expect(board.calls.map((c) => `${c.method} ${c.outcome}`)).toContain('tabs.send FORBIDDEN');
    expect(await api.call('POST', `/api/v2/teams/${runId}/send`, { text: 'rm -rf build' })).toMatchObject({ status: 200, body: { sent: [], held: true } });
    expect(await api.call('POST', `/api/v2/teams/${runId}/workers/executor-1/mark`, { mark: 'completed' })).toMatchObject({ status: 200, body: { worker_id: 'executor-1', state: 'completed' } });
    expect(await api.call('POST', `/api/v2/teams/${runId}/pause`)).toMatchObject({ status: 409, body: { error: { code: 'CONFLICT' } } });
    expect(await api.call('POST', `/api/v2/teams/${runId}/calls/c1/resend`)).toMatchObject({ status: 409, body: { error: { code: 'CONFLICT' } } });
    expect(((await api.call('GET', `/api/v2/teams/${runId}/report`)).body as { markdown: string }).markdown).toContain('# Team run: write made.txt');
    expect(((await api.call('GET', '/api/v2/teams')).body as { runs: { run_id: string }[] }).runs.map((r) => r.run_id)).toContain(runId);
    // The record, paged as JSON-RPC pages it.
    expect(await api.call('GET', `/api/v2/teams/${runId}/events?after_seq=1&limit=2`)).toMatchObject({ status: 200, body: { run_id: runId, entries: [{ seq: 2 }, { seq: 3 }], next_after: 3 } });
    const whole = (await api.call('GET', `/api/v2/teams/${runId}/events?limit=500`)).body as { entries: { kind: string; decision?: string }[]; next_after: number | null };
    expect(whole.next_after).toBeNull();
    expect(whole.entries.filter((e) => e.kind === 'answer').map((e) => e.decision)).toEqual(['deny']);
    expect(await api.call('GET', `/api/v2/teams/${runId}/events?limit=501`)).toMatchObject({ status: 400, body: { error: { code: 'INVALID_PARAMS' } } });
    expect(await api.call('GET', `/api/v2/teams/${runId}/events?colour=blue`)).toMatchObject({ status: 400, body: { error: { code: 'INVALID_PARAMS' } } });
    expect(await api.call('GET', '/api/v2/teams/team-ffffffff')).toMatchObject({ status: 404, body: { error: { code: 'RUN_NOT_FOUND' } } });
    expect(await api.call('GET', '/api/v2/teams/nope')).toMatchObject({ status: 400, body: { error: { code: 'INVALID_PARAMS' } } });
    expect(await api.call('POST', '/api/v2/teams', { preset: PRESET, goal: 'x', folder: work, colour: 'blue' })).toMatchObject({ status: 400, body: { error: { code: 'INVALID_PARAMS' } } });
    expect(await api.call('POST', `/api/v2/teams/${runId}/end`, { close_agents: true })).toMatchObject({ status: 200, body: { run_id: runId, state: 'completed' } });
  });

  it('is steered only by its starter or the owner: another pane’s token, granted every scope, is FORBIDDEN', async () => {
    rmSync(log, { force: true });
    const owner = await client();
    const paneWith = async (): Promise<{ paneId: string; c: SwitchboardClient }> => {
      const { pane_id: paneId } = await owner.createPane({ argv: ['sleep', '600'], cwd: work });
      const c = await connect({ socketPath: t.daemon.socketPath as string, token: t.daemon.tokens.issue(paneId, ['read', 'send', 'create', 'approve']), env: {} });
      clients.push(c);
      return { paneId, c };
    };
    const starter = await paneWith();
    const stranger = await paneWith();
    const runId = (await starter.c.teamRunStart({ preset: PRESET, goal: 'write made.txt again', folder: work })).run_id;
    // The gate holds the planner's `git reset --hard`: the run waits there for a person.
    const held = await boardUntil(owner, runId, (b) => b.confirmations.length > 0, 'a text held by the risk gate');
    const heldId = held.confirmations[0]?.id ?? '';
    const refusals = await Promise.allSettled([
      stranger.c.teamRunAnswer(runId, heldId, 'allow'),
      stranger.c.teamRunPause(runId),
      stranger.c.teamRunSend(runId, 'echo from-a-stranger > stranger.txt'),
      stranger.c.teamRunMark(runId, 'executor-1', 'stuck'),
      stranger.c.teamRunEnd(runId, { closeAgents: true }),
      stranger.c.teamRunResend(runId, 'c1'),
      stranger.c.teamRunRestart(runId, 'executor-1'),
      // Its record too: what people sent and every call's arguments are not for every pane to read.
      stranger.c.teamRunEvents(runId),
    ]);
    expect(refusals.map((r) => (r.status === 'rejected' ? (r.reason as { code?: string }).code : 'ok'))).toEqual(Array.from({ length: 8 }, () => 'FORBIDDEN'));
    // A result that reached the planner is not typed again, even when its starter asks.
    await expect(starter.c.teamRunResend(runId, 'c1')).rejects.toMatchObject({ code: 'CONFLICT', message: expect.stringContaining('it is delivered') as unknown });
    expect((refusals[1] as PromiseRejectedResult).reason).toMatchObject({ message: expect.stringContaining(`pane ${starter.paneId}`) as unknown });
    // Reading is not steering: the stranger sees the board, unchanged by what it tried.
    const seen = await stranger.c.teamRunGet(runId);
    expect(seen).toMatchObject({ state: 'running', confirmations: [{ id: heldId }], workers: [{ id: 'executor-1', state: expect.not.stringMatching(/^stuck$/) as unknown }] });
    expect(existsSync(path.join(work, 'stranger.txt'))).toBe(false);
    // Its starter steers it, and so does the owner.
    expect(await starter.c.teamRunPause(runId)).toEqual({ run_id: runId, state: 'paused' });
    expect(await owner.teamRunResume(runId)).toEqual({ run_id: runId, state: 'running' });
    await starter.c.teamRunAnswer(runId, heldId, 'deny');
    await boardUntil(owner, runId, (b) => b.state === 'completed', 'the run completed');
    await owner.teamRunEnd(runId, { closeAgents: true });
    await owner.kill(starter.paneId);
    await owner.kill(stranger.paneId);
  });

  it('takes the planner’s calls over MCP, with the same tools and results, from its own pane’s token only', async () => {
    const c = await client();
    // Nobody's pane, not even the owner's token, may call the team tools.
    await expect(c.request('team_tool', { tool: 'tabs_list' })).rejects.toMatchObject({ code: 'FORBIDDEN' });
    await expect(c.request('team_mcp_ready', {})).rejects.toMatchObject({ code: 'FORBIDDEN' });
    const started = await c.teamRunStart({ preset: { name: 'over-mcp', planner: 'lead', roles: [{ name: 'lead', agent: 'mcp-planner' }, { name: 'executor', agent: 'shell' }] }, goal: 'write mcp.txt', folder: work });
    const ended = (b: TeamBoardInfo): boolean => ['completed', 'failed', 'cancelled'].includes(b.state);
    const held = await boardUntil(c, started.run_id, (b) => b.confirmations.length > 0 || ended(b), 'a text held by the risk gate');
    expect(held.confirmations.map((h) => h.text)).toEqual(['git clean -fdx']);
    await c.teamRunAnswer(started.run_id, held.confirmations[0]?.id ?? '', 'deny');
    // run_complete ends the run inside its own call: its answer is recorded a change later.
    const done = await boardUntil(c, started.run_id, (b) => ended(b) && b.calls.every((call) => call.delivered !== 'pending'), 'the run completed');
    expect(done.state).toBe('completed');
    expect(readFileSync(path.join(work, 'mcp.txt'), 'utf8')).toBe('made-over-mcp\n');
    expect(done.calls.map((call) => `${call.method} ${call.by} ${call.via} ${call.outcome} ${call.delivered}`)).toEqual([
      'tasks_add planner mcp ok delivered',
      'tabs_send planner mcp ok delivered',
      'tabs_wait planner mcp ok delivered',
      'tabs_read planner mcp ok delivered',
      'tabs_send planner mcp INVALID_PARAMS delivered',
      'tabs_send planner mcp FORBIDDEN delivered',
      'run_report_draft planner mcp ok delivered',
      'run_complete planner mcp ok delivered',
    ]);
    const readLog = () => readFileSync(mcpLog, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as { tools?: string[]; tool?: string; isError?: boolean; content?: string });
    // The planner logs each answer once its MCP client has it: the last comes just after the run ended.
    await until(() => readLog().filter((e) => e.tool !== undefined).length === MCP_CALLS.length, 'every answer in the planner’s log');
    const entries = readLog();
    // Its MCP server offers the team tools beside Switchboard's own (ask, read, …).
    expect(entries[1]?.tools).toEqual(expect.arrayContaining(['ask', 'run_complete', 'run_report_draft', 'tabs_create', 'tabs_list', 'tabs_read', 'tabs_send', 'tabs_wait', 'tasks_add', 'tasks_claim', 'tasks_complete', 'tasks_list']));
    const results = entries.filter((e) => e.tool !== undefined);
    expect(results.map((e) => `${e.tool} ${e.isError ? 'error' : 'ok'}`)).toEqual(MCP_CALLS.map(([tool], i) => `${tool} ${i === 4 || i === 5 ? 'error' : 'ok'}`));
    expect(results[3]?.content).toContain('made-over-mcp');
    expect(results[4]?.content).toMatch(/^INVALID_PARAMS: no worker nobody-1/);
    expect(results[5]?.content).toMatch(/^FORBIDDEN: .* did not let this text go to executor-1/);
    await c.teamRunEnd(started.run_id, { closeAgents: true });
  });

  it('answers a worker’s approval prompts by its role’s policy, each decision on the board', async () => {
    const model = await ModelServer.start({
      scenario: { name: 'team approvals', rules: [{ match: 'run the shell command', steps: [{ tool: 'shell', command: 'echo from-aider > aider.txt', description: 'Write aider.txt' }, { text: 'Wrote aider.txt.' }] }] },
    });
    try {
      const c = await client();
      const homes = path.join(scratch.dir, 'homes');
      const started = await c.teamRunStart({
        preset: { name: 'with-aider', planner: 'lead', roles: [{ name: 'lead', agent: 'aider-planner' }, { name: 'executor', agent: 'aider', approvals: 'auto' }] },
        goal: 'have aider write aider.txt',
        folder: work,
        agent_home: homes,
        model_url: model.url,
      });
      const done = await boardUntil(c, started.run_id, (b) => ['completed', 'failed', 'cancelled'].includes(b.state), 'the run completed');
      expect(done.state, done.why).toBe('completed');
      expect(readFileSync(path.join(work, 'aider.txt'), 'utf8')).toBe('from-aider\n');
      expect(done.approvals).toEqual([{ member: 'executor-1', what: 'shell echo from-aider > aider.txt', decision: 'allow', by: "the executor role's approval policy", reason: expect.any(String) as unknown }]);
      await c.teamRunEnd(started.run_id, { closeAgents: true });
    } finally {
      await model.close();
    }
  });

  it('answers bad input with clear codes and starts nothing', async () => {
    const c = await client();
    const before = (await c.list()).panes.length;
    await expect(c.teamRunGet('team-00000000')).rejects.toMatchObject({ code: 'RUN_NOT_FOUND' });
    await expect(c.teamRunGet('nope')).rejects.toMatchObject({ code: 'INVALID_PARAMS' });
    await expect(c.teamRunStart({ preset: PRESET, goal: 'x', folder: path.join(work, 'missing') })).rejects.toMatchObject({ code: 'INVALID_PARAMS', message: expect.stringContaining('is not a folder that exists') });
    await expect(c.teamRunStart({ preset: { ...PRESET, roles: [PRESET.roles[0], { name: 'executor', agent: 'cobol' }] }, goal: 'x', folder: work })).rejects.toMatchObject({
      code: 'INVALID_PARAMS',
      message: expect.stringContaining("roles[1].agent: no agent profile is named 'cobol'"),
    });
    await expect(c.teamRunStart({ preset: 'no-such-preset', goal: 'x', folder: work })).rejects.toMatchObject({ code: 'INVALID_PARAMS' });
    // Relative to what? The daemon's folder is no caller's.
    await expect(c.teamRunStart({ preset: PRESET, goal: 'x', folder: 'work' })).rejects.toMatchObject({ code: 'INVALID_PARAMS', message: 'folder: work is not an absolute path' });
    await expect(c.teamRunStart({ preset: PRESET, goal: '   ', folder: work })).rejects.toMatchObject({ code: 'INVALID_PARAMS' });
    expect((await c.list()).panes.length).toBe(before);
  });
});
