/**
 * Seed 001's log stream over JSON-RPC and the TypeScript client, for a pane's session: history then
 * live with no gap or duplicate, many subscribers, history reads, export to JSONL, finished on exit,
 * and clear errors for bad input.
 */
import { readFileSync, statSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { connect, RpcError, type LogMessage, type SwitchboardClient } from '../src/index.js';
import { useTestDaemon } from './support/daemon.js';
import { BASH_ARGV, BASH_ENV } from './support/shell.js';
import { cleanEnv } from './support/cli.js';

const t = useTestDaemon();

async function client(): Promise<SwitchboardClient> {
  return connect({ home: t.home, env: cleanEnv() });
}

const stdoutOf = (messages: LogMessage[]): string => messages.map((m) => (m.msg.type === 'stdout' ? m.msg.content : '')).join('');

async function until(check: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('session logs over JSON-RPC', () => {
  it('lists a pane as a session and streams its output to a subscriber, history first', async () => {
    const c = await client();
    try {
      const { pane_id } = await c.createPane({ argv: [...BASH_ARGV], env: BASH_ENV, cwd: t.work });
      await c.sendText(pane_id, 'echo first-$((40+2))', { addNewline: true });
      await c.waitFor(pane_id, { pattern: 'first-42' });
      const { sessions } = await c.logSessions();
      expect(sessions.find((s) => s.session_id === pane_id)).toMatchObject({ kind: 'pane', finished: false, agent: null });

      const seen: LogMessage[] = [];
      const sub = await c.logSubscribe(pane_id, {}, { log_message: (n) => seen.push(...n.messages) });
      await until(() => stdoutOf(seen).includes('first-42'), 'the history');
      await c.sendText(pane_id, 'echo second-$((40+3))', { addNewline: true });
      await until(() => stdoutOf(seen).includes('second-43'), 'live output');
      // Every message once, in order, from the first.
      expect(seen.map((m) => m.seq)).toEqual(seen.map((_, i) => i + 1));

      const history = await c.logGetHistory(pane_id, { afterSeq: 1 });
      expect(history.messages[0]?.seq).toBe(2);
      expect(history.finished).toBe(false);
      expect(history.last_seq).toBeGreaterThanOrEqual(seen.length);
      await sub.unsubscribe();
      await c.kill(pane_id);
    } finally {
      c.close();
    }
  });

  it('gives a subscriber that joins mid-stream every message exactly once', async () => {
    const c = await client();
    try {
      const { pane_id } = await c.createPane({ argv: [...BASH_ARGV], env: BASH_ENV, cwd: t.work });
      await c.sendText(pane_id, 'for i in $(seq 1 3000); do echo "line-$i"; done; echo all-done', { addNewline: true });
      // Joins while the loop is printing.
      await c.waitFor(pane_id, { pattern: 'line-[0-9]{3}' });
      const seen: LogMessage[] = [];
      let finished = false;
      await c.logSubscribe(pane_id, {}, { log_message: (n) => seen.push(...n.messages), log_finished: () => (finished = true) });
      await c.waitFor(pane_id, { pattern: '^all-done', flags: 'm', timeoutMs: 60_000 });
      await c.sendText(pane_id, 'exit', { addNewline: true });
      await until(() => finished, 'log_finished');
      const seqs = seen.map((m) => m.seq);
      expect(new Set(seqs).size).toBe(seqs.length);
      expect(seqs).toEqual(seqs.map((_, i) => i + 1));
      const text = stdoutOf(seen);
      for (const n of [1, 1500, 3000]) expect(text).toContain(`line-${n}\r\n`);
      // The exit is logged as the last entry.
      const last = seen.at(-1)?.msg;
      expect(last?.type === 'normalized' ? last.entry.content : '').toMatch(/process exited \(code 0\)/);
    } finally {
      c.close();
    }
  });

  it('exports a session to a private JSONL file', async () => {
    const c = await client();
    try {
      const { pane_id } = await c.createPane({ argv: [...BASH_ARGV], env: BASH_ENV, cwd: t.work });
      await c.sendText(pane_id, 'echo export-$((1+1))', { addNewline: true });
      await c.waitFor(pane_id, { pattern: 'export-2' });
      const exported = await c.logExport(pane_id);
      expect(exported.path.startsWith(t.home)).toBe(true);
      expect(statSync(exported.path).mode & 0o777).toBe(0o600);
      const lines = readFileSync(exported.path, 'utf8').trimEnd().split('\n');
      expect(lines).toHaveLength(exported.messages);
      const parsed = lines.map((l) => JSON.parse(l) as LogMessage);
      expect(parsed.map((m) => m.seq)).toEqual(parsed.map((_, i) => i + 1));
      expect(stdoutOf(parsed)).toContain('export-2');
      await c.kill(pane_id);
    } finally {
      c.close();
    }
  });

  it('answers bad input with stable codes and keeps serving', async () => {
    const c = await client();
    try {
      const missing = await c.logSubscribe('no-such-session').catch((e: unknown) => e);
      expect(missing).toBeInstanceOf(RpcError);
      expect(missing).toMatchObject({ code: 'SESSION_NOT_FOUND', rpcErrorCode: -32009 });
      await expect(c.logGetHistory('', {})).rejects.toMatchObject({ code: 'INVALID_PARAMS' });
      await expect(c.request('log_get_history', { session_id: 'x', limit: 0 })).rejects.toMatchObject({ code: 'INVALID_PARAMS' });
      await expect(c.request('log_subscribe', { session_id: 'x', extra: 1 } as never)).rejects.toMatchObject({ code: 'INVALID_PARAMS' });
      await expect(c.logExport('no-such-session')).rejects.toMatchObject({ code: 'SESSION_NOT_FOUND' });
      await expect(c.runAgent({ agent: 'shell', prompt: 'hi', cwd: t.work })).rejects.toMatchObject({ code: 'INVALID_PARAMS' });
      await expect(c.runAgent({ agent: 'nobody', prompt: 'hi', cwd: t.work })).rejects.toMatchObject({ code: 'INVALID_PARAMS' });
      await expect(c.request('log_unsubscribe', { subscription: 'nope' })).rejects.toMatchObject({ code: 'INVALID_PARAMS' });
      expect((await c.ping()).pong).toBe(true);
    } finally {
      c.close();
    }
  });
});
