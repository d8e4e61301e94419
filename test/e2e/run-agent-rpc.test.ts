/**
 * A structured run started over JSON-RPC (`run_agent`), followed through seed 001's log stream:
 * entries as they come, then `log_finished`; a second reader joining afterwards gets the same log
 * from history; a cancelled run finishes too.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { connect, type LogMessage, type NormalizedEntry } from '../../src/index.js';
import { useTestDaemon } from '../support/daemon.js';
import { cleanEnv } from '../support/cli.js';
import { useAgentBinaries } from './agent-flow.js';
import { RULES, useScriptedModel } from './scripted-model.js';
import { until } from '../support/processes.js';

useAgentBinaries();
const t = useTestDaemon();

const scripted = useScriptedModel({
  name: 'run-agent',
  title: 'run_agent over RPC',
  rules: [
    { match: 'say hello', steps: [{ text: 'Hello over RPC.' }] },
    RULES.takeYourTime,
    {
      match: 'write a file',
      steps: [
        { tool: 'shell', command: 'echo from-session > session_out.txt', description: 'Write session_out.txt' },
        { text: 'Wrote session_out.txt.' },
      ],
    },
  ],
});

const entriesOf = (messages: LogMessage[]): NormalizedEntry[] => messages.flatMap((m) => (m.msg.type === 'normalized' ? [m.msg.entry] : []));

describe('run_agent and the log stream', () => {
  it('streams a headless run to a subscriber, then says it finished', { timeout: 90_000 }, async () => {
    const home = scripted.tempDir('sb-run-rpc-home-');
    const c = await connect({ home: t.home, env: cleanEnv() });
    try {
      const { session_id } = await c.runAgent({ agent: 'claude', prompt: 'say hello please', cwd: t.work, agent_home: home.dir, model_url: scripted.model.url });
      const seen: LogMessage[] = [];
      const finished = new Promise<void>((resolve) => {
        void c.logSubscribe(session_id, {}, { log_message: (n) => seen.push(...n.messages), log_finished: () => resolve() });
      });
      await finished;
      const entries = entriesOf(seen);
      expect(entries.filter((e) => e.type === 'assistant_message').map((e) => e.content.trim())).toContain('Hello over RPC.');
      expect(seen.map((m) => m.seq)).toEqual(seen.map((_, i) => i + 1));
      const listed = (await c.logSessions()).sessions.find((s) => s.session_id === session_id);
      expect(listed).toMatchObject({ kind: 'run', agent: 'claude', finished: true });
      // A reader after the end gets the whole log from history, and the end.
      const later = await c.logGetHistory(session_id);
      expect(later.finished).toBe(true);
      expect(later.messages).toEqual(seen);
    } finally {
      c.close();
    }
  });

  it('is a run of the run service: listed in the ledger with the run states, its events and admission recorded, ended by run_cancel', { timeout: 90_000 }, async () => {
    const home = scripted.tempDir('sb-run-rpc-home-');
    const c = await connect({ home: t.home, env: cleanEnv() });
    try {
      const { session_id } = await c.runAgent({ agent: 'claude', prompt: 'say hello please', cwd: t.work, agent_home: home.dir, model_url: scripted.model.url });
      // One id: the session's log and the ledger's run.
      await until(async () => (await c.runGet(session_id)).run.status === 'completed', 'the run to complete in the ledger');
      const { run } = await c.runGet(session_id);
      expect(run).toMatchObject({ id: session_id, backend: 'claude', mode: 'stdio', cwd: t.work, keep_alive: false, created_by: 'owner', policy: "run_agent (the caller's own rules)" });
      expect((await c.runList({ backend: 'claude' })).runs.map((r) => r.id)).toContain(session_id);
      const events = (await c.runEvents(session_id)).events.flatMap((e) => (e.schema_version === 'v2' ? [e] : []));
      expect(events.filter((e) => e.type === 'state').map((e) => (e.data as { to: string }).to)).toEqual(['running', 'streaming', 'completed']);
      expect(events.find((e) => e.type === 'decision')?.data).toMatchObject({ decision: 'allow', rule: 'run_agent.caller', by: 'policy' });
      expect(events.some((e) => e.type === 'token' && JSON.stringify(e.data).includes('Hello over RPC.'))).toBe(true);
      expect(events.at(-1)?.type).toBe('done');
      // The log has the same reply.
      const log = await c.logGetHistory(session_id);
      expect(log.finished).toBe(true);
      expect(entriesOf(log.messages).some((e) => e.type === 'assistant_message' && e.content.includes('Hello over RPC.'))).toBe(true);

      // The bridge's own cancel ends a run_agent run, and its log finishes.
      const second = await c.runAgent({ agent: 'claude', prompt: 'take your time', cwd: t.work, agent_home: home.dir, model_url: scripted.model.url });
      await until(() => scripted.model.modelRequests().filter((r) => r.plan?.prompt.includes('take your time') === true).length > 0, 'the model to be asked');
      expect((await c.runCancel(second.session_id)).run).toMatchObject({ status: 'cancelled', reason: 'cancelled_by_user' });
      await until(async () => (await c.logGetHistory(second.session_id)).finished, 'the cancelled run\'s log to finish');
    } finally {
      c.close();
    }
  });

  it('cancels a run; its log finishes', { timeout: 90_000 }, async () => {
    const home = scripted.tempDir('sb-run-rpc-home-');
    const c = await connect({ home: t.home, env: cleanEnv() });
    try {
      const { session_id } = await c.runAgent({ agent: 'claude', prompt: 'take your time', cwd: t.work, agent_home: home.dir, model_url: scripted.model.url });
      const finished = { seen: false };
      await c.logSubscribe(session_id, {}, { log_finished: () => (finished.seen = true) });
      // Wait until the model was asked, so the cancel lands mid-run.
      await until(() => scripted.model.modelRequests().some((r) => r.plan?.prompt.includes('take your time') === true), 'the model to be asked');
      expect((await c.cancelRun(session_id)).cancelled).toBe(true);
      await until(() => finished.seen, 'log_finished');
      expect(finished.seen).toBe(true);
      expect((await c.cancelRun(session_id)).cancelled).toBe(false);
    } finally {
      c.close();
    }
  });

  it('keeps a multi-turn Claude session over RPC: each prompt a run continuing the last, permission requests judged by the session policy, a cancel that keeps the conversation, one log', { timeout: 120_000 }, async () => {
    const home = scripted.tempDir('sb-session-rpc-home-');
    const work = scripted.tempDir('sb-session-rpc-work-');
    const c = await connect({ home: t.home, env: cleanEnv() });
    try {
      const { session_id } = await c.agentSessionOpen({ agent: 'claude', cwd: work.dir, agent_home: home.dir, model_url: scripted.model.url, policy: 'auto' });
      const first = await c.agentSessionPrompt(session_id, 'write a file please');
      expect(first).toMatchObject({ status: 'completed', reply: 'Wrote session_out.txt.' });
      expect(first.permissions).toEqual([expect.objectContaining({ tool_name: 'Bash', decision: 'allow', decided_by: 'policy' })]);
      expect(readFileSync(path.join(work.dir, 'session_out.txt'), 'utf8')).toBe('from-session\n');
      const second = await c.agentSessionPrompt(session_id, 'say hello please');
      expect(second).toMatchObject({ status: 'completed', reply: 'Hello over RPC.' });
      // Each turn is a run of the run service, the next continuing the last one's conversation.
      expect((await c.runGet(first.run_id)).run).toMatchObject({ status: 'completed', backend: 'claude', mode: 'stdio', parent: null, policy: "agent_session (the caller's own rules)" });
      expect((await c.runGet(second.run_id)).run).toMatchObject({ status: 'completed', parent: first.run_id });
      const decisions = (await c.runEvents(first.run_id)).events.flatMap((e) => (e.type === 'decision' && e.schema_version === 'v2' ? [e.data] : []));
      expect(decisions).toEqual(expect.arrayContaining([expect.objectContaining({ decision: 'allow', rule: expect.stringMatching(/^agent_session\.approvals\.rules\[\d+\]$/), by: 'policy' })]));
      // A cancel stops the turn, not the session: the next prompt goes on in the same conversation.
      const slow = c.agentSessionPrompt(session_id, 'take your time');
      await until(() => scripted.model.modelRequests().some((r) => r.plan?.prompt.includes('take your time') === true), 'the model to be asked');
      await c.agentSessionCancel(session_id);
      const third = await slow;
      expect(third.status).toBe('cancelled');
      expect((await c.runGet(third.run_id)).run).toMatchObject({ status: 'cancelled', parent: second.run_id });
      const fourth = await c.agentSessionPrompt(session_id, 'say hello again please');
      expect(fourth).toMatchObject({ status: 'completed', reply: 'Hello over RPC.' });
      expect((await c.runGet(fourth.run_id)).run).toMatchObject({ parent: third.run_id });
      const history = await c.logGetHistory(session_id);
      const types = entriesOf(history.messages).map((e) => e.type);
      expect(types).toEqual(expect.arrayContaining(['user_message', 'command_run', 'tool_result', 'assistant_message']));
      // The four prompts, and Claude Code's own note of the interrupt.
      expect(entriesOf(history.messages).filter((e) => e.type === 'user_message').map((e) => e.content)).toEqual(['write a file please', 'say hello please', 'take your time', '[Request interrupted by user]', 'say hello again please']);
      // The session's entries word each permission as the run's governance decided it.
      expect(entriesOf(history.messages).some((e) => e.type === 'system_message' && /^allow Bash: allowed by rule \d+/.test(e.content))).toBe(true);
      // Had the cancel ended the conversation, the log would say the fourth turn began a new one.
      expect(entriesOf(history.messages).filter((e) => e.content.includes('starts a new one'))).toEqual([]);
      await c.agentSessionClose(session_id);
      await expect(c.agentSessionPrompt(session_id, 'again')).rejects.toMatchObject({ code: 'SESSION_NOT_FOUND' });
      expect((await c.logGetHistory(session_id)).finished).toBe(true);
      await expect(c.agentSessionOpen({ agent: 'shell', cwd: work.dir })).rejects.toMatchObject({ code: 'INVALID_PARAMS' });
      expect(existsSync(work.dir)).toBe(true);
    } finally {
      c.close();
    }
  });

  it('refuses a second prompt during a turn; a turn cancelled as a run ends the conversation, and the next prompt opens a new one and says so', { timeout: 120_000 }, async () => {
    const home = scripted.tempDir('sb-session-cancel-home-');
    const work = scripted.tempDir('sb-session-cancel-work-');
    const c = await connect({ home: t.home, env: cleanEnv() });
    try {
      const { session_id } = await c.agentSessionOpen({ agent: 'claude', cwd: work.dir, agent_home: home.dir, model_url: scripted.model.url, policy: 'ask' });
      const asked = scripted.model.modelRequests().length;
      const slow = c.agentSessionPrompt(session_id, 'take your time');
      await until(() => scripted.model.modelRequests().slice(asked).some((r) => r.plan?.prompt.includes('take your time') === true), 'the model to be asked');
      await expect(c.agentSessionPrompt(session_id, 'say hello please')).rejects.toMatchObject({ code: 'INVALID_REQUEST' });
      const running = (await c.runList({})).runs.find((r) => r.prompt === 'take your time' && r.status !== 'cancelled' && r.cwd === work.dir);
      expect(running).toBeDefined();
      await c.runCancel(running?.id ?? '');
      expect(await slow).toMatchObject({ status: 'cancelled', run_id: running?.id });
      const next = await c.agentSessionPrompt(session_id, 'say hello please');
      expect(next).toMatchObject({ status: 'completed', reply: 'Hello over RPC.' });
      // A new conversation: the run has no parent, and the log says the earlier context is gone.
      expect((await c.runGet(next.run_id)).run.parent).toBeNull();
      const history = await c.logGetHistory(session_id);
      expect(entriesOf(history.messages).filter((e) => e.content.includes('starts a new one, without the earlier context'))).toHaveLength(1);
      await c.agentSessionClose(session_id);
      expect((await c.logGetHistory(session_id)).finished).toBe(true);
    } finally {
      c.close();
    }
  });
});
