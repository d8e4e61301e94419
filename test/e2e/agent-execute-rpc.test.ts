/**
 * CodingAgent.execute() inside the daemon (`agent_execute`), with the real Claude Code CLI against
 * the scripted model: the task runs in a daemon pane that `list` and the dashboard's `pane_states`
 * show while it runs; an approval the policy leaves open waits for a person, who answers it through
 * `answer_approval`; the task completes with that answer on record and in the pane's log. Without
 * a person to wait for, the open approval is handed back (needs_input), as the library does.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { connect, type SwitchboardClient } from '../../src/index.js';
import { useTestDaemon } from '../support/daemon.js';
import { cleanEnv } from '../support/cli.js';
import { useAgentBinaries } from './agent-flow.js';
import { RULES, useScriptedModel } from './scripted-model.js';

useAgentBinaries();
const t = useTestDaemon();
const scripted = useScriptedModel({ name: 'agent-execute', title: 'agent_execute over RPC', rules: [RULES.writeFileByShell, RULES.sayHello] });

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls until `find` returns something (the daemon's view moves on its own). */
async function until<T>(what: string, find: () => Promise<T | undefined>): Promise<T> {
  for (let i = 0; i < 1_200; i++) {
    const found = await find();
    if (found !== undefined) return found;
    await sleep(50);
  }
  throw new Error(`never saw ${what}`);
}

async function agentPaneIds(c: SwitchboardClient): Promise<string[]> {
  return (await c.list()).panes.filter((p) => p.agent?.name === 'claude').map((p) => p.pane_id);
}

describe('agent_execute: a task run to its end in a daemon pane', () => {
  it('shows the pane in list and pane_states, waits for answer_approval, and completes', { timeout: 180_000 }, async () => {
    const home = scripted.tempDir('sb-exec-rpc-home-');
    const work = scripted.tempDir('sb-exec-rpc-work-');
    const c = await connect({ home: t.home, env: cleanEnv() });
    try {
      const before = await agentPaneIds(c);
      const running = c.agentExecute({ agent: 'claude', task: 'write a file please', cwd: work.dir, policy: 'ask', wait_for_approval: true, keep_pane: true, agent_home: home.dir, model_url: scripted.model.url, timeout_ms: 150_000 });
      // Awaited below; should an expectation fail first, the close in finally rejects it: not unhandled.
      void running.catch(() => undefined);
      // The task's pane is one of the daemon's: listed, with its agent.
      const paneId = await until('the task pane in list', async () => (await agentPaneIds(c)).find((id) => !before.includes(id)));
      // The dashboard's view: the pane waits on the approval, read off its screen, with its id.
      const waiting = await until('the approval in pane_states', async () => (await c.paneStates()).states.find((s) => s.pane_id === paneId && s.state === 'waiting_approval' && s.approval !== null));
      expect(waiting.approval?.tool).toBe('shell');
      expect(waiting.approval?.command).toContain('tool_out.txt');
      const approvalId = waiting.approval?.id ?? undefined;
      expect(approvalId).toBeDefined();
      // The policy asks and the caller wants a person: nothing is pressed until one answers.
      expect(existsSync(path.join(work.dir, 'tool_out.txt'))).toBe(false);
      await expect(c.answerApproval(paneId, 'allow', `${approvalId}-stale`)).rejects.toMatchObject({ code: 'CONFLICT' });
      const answered = await c.answerApproval(paneId, 'allow', approvalId);
      expect(answered.answered.keys.length).toBeGreaterThan(0);

      const result = await running;
      const explain = JSON.stringify({ ...result, output_log: result.output_log.split('\n').slice(-30) }, null, 1);
      expect(result.status, explain).toBe('completed');
      expect(result.pane_id).toBe(paneId);
      expect(result.files_changed, explain).toContain('tool_out.txt');
      expect(readFileSync(path.join(work.dir, 'tool_out.txt'), 'utf8')).toBe('hello-from-tool\n');
      expect(result.final_message, explain).toContain('Done: wrote tool_out.txt.');
      expect(result.approvals[0], explain).toMatchObject({ id: approvalId, decision: 'allow', decided_by: 'person', request: { tool: 'shell' } });
      expect(result.approvals[0]?.reason).toMatch(/^allowed by a person \(policy: /);
      expect(result.states.map((s) => s.state)).toContain('waiting_approval');
      expect(result.completed_by).toContain('idle prompt');

      // The task is a run of the run service: in the ledger, with the approval and who decided it.
      const { run } = await c.runGet(result.run_id);
      expect(run).toMatchObject({ backend: 'claude', mode: 'pty', status: 'completed', keep_alive: false, policy: "agent_execute (the caller's own rules)" });
      const events = (await c.runEvents(result.run_id)).events.flatMap((e) => (e.schema_version === 'v2' ? [e] : []));
      expect(events.find((e) => e.type === 'tool_call')?.data).toMatchObject({ id: approvalId, kind: 'shell' });
      // (A file the run changed is judged afterwards too, as the CLI's own act: `by: cli`.)
      expect(events.filter((e) => e.type === 'decision').map((e) => e.data).slice(0, 2)).toEqual([
        expect.objectContaining({ rule: 'agent_execute.caller', decision: 'allow' }),
        expect.objectContaining({ decision: 'allow', by: 'person', rule: 'person', subject: expect.objectContaining({ tool_call_id: approvalId }) }),
      ]);
      expect(events.some((e) => e.type === 'patch' && JSON.stringify(e.data).includes('tool_out.txt'))).toBe(true);

      // The pane's log has the task, the approval asked and who answered it.
      const entries = (await c.logGetHistory(paneId, { limit: 10_000 })).messages.flatMap((m) => (m.msg.type === 'normalized' ? [m.msg.entry] : []));
      expect(entries.filter((e) => e.type === 'user_message').map((e) => e.content)).toEqual(['write a file please']);
      const asked = entries.find((e) => e.metadata?.status === 'pending');
      expect(asked?.metadata?.toolCallId).toBe(approvalId);
      const answer = entries.find((e) => e.type === 'tool_result' && e.metadata?.toolCallId === approvalId);
      expect(answer?.content).toMatch(/^approved by a client/);

      // keep_pane: the agent is still there, at its prompt, for the caller to use or remove.
      expect((await c.isAlive(paneId)).alive).toBe(true);
      await c.remove(paneId);
      expect(await agentPaneIds(c)).not.toContain(paneId);
    } finally {
      c.close();
    }
  });

  it('hands back an approval the policy leaves open when no person is waited for, and removes its pane', { timeout: 180_000 }, async () => {
    const home = scripted.tempDir('sb-exec-rpc-home-');
    const work = scripted.tempDir('sb-exec-rpc-work-');
    const c = await connect({ home: t.home, env: cleanEnv() });
    try {
      const before = await agentPaneIds(c);
      const result = await c.agentExecute({ agent: 'claude', task: 'write a file please', cwd: work.dir, agent_home: home.dir, model_url: scripted.model.url, timeout_ms: 150_000 });
      expect(result.status, JSON.stringify(result.approvals)).toBe('needs_input');
      expect(result.question).toMatch(/^approve shell: .*tool_out\.txt/);
      expect(result.approvals).toEqual([expect.objectContaining({ decision: 'ask', decided_by: 'none', answered: null })]);
      expect(existsSync(path.join(work.dir, 'tool_out.txt'))).toBe(false);
      // In the ledger: asked and not answered, so the run failed needing input.
      expect((await c.runGet(result.run_id)).run).toMatchObject({ status: 'failed', reason: 'needs_input' });
      const decisions = (await c.runEvents(result.run_id)).events.flatMap((e) => (e.schema_version === 'v2' && e.type === 'decision' ? [e.data] : []));
      expect(decisions.at(-1)).toMatchObject({ decision: 'ask', by: 'none', rule: 'agent_execute.policy' });
      // Not kept: the pane is gone with the task.
      expect(await agentPaneIds(c)).toEqual(before);
      // A policy of its own is checked like a policy file.
      await expect(c.agentExecute({ agent: 'claude', task: 'say hello', cwd: work.dir, policy: { rules: [{ decision: 'perhaps' }], default: 'ask' } })).rejects.toMatchObject({ code: 'INVALID_PARAMS' });
    } finally {
      c.close();
    }
  });
});
