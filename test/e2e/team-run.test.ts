/**
 * A team run with real agent CLIs against the scripted model (issue 24), both ways round: Codex
 * plans and Claude Code executes, then Claude Code plans and Codex executes. The planner calls the
 * team tools over MCP (Switchboard's MCP server is in its isolated HOME's configuration; it is
 * briefed once that server has the CLI connected; Codex finds each tool with its tool search). It
 * adds a task, has the executor write a file, waits for it, reads its output, tries a destructive
 * text (held by the risk gate and denied at the board: the executor never sees it), drafts the
 * report and completes the run. Every approval either CLI asks for is decided by its role's policy.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type SwitchboardClient } from '../../src/client/index.js';
import type { TeamBoardInfo } from '../../src/protocol/methods.js';
import { useScriptedModel } from './scripted-model.js';
import { useTestDaemon } from '../support/daemon.js';
import { boardUntil as watchBoard } from '../support/team-board.js';

const NOTES = 'Notes written by the team.';

const sm = useScriptedModel({
  name: 'team-run',
  title: 'A team run',
  rules: [
    {
      // The planner's brief.
      match: 'GOAL: write notes.md',
      steps: [
        { tool: 'mcp', server: 'switchboard', name: 'tasks_add', input: { title: 'write notes.md' } },
        { tool: 'mcp', server: 'switchboard', name: 'tabs_send', input: { tabId: 'executor-1', text: 'please create the notes file' } },
        { tool: 'mcp', server: 'switchboard', name: 'tabs_wait', input: { tabId: 'executor-1', until: ['idle'], timeoutMs: 120_000 } },
        { tool: 'mcp', server: 'switchboard', name: 'tabs_read', input: { tabId: 'executor-1', lines: 40 } },
        { tool: 'mcp', server: 'switchboard', name: 'tabs_send', input: { tabId: 'executor-1', text: 'git reset --hard' } },
        { tool: 'mcp', server: 'switchboard', name: 'run_report_draft', input: { text: '# notes.md\n\nexecutor-1 wrote notes.md.\n' } },
        { tool: 'mcp', server: 'switchboard', name: 'run_complete', input: { summary: 'notes.md is written' } },
        { text: 'The team is done.' },
      ],
    },
    // The executor's task.
    { match: 'please create the notes file', steps: [{ tool: 'write', path: 'notes.md', content: `${NOTES}\n` }, { text: 'Created notes.md.' }] },
  ],
});
const ctx = useTestDaemon();

let client: SwitchboardClient;
beforeAll(async () => {
  client = await connect({ home: ctx.home });
});
afterAll(() => client.close());

const ENDED = ['completed', 'failed', 'cancelled'];

/** A tool's name as Claude Code words it in its approval prompt (`tasks_add` → `Tasks Add`). */
const worded = (name: string): string => name.split('_').map((w) => `${w.charAt(0).toUpperCase()}${w.slice(1)}`).join(' ');

/** The board, watched until `done` holds (at most `timeoutMs`). */
const boardUntil = (runId: string, done: (board: TeamBoardInfo) => boolean, what: string, timeoutMs = 120_000): Promise<TeamBoardInfo> => watchBoard(client, runId, done, what, timeoutMs);

describe('a team run of real CLIs', { timeout: 400_000 }, () => {
  it.each([
    { planner: 'codex', executor: 'claude' },
    { planner: 'claude', executor: 'codex' },
  ])('has a $planner planner drive a $executor executor over MCP, with the risk gate between them', async ({ planner, executor }) => {
    const work = path.join(ctx.work, `team-${planner}`);
    mkdirSync(work, { recursive: true });
    const started = await client.teamRunStart({
      preset: { name: `${planner}-${executor}`, planner: 'lead', roles: [{ name: 'lead', agent: planner }, { name: 'executor', agent: executor }] },
      goal: 'write notes.md',
      folder: work,
      agent_home: sm.tempDir(`sb-team-${planner}-homes-`).dir,
      model_url: sm.model.url,
      // Claude Code defers MCP tools behind a tool search a real model calls first; the scripted one does not.
      env: { ENABLE_TOOL_SEARCH: 'false' },
    });
    const runId = started.run_id;
    try {
      const held = await boardUntil(runId, (b) => b.confirmations.length > 0 || ENDED.includes(b.state), 'the destructive text held');
      expect(held.confirmations.map((c) => `${c.worker_id}: ${c.text}`), JSON.stringify(held, null, 1)).toEqual(['executor-1: git reset --hard']);
      await client.teamRunAnswer(runId, held.confirmations[0]?.id ?? '', 'deny');
      const done = await boardUntil(runId, (b) => ENDED.includes(b.state) && b.calls.every((c) => c.delivered !== 'pending'), 'the run completed');
      expect(done.state, done.why).toBe('completed');
      expect(readFileSync(path.join(work, 'notes.md'), 'utf8')).toBe(`${NOTES}\n`);
      expect(done.calls.map((c) => `${c.method} ${c.via} ${c.outcome}`)).toEqual([
        'tasks_add mcp ok',
        'tabs_send mcp ok',
        'tabs_wait mcp ok',
        'tabs_read mcp ok',
        'tabs_send mcp FORBIDDEN',
        'run_report_draft mcp ok',
        'run_complete mcp ok',
      ]);
      // Every approval a CLI asked for was decided by its role's policy: the planner's before each
      // MCP call it asked about (its policy allows the team's own tools), the executor's before it
      // wrote the file (Codex writes in its workspace without asking).
      expect(done.approvals.every((a) => a.decision === 'allow' && a.by.endsWith("role's approval policy")), JSON.stringify(done.approvals, null, 1)).toBe(true);
      // Both CLIs ask before every MCP call (allowed once each time): one approval per call.
      expect(done.approvals.filter((a) => a.member === 'planner').map((a) => a.what)).toEqual(done.calls.map((c) => (planner === 'claude' ? `mcp switchboard — ${worded(c.method)} Tool` : `mcp switchboard MCP server to run tool "${c.method}"`)));
      if (executor === 'claude') expect(done.approvals.filter((a) => a.member === 'executor-1').map((a) => a.what)).toEqual(['file_write notes.md']);
      // The executor never saw the denied text.
      const worker = done.workers.find((w) => w.id === 'executor-1');
      expect(worker?.agent).toBe(executor);
      expect((await client.getText(worker?.pane_id ?? '', { lines: 400 })).text).not.toContain('git reset');
      const report = (await client.teamRunReport(runId)).markdown;
      expect(report).toContain('executor-1 wrote notes.md.');
      expect(report).toContain('notes.md is written');
    } finally {
      await client.teamRunEnd(runId, { closeAgents: true }).catch(() => undefined);
    }
  });
});
