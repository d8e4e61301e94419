/**
 * A structured run started over JSON-RPC (`run_agent`), followed through seed 001's log stream:
 * entries as they come, then `log_finished`; a second reader joining afterwards gets the same log
 * from history; a cancelled run finishes too.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type LogMessage, type NormalizedEntry } from '../../src/index.js';
import { ModelServer } from '../../src/model-server/index.js';
import { useTestDaemon } from '../support/daemon.js';
import { cleanEnv } from '../support/cli.js';
import { tempDir } from '../support/shell.js';
import { useAgentBinaries } from './agent-flow.js';

useAgentBinaries();
const t = useTestDaemon();
let model: ModelServer;
const dirs: { cleanup: () => void }[] = [];

beforeAll(async () => {
  model = await ModelServer.start({
    scenario: {
      name: 'run-agent',
      title: 'run_agent over RPC',
      rules: [
        { match: 'say hello', steps: [{ text: 'Hello over RPC.' }] },
        { match: 'take your time', steps: [{ text: 'Finally done.', delay_ms: 60_000 }] },
      ],
    },
  });
});

afterAll(async () => {
  await model.close();
  for (const d of dirs) d.cleanup();
});

const entriesOf = (messages: LogMessage[]): NormalizedEntry[] => messages.flatMap((m) => (m.msg.type === 'normalized' ? [m.msg.entry] : []));

describe('run_agent and the log stream', () => {
  it('streams a headless run to a subscriber, then says it finished', { timeout: 90_000 }, async () => {
    const home = tempDir('sb-run-rpc-home-');
    dirs.push(home);
    const c = await connect({ home: t.home, env: cleanEnv() });
    try {
      const { session_id } = await c.runAgent({ agent: 'claude', prompt: 'say hello please', cwd: t.work, agent_home: home.dir, model_url: model.url });
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

  it('cancels a run; its log finishes', { timeout: 90_000 }, async () => {
    const home = tempDir('sb-run-rpc-home-');
    dirs.push(home);
    const c = await connect({ home: t.home, env: cleanEnv() });
    try {
      const { session_id } = await c.runAgent({ agent: 'claude', prompt: 'take your time', cwd: t.work, agent_home: home.dir, model_url: model.url });
      const finished = { seen: false };
      await c.logSubscribe(session_id, {}, { log_finished: () => (finished.seen = true) });
      // Wait until the model was asked, so the cancel lands mid-run.
      for (let i = 0; i < 400 && !model.modelRequests().some((r) => r.plan?.prompt.includes('take your time')); i++) await new Promise((r) => setTimeout(r, 50));
      expect((await c.cancelRun(session_id)).cancelled).toBe(true);
      for (let i = 0; i < 400 && !finished.seen; i++) await new Promise((r) => setTimeout(r, 50));
      expect(finished.seen).toBe(true);
      expect((await c.cancelRun(session_id)).cancelled).toBe(false);
    } finally {
      c.close();
    }
  });
});
