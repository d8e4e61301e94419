/**
 * CodingAgent.execute() with the real Claude Code CLI: the caller's callbacks decide what the policy
 * leaves open (an approval the policy asks about, a question from the model), and a task that is
 * cancelled or runs out of time leaves no process behind.
 */
import { describe, expect, it } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { CodingAgent, type CodingAgentOptions, type ProgressEvent } from '../../src/index.js';
import { findProcessesByEnv } from '../../src/platform/index.js';
import { QUESTION, sandboxedAgentOptions } from './execute-flow.js';
import { RULES, useScriptedModel } from './scripted-model.js';


const scripted = useScriptedModel({
  name: 'callbacks',
  title: 'Scripted callbacks',
  rules: [
    {
      match: 'write the notes',
      steps: [
        { tool: 'shell', command: 'echo notes-body > notes.txt', description: 'Write notes.txt', escalate: true },
        { text: 'Wrote notes.txt.' },
      ],
    },
    { match: 'set up the server', steps: [{ text: QUESTION }] },
    { match: 'use port 8080', steps: [{ text: 'Listening on port 8080 now.' }] },
    // A model that takes its time: long enough for the test to cancel or time out the task.
    RULES.takeYourTime,
  ],
});

function newAgent(extra: Partial<CodingAgentOptions> = {}): { agent: CodingAgent; work: string; events: ProgressEvent[] } {
  const home = scripted.tempDir('sb-exec-cb-home-');
  const work = scripted.tempDir('sb-exec-cb-work-');
  const events: ProgressEvent[] = [];
  const agent = new CodingAgent({ ...sandboxedAgentOptions('claude', home.dir, scripted.model.url, events), ...extra });
  return { agent, work: work.dir, events };
}

const paneIdOf = (events: ProgressEvent[]): string => {
  const started = events.find((e) => e.type === 'started');
  if (started?.type !== 'started') throw new Error('the agent never started');
  return started.paneId;
};

describe('CodingAgent.execute() callbacks, cancellation and timeouts, with claude', () => {
  it('asks onApproval what the policy leaves open, and onQuestion for the model question', { timeout: 120_000 }, async () => {
    const asked: string[] = [];
    const { agent, work } = newAgent({
      // No policy: every approval is asked, here of the callback.
      onApproval: (request) => {
        asked.push(request?.command ?? '(no command)');
        return 'allow';
      },
      onQuestion: (question) => (question.includes('Which port') ? 'use port 8080' : null),
    });
    try {
      const wrote = await agent.execute('write the notes please', { workdir: work });
      expect(wrote.status, wrote.errorMessage ?? '').toBe('completed');
      expect(asked).toEqual([expect.stringContaining('notes.txt')]);
      expect(wrote.approvals[0]).toMatchObject({ decision: 'allow', decidedBy: 'callback' });
      expect(wrote.approvals[0]?.reason).toMatch(/allowed by the onApproval callback/);
      expect(readFileSync(path.join(work, 'notes.txt'), 'utf8')).toBe('notes-body\n');

      const answered = await agent.execute('set up the server please', { workdir: work });
      expect(answered.status, answered.errorMessage ?? '').toBe('completed');
      expect(answered.finalMessage).toContain('Listening on port 8080 now.');
      expect(scripted.model.modelRequests().some((r) => r.plan?.prompt.includes('use port 8080'))).toBe(true);
    } finally {
      await agent.dispose();
    }
  });

  it('cancels a running task at once and leaves no process behind', { timeout: 120_000 }, async () => {
    const { agent, work, events } = newAgent();
    const controller = new AbortController();
    agent.onProgress((e) => {
      if (e.type === 'state' && e.change.state === 'thinking') controller.abort();
    });
    try {
      const result = await agent.execute('take your time please', { workdir: work, signal: controller.signal });
      expect(result.status).toBe('cancelled');
      expect(controller.signal.aborted).toBe(true);
      // Cancelled while the model was still 60 s from answering.
      expect(result.finalMessage ?? '').not.toContain('Finally done.');
      expect(result.outputLog).toContain('take your time please');
      expect(agent.pane).toBeUndefined();
      expect(findProcessesByEnv('SWITCHBOARD_PANE_ID', paneIdOf(events))).toEqual([]);
    } finally {
      await agent.dispose();
    }
  });

  it('times a task out and leaves no process behind', { timeout: 120_000 }, async () => {
    const { agent, work, events } = newAgent({ timeoutMs: 8_000 });
    try {
      const result = await agent.execute('take your time please', { workdir: work });
      expect(result.status).toBe('timeout');
      expect(result.errorMessage).toMatch(/within 8 s/);
      // The screen as it was when the time ran out, read before the CLI was ended.
      expect(result.outputLog).toContain('take your time please');
      expect(agent.pane).toBeUndefined();
      expect(findProcessesByEnv('SWITCHBOARD_PANE_ID', paneIdOf(events))).toEqual([]);
      expect(existsSync(path.join(work, 'notes.txt'))).toBe(false);
    } finally {
      await agent.dispose();
    }
  });
});
