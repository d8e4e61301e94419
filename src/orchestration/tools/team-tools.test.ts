import { describe, expect, it } from 'vitest';
import { AUTO_APPROVE_POLICY } from '../../approvals/index.js';
import { SwitchboardError } from '../../core/errors.js';
import { TaskList } from '../task-list.js';
import { callTeamTool, mcpToolName, TEAM_TOOLS, teamToolsFor, toolNamed, type ToolDeps } from './team-tools.js';
import type { GateAnswer, TeamPort, WorkerView } from './team-port.js';
import type { CheckResult } from '../check-command.js';

/** A team of fakes: what reached each worker, what a person was asked, the draft and the end. */
function fakeTeam(answer: GateAnswer['decision'] | 'unanswered' = 'allow') {
  const workers: WorkerView[] = [{ id: 'executor-1', role: 'executor', agent: 'codex', state: 'idle', folder: '/w', lastLines: ['done'] }];
  const sent: { workerId: string; text: string; enter: boolean }[] = [];
  const asked: string[] = [];
  let draft = '';
  let summary: string | undefined;
  /** What each check returns, in turn (none left: the role has no check). */
  const checks: CheckResult[] = [];
  const checked: string[] = [];
  const port: TeamPort = {
    workers: () => workers,
    createWorker: (role, options) => {
      if (role !== 'tester') return Promise.reject(new SwitchboardError('INVALID_PARAMS', `the team has no role '${role}'`));
      const w: WorkerView = { id: 'tester-1', role, agent: options.agent ?? 'gemini', state: 'starting', folder: options.folder ?? '/w', lastLines: [] };
      workers.push(w);
      return Promise.resolve(w);
    },
    send: (workerId, text, { enter }) => {
      sent.push({ workerId, text, enter });
      return Promise.resolve();
    },
    read: (_id, lines) => ['a', 'b', 'c'].slice(-lines),
    wait: (id) => Promise.resolve({ worker: { ...(workers.find((w) => w.id === id) as WorkerView), state: 'idle' }, reached: true }),
    confirm: (request) => {
      asked.push(`${request.judgement.level}: ${request.text}`);
      return Promise.resolve(answer === 'unanswered' ? { decision: 'deny', by: 'nobody: no answer within 10 minutes', unanswered: true } : { decision: answer, by: 'a person at the dashboard' });
    },
    draft: (text, mode) => {
      draft = mode === 'append' ? draft + text : text;
      return { chars: draft.length };
    },
    complete: (s) => {
      summary = s;
    },
    check: (workerId, taskId, { tell }) => {
      checked.push(`${workerId} ${taskId}${tell ? ' told' : ''}`);
      return Promise.resolve(checks.shift());
    },
  };
  const deps: ToolDeps = { port, tasks: new TaskList(), riskContext: () => ({ policy: AUTO_APPROVE_POLICY, workdir: '/w', home: '/home/u', platform: 'linux' }), medium: 'confirm', unsent: new Map(), signal: new AbortController().signal };
  return { deps, sent, asked, checks, checked, get draft() { return draft; }, get summary() { return summary; } };
}

const planner = { kind: 'planner' } as const;

describe("the planner's tools", () => {
  it('lists, creates, sends, reads, waits, drafts and completes', async () => {
    const team = fakeTeam();
    expect(await callTeamTool('tabs.list', {}, planner, team.deps)).toMatchObject({ ok: true, result: { tabs: [{ id: 'executor-1', state: 'idle' }] } });
    expect(await callTeamTool('tabs_create', { role: 'tester', workingDir: '/w/tests' }, planner, team.deps)).toMatchObject({ ok: true, result: { tab: { id: 'tester-1', folder: '/w/tests' } } });
    expect(await callTeamTool('tabs.send', { tabId: 'executor-1', text: 'Implement --verbose.' }, planner, team.deps)).toEqual({ ok: true, result: { sent: true, risk: 'low' } });
    expect(team.sent).toEqual([{ workerId: 'executor-1', text: 'Implement --verbose.', enter: true }]);
    expect(await callTeamTool('tabs.read', { tabId: 'executor-1', lines: 2 }, planner, team.deps)).toEqual({ ok: true, result: { tabId: 'executor-1', lines: ['b', 'c'] } });
    expect(await callTeamTool('tabs.wait', { tabId: 'executor-1' }, planner, team.deps)).toMatchObject({ ok: true, result: { reached: true, tab: { state: 'idle' } } });
    await callTeamTool('run.report_draft', { text: '# Report\n' }, planner, team.deps);
    expect(await callTeamTool('run.report_draft', { text: 'more', mode: 'append' }, planner, team.deps)).toEqual({ ok: true, result: { chars: 13 } });
    expect(team.draft).toBe('# Report\nmore');
    expect(await callTeamTool('run.complete', { summary: 'flag added' }, planner, team.deps)).toEqual({ ok: true, result: { completed: true } });
    expect(team.summary).toBe('flag added');
  });

  it('holds a destructive text for a person: denied, the worker never gets it; allowed, it goes', async () => {
    const denied = fakeTeam('deny');
    const outcome = await callTeamTool('tabs.send', { tabId: 'executor-1', text: 'git reset --hard' }, planner, denied.deps);
    expect(outcome).toMatchObject({ ok: false, error: { code: 'FORBIDDEN', message: expect.stringMatching(/^a person at the dashboard did not let this text go to executor-1 \(high risk: git reset --hard: .*\); it was not sent$/) as unknown } });
    expect(denied.asked).toEqual(['high: git reset --hard']);
    expect(denied.sent).toEqual([]);
    const allowed = fakeTeam('allow');
    expect(await callTeamTool('tabs.send', { tabId: 'executor-1', text: 'git reset --hard' }, planner, allowed.deps)).toEqual({ ok: true, result: { sent: true, risk: 'high' } });
    expect(allowed.sent).toHaveLength(1);
    // Nobody answered: the broker's person step was withdrawn, and the text still does not go.
    const unanswered = fakeTeam('unanswered');
    expect(await callTeamTool('tabs.send', { tabId: 'executor-1', text: 'git clean -fdx' }, planner, unanswered.deps)).toMatchObject({ ok: false, error: { code: 'FORBIDDEN', message: expect.stringMatching(/^nobody: no answer within 10 minutes did not let this text go to executor-1 \(high risk: git clean -fdx: /) as unknown } });
    expect(unanswered.sent).toEqual([]);
  });

  it('judges text typed in pieces without Enter as a whole', async () => {
    const team = fakeTeam('deny');
    expect(await callTeamTool('tabs.send', { tabId: 'executor-1', text: 'git reset ', enter: false }, planner, team.deps)).toEqual({ ok: true, result: { sent: true, risk: 'low' } });
    expect(await callTeamTool('tabs.send', { tabId: 'executor-1', text: '--hard' }, planner, team.deps)).toMatchObject({ ok: false, error: { code: 'FORBIDDEN' } });
    expect(team.asked).toEqual(['high: git reset --hard']);
    expect(team.sent.map((s) => s.text)).toEqual(['git reset ']);
  });

  it('asks for medium risk only when the preset says confirm', async () => {
    const confirm = fakeTeam('deny');
    expect((await callTeamTool('tabs.send', { tabId: 'executor-1', text: '$ curl https://x.io/a.sh -o a.sh' }, planner, confirm.deps)).ok).toBe(false);
    const pass = fakeTeam('deny');
    pass.deps.medium = 'pass';
    expect(await callTeamTool('tabs.send', { tabId: 'executor-1', text: '$ curl https://x.io/a.sh -o a.sh' }, planner, pass.deps)).toEqual({ ok: true, result: { sent: true, risk: 'medium' } });
    expect(pass.asked).toEqual([]);
  });

  it('lets workers use the task tools for themselves only', async () => {
    const team = fakeTeam();
    const worker = { kind: 'worker', workerId: 'executor-1' } as const;
    expect(await callTeamTool('tabs.send', { tabId: 'executor-1', text: 'x' }, worker, team.deps)).toMatchObject({ ok: false, error: { code: 'FORBIDDEN' } });
    expect(await callTeamTool('tasks.add', { title: 'x' }, worker, team.deps)).toMatchObject({ ok: false, error: { code: 'FORBIDDEN' } });
    const first = await callTeamTool('tasks.add', { title: 'implement' }, planner, team.deps);
    const second = await callTeamTool('tasks.add', { title: 'test', dependsOn: ['task-1'] }, planner, team.deps);
    expect([first.ok, second.ok]).toEqual([true, true]);
    expect(await callTeamTool('tasks_claim', { taskId: 'task-2' }, worker, team.deps)).toMatchObject({ ok: false, error: { code: 'CONFLICT', message: 'task-2 waits for task-1 to be done' } });
    expect(await callTeamTool('tasks.claim', { taskId: 'task-1', tabId: 'someone-else' }, worker, team.deps)).toMatchObject({ ok: true, result: { task: { owner: 'executor-1' } } });
    expect(await callTeamTool('tasks.complete', { taskId: 'task-1' }, worker, team.deps)).toMatchObject({ ok: true, result: { task: { state: 'done' } } });
    expect(await callTeamTool('tasks.list', {}, worker, team.deps)).toMatchObject({ ok: true, result: { ready: ['task-2'] } });
    expect(await callTeamTool('tasks.claim', { taskId: 'task-2' }, planner, team.deps)).toMatchObject({ ok: false, error: { code: 'INVALID_PARAMS' } });
    expect(await callTeamTool('tasks.claim', { taskId: 'task-2', tabId: 'nobody-1' }, planner, team.deps)).toMatchObject({ ok: false, error: { code: 'INVALID_PARAMS', message: 'no worker nobody-1 (there are: executor-1)' } });
  });

  it("runs the owner's check when a task is said done: failing, the task stays open with the output, and what depends on it waits", async () => {
    const team = fakeTeam();
    const worker = { kind: 'worker', workerId: 'executor-1' } as const;
    await callTeamTool('tasks.add', { title: 'implement' }, planner, team.deps);
    await callTeamTool('tasks.add', { title: 'document', dependsOn: ['task-1'] }, planner, team.deps);
    await callTeamTool('tasks.claim', { taskId: 'task-1' }, worker, team.deps);
    team.checks.push({ command: 'npm test', passed: false, exitCode: 1, output: '1 failing: parses --verbose\n', ms: 40 }, { command: 'npm test', passed: true, exitCode: 0, output: 'ok\n', ms: 30 });
    expect(await callTeamTool('tasks.complete', { taskId: 'task-1' }, worker, team.deps)).toEqual({
      ok: true,
      result: { task: expect.objectContaining({ id: 'task-1', state: 'claimed', owner: 'executor-1', failedCheck: '1 failing: parses --verbose\n' }), check: { command: 'npm test', passed: false, exitCode: 1, output: '1 failing: parses --verbose\n' } },
    });
    expect(await callTeamTool('tasks.list', {}, worker, team.deps)).toMatchObject({ ok: true, result: { ready: [] } });
    // The planner saying it is done runs the owner's check too; this time it passes.
    expect(await callTeamTool('tasks.complete', { taskId: 'task-1' }, planner, team.deps)).toEqual({ ok: true, result: { task: expect.objectContaining({ state: 'done', failedCheck: null }), check: { command: 'npm test', passed: true } } });
    // The worker heard its own failure in the result; the planner's call has the worker told.
    expect(team.checked).toEqual(['executor-1 task-1', 'executor-1 task-1 told']);
    expect(await callTeamTool('tasks.list', {}, worker, team.deps)).toMatchObject({ ok: true, result: { ready: ['task-2'] } });
    // Done is done: no check again; and a task not its own is no worker's to complete.
    expect(await callTeamTool('tasks.complete', { taskId: 'task-1' }, worker, team.deps)).toMatchObject({ ok: true, result: { task: { state: 'done' } } });
    expect(await callTeamTool('tasks.complete', { taskId: 'task-2' }, worker, team.deps)).toMatchObject({ ok: false, error: { code: 'CONFLICT' } });
    expect(team.checked).toHaveLength(2);
  });

  it('lists over MCP what each may call: every tool for the planner, the task tools a worker may use', () => {
    expect(teamToolsFor('planner').map((t) => t.name)).toEqual(Object.keys(TEAM_TOOLS).map((name) => mcpToolName(name as keyof typeof TEAM_TOOLS)));
    expect(teamToolsFor('worker').map((t) => t.name)).toEqual(['tasks_list', 'tasks_claim', 'tasks_complete']);
    // The schema a listing carries is the one the call is checked with.
    expect(teamToolsFor('planner').find((t) => t.name === 'tabs_send')?.params.safeParse({ tabId: 'executor-1' }).success).toBe(false);
  });

  it('answers a bad call with a code, never a throw', async () => {
    const team = fakeTeam();
    expect(await callTeamTool('tabs.delete', {}, planner, team.deps)).toMatchObject({ ok: false, error: { code: 'METHOD_NOT_FOUND' } });
    expect(await callTeamTool('tabs.send', { tabId: 'executor-1' }, planner, team.deps)).toMatchObject({ ok: false, error: { code: 'INVALID_PARAMS', message: expect.stringContaining('tabs.send: text') as unknown } });
    expect(await callTeamTool('tabs.create', { role: 'cook' }, planner, team.deps)).toEqual({ ok: false, error: { code: 'INVALID_PARAMS', message: "the team has no role 'cook'" } });
    expect(Object.keys(TEAM_TOOLS).map((n) => mcpToolName(n as keyof typeof TEAM_TOOLS))).toContain('run_report_draft');
    expect(toolNamed('run_report_draft')).toBe('run.report_draft');
  });
});
