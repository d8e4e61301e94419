/**
 * Seed 001's log stream for any session (a pane's, or a structured run's): list, subscribe,
 * unsubscribe, read history, export; and structured runs started on an agent's headless mode.
 */
import { randomBytes } from 'node:crypto';
import { createWriteStream, readdirSync, rmSync, statSync } from 'node:fs';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import path from 'node:path';
import { ensurePrivateDir } from '../platform/index.js';
import { SwitchboardError } from '../core/errors.js';
import { checkSandbox } from '../agents/index.js';
import { ASK_POLICY, AUTO_APPROVE_POLICY } from '../approvals/policy/index.js';
import type { HandlerTable } from './operations.js';

type LogMethods = 'log_sessions' | 'log_subscribe' | 'log_unsubscribe' | 'log_get_history' | 'log_export' | 'run_agent' | 'cancel_run';

const DEFAULT_HISTORY_LIMIT = 1_000;

export const logHandlers: Pick<HandlerTable, LogMethods> = {
  log_sessions(ctx) {
    return { sessions: ctx.sessions.logs.list() };
  },

  log_subscribe(ctx, p) {
    const log = ctx.sessions.logs.get(p.session_id);
    return { subscription: ctx.session.logSubscribe(log, { history: p.history ?? true }), session_id: log.id };
  },

  log_unsubscribe(ctx, p) {
    ctx.session.unsubscribe(p.subscription);
    return { success: true };
  },

  log_get_history(ctx, p) {
    const log = ctx.sessions.logs.get(p.session_id);
    const after = p.after_seq ?? 0;
    const limit = p.limit ?? DEFAULT_HISTORY_LIMIT;
    const stats = log.store.stats();
    const messages = log.store.history().filter((m) => m.seq > after).slice(0, limit);
    return { session_id: log.id, messages, finished: log.store.finished, evicted: stats.evicted, last_seq: stats.lastSeq };
  },

  async log_export(ctx, p) {
    const log = ctx.sessions.logs.get(p.session_id);
    const dir = path.join(ctx.daemon.home, 'exports');
    ensurePrivateDir(dir);
    // One budget for the folder: exports are the caller's to remove, and the disk is not endless.
    const budget = ctx.daemon.exportsMaxBytes;
    const room = budget - folderBytes(dir);
    const full = (): SwitchboardError =>
      new SwitchboardError('LIMIT_EXCEEDED', `the exports folder is full (${budget} bytes at most): remove old exports from ${dir}`, { session_id: log.id, max_bytes: budget });
    if (room <= 0) throw full();
    const file = path.join(dir, `${log.id}-${new Date().toISOString().replace(/[:.]/g, '-')}-${randomBytes(3).toString('hex')}.jsonl`);
    let lines = 0;
    let bytes = 0;
    // Set from the stream's transform: an object, so the catch below sees the change.
    const cut = { overflowed: false };
    const counter = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        bytes += chunk.length;
        if (bytes > room) {
          cut.overflowed = true;
          done(full());
          return;
        }
        for (const byte of chunk) if (byte === 0x0a) lines++;
        done(null, chunk);
      },
    });
    // 'wx': a name that exists is never overwritten (the timestamp makes one unlikely anyway).
    const writing = pipeline(counter, createWriteStream(file, { flags: 'wx', mode: 0o600 }));
    try {
      // Both at once: a file that cannot be opened fails `writing`, which must not go unheard.
      await Promise.all([writing, log.store.exportJsonl(counter).then(() => counter.end())]);
    } catch (err) {
      counter.destroy();
      await writing.catch(() => undefined);
      // Never someone else's file: 'wx' refused one that was there (EEXIST); anything else is ours, half written.
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') rmSync(file, { force: true });
      if (cut.overflowed) throw full();
      throw new SwitchboardError('INTERNAL_ERROR', `the export failed: ${(err as Error).message}`, { session_id: log.id });
    }
    return { session_id: log.id, path: file, messages: lines };
  },

  run_agent(ctx, p) {
    const profile = ctx.agents.get(p.agent);
    if (!profile.data.headless_args) throw new SwitchboardError('INVALID_PARAMS', `${p.agent} has no headless mode`, { agent: p.agent });
    const cwd = ctx.panes.resolveCwd(p.cwd);
    const sandbox = p.agent_home !== undefined && p.model_url !== undefined ? checkSandbox({ home: p.agent_home, modelUrl: p.model_url }) : undefined;
    const { sessionId } = ctx.sessions.runAgent({ agent: p.agent, prompt: p.prompt, cwd, sandbox, args: p.args });
    return { session_id: sessionId };
  },

  cancel_run(ctx, p) {
    ctx.sessions.logs.get(p.session_id);
    return { cancelled: ctx.sessions.cancelRun(p.session_id) };
  },
};

/** Bytes of the files directly in `dir`. */
function folderBytes(dir: string): number {
  let total = 0;
  for (const name of readdirSync(dir)) {
    try {
      const stat = statSync(path.join(dir, name));
      if (stat.isFile()) total += stat.size;
    } catch {
      // removed meanwhile
    }
  }
  return total;
}

export const agentSessionHandlers: Pick<HandlerTable, 'agent_session_open' | 'agent_session_prompt' | 'agent_session_cancel' | 'agent_session_close'> = {
  async agent_session_open(ctx, p) {
    const cwd = ctx.panes.resolveCwd(p.cwd);
    const sandbox = p.agent_home !== undefined && p.model_url !== undefined ? checkSandbox({ home: p.agent_home, modelUrl: p.model_url }) : undefined;
    const policy = p.policy === 'auto' ? AUTO_APPROVE_POLICY : ASK_POLICY;
    const id = await ctx.sessions.openAgentSession({ agent: p.agent, cwd, sandbox, args: p.args, policy });
    // A session belongs to the connection that opened it: a client that goes away leaves no agent running.
    ctx.signal.addEventListener('abort', () => void ctx.sessions.closeAgentSession(id).catch(() => undefined), { once: true });
    return { session_id: id };
  },

  async agent_session_prompt(ctx, p) {
    const turn = await ctx.sessions.promptAgentSession(p.session_id, p.prompt, ctx.signal);
    const replies = turn.entries.filter((e) => e.type === 'assistant_message');
    return {
      status: turn.status,
      stop_reason: turn.stopReason,
      duration_ms: turn.durationMs,
      entries: turn.entries.length,
      permissions: turn.permissions.map((a) => ({ tool_name: a.request.toolName, decision: a.decision, reason: a.reason, decided_by: a.decidedBy })),
      reply: replies.at(-1)?.content ?? null,
    };
  },

  async agent_session_cancel(ctx, p) {
    await ctx.sessions.cancelAgentSessionTurn(p.session_id);
    return { success: true };
  },

  async agent_session_close(ctx, p) {
    await ctx.sessions.closeAgentSession(p.session_id);
    return { success: true };
  },
};
