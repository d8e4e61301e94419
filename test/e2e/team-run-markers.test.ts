/**
 * A team run whose planner calls the team's tools by marker lines only (issue 24): OpenCode plans,
 * Codex executes and Gemini CLI tests, against the scripted model. OpenCode draws a marker line as
 * markdown (`__MPS_TOOL__` shows as a bold `MPS_TOOL`) and wraps a long one, so the calls are read
 * from its own record of the turn, through `opencode db`; each call's result is typed back into it
 * as a line of its own. The scripted planner puts the run's nonce, which the brief gave it, into
 * every call (a text step's `vars`).
 */
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type SwitchboardClient } from '../../src/client/index.js';
import { useScriptedModel } from './scripted-model.js';
import { useTestDaemon } from '../support/daemon.js';
import { boardUntil } from '../support/team-board.js';

const NOTES = 'Notes written by the team.';
const NONCE = { nonce: 'Your nonce is ([0-9a-f]+)' };

/** The planner's calls in order: each one answers the result of the call before it (the first, the brief). */
const CALLS: [method: string, params: Record<string, unknown>][] = [
  ['tasks.add', { title: 'write notes.md' }],
  ['tabs.send', { tabId: 'executor-1', text: 'please create the notes file' }],
  ['tabs.wait', { tabId: 'executor-1', until: ['idle'], timeoutMs: 120_000 }],
  ['tabs.send', { tabId: 'tester-1', text: 'please check the notes file' }],
  ['tabs.wait', { tabId: 'tester-1', until: ['idle'], timeoutMs: 120_000 }],
  ['tabs.read', { tabId: 'tester-1', lines: 60 }],
  ['run.report_draft', { text: '# notes.md\n\nexecutor-1 wrote notes.md; tester-1 read it back.\n' }],
  ['run.complete', { summary: 'notes.md is written and checked' }],
];

/** The scripted planner's turn for call `i`: a sentence, then the marker line with the nonce it was given. */
const callTurn = (i: number): { text: string; vars: Record<string, string> } => {
  const [method, params] = CALLS[i] ?? ['', {}];
  return { text: `Next: ${method}.\n__MPS_TOOL__ ${JSON.stringify({ id: `c${i + 1}`, method, params, nonce: '{{nonce}}' })}`, vars: NONCE };
};

const sm = useScriptedModel({
  name: 'team-run-markers',
  title: 'A team run by marker lines',
  rules: [
    { match: 'GOAL: write notes\\.md', steps: [callTurn(0)] },
    ...CALLS.slice(1).map((_, i) => ({ match: `__MPS_TOOL_RESULT__ \\{"id":"c${i + 1}"`, steps: [callTurn(i + 1)] })),
    { match: `__MPS_TOOL_RESULT__ \\{"id":"c${CALLS.length}"`, steps: [{ text: 'The team is done.' }] },
    { match: 'please create the notes file', steps: [{ tool: 'write', path: 'notes.md', content: `${NOTES}\n` }, { text: 'Created notes.md.' }] },
    { match: 'please check the notes file', steps: [{ tool: 'shell', command: 'cat notes.md', description: 'Read notes.md' }, { text: 'notes.md says: {{tool_result}}' }] },
  ],
});
const ctx = useTestDaemon();

let client: SwitchboardClient;
beforeAll(async () => {
  client = await connect({ home: ctx.home });
});
afterAll(() => client.close());

describe('a team run whose planner calls by marker lines', { timeout: 400_000 }, () => {
  it('has an OpenCode planner drive a Codex executor and a Gemini CLI tester, its calls read from its own record', async () => {
    const work = path.join(ctx.work, 'team-markers');
    mkdirSync(work, { recursive: true });
    const started = await client.teamRunStart({
      preset: {
        name: 'markers',
        planner: 'lead',
        roles: [
          { name: 'lead', agent: 'opencode' },
          { name: 'executor', agent: 'codex' },
          { name: 'tester', agent: 'gemini' },
        ],
      },
      goal: 'write notes.md',
      folder: work,
      agent_home: sm.tempDir('sb-team-markers-homes-').dir,
      model_url: sm.model.url,
      planner_calls: 'markers',
    });
    const runId = started.run_id;
    try {
      const done = await boardUntil(client, runId, (b) => ['completed', 'failed', 'cancelled'].includes(b.state) && b.calls.every((c) => c.delivered !== 'pending'), 'the run completed', 300_000);
      expect(done.state, done.why).toBe('completed');
      expect(done.calls.map((c) => `${c.id} ${c.method} ${c.via} ${c.outcome}`)).toEqual(CALLS.map(([method], i) => `c${i + 1} ${method} markers ok`));
      // Each result reached the planner (its transcript recorded it), but the last: the run ended on
      // run.complete, and nothing is typed into the planner after its end.
      expect(done.calls.map((c) => c.delivered)).toEqual([...CALLS.slice(0, -1).map(() => 'delivered'), 'undelivered']);
      expect(readFileSync(path.join(work, 'notes.md'), 'utf8')).toBe(`${NOTES}\n`);
      const tester = done.workers.find((w) => w.id === 'tester-1');
      expect(tester?.agent).toBe('gemini');
      // Gemini CLI hands its shell tool's output back as "Output: …".
      expect((await client.getText(tester?.pane_id ?? '', { lines: 200 })).text).toMatch(/notes\.md says: (Output: )?Notes written by the team\./);
      const report = (await client.teamRunReport(runId)).markdown;
      expect(report).toContain('executor-1 wrote notes.md; tester-1 read it back.');
      expect(report).toContain('notes.md is written and checked');
    } finally {
      await client.teamRunEnd(runId, { closeAgents: true }).catch(() => undefined);
    }
  });
});
