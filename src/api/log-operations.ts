/**
 * Seed 001's log stream for any session (a pane's, a structured run's, a conversation's): list,
 * subscribe, unsubscribe, read history, export to a file (log_export) or to a stream (the
 * dashboard's export route).
 */
import { randomBytes } from 'node:crypto';
import { createWriteStream, readdirSync, rmSync, statSync } from 'node:fs';
import { Transform, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import path from 'node:path';
import { ensurePrivateDir } from '../platform/index.js';
import { SwitchboardError } from '../core/errors.js';
import type { Handler } from './handler.js';
import type { Services } from './services.js';
import { sessionInfo } from './to-wire.js';

type LogMethods = 'log_sessions' | 'log_subscribe' | 'log_unsubscribe' | 'log_get_history' | 'log_export';

const DEFAULT_HISTORY_LIMIT = 1_000;

export const logHandlers: { [M in LogMethods]: Handler<M> } = {
  log_sessions(ctx) {
    return { sessions: ctx.logs.logs.list().map(sessionInfo) };
  },

  log_subscribe(ctx, p) {
    const log = ctx.logs.logs.get(p.session_id);
    return { subscription: ctx.caller.logSubscribe(log, { history: p.history ?? true }), session_id: log.id };
  },

  log_unsubscribe(ctx, p) {
    ctx.caller.unsubscribe(p.subscription);
    return { success: true };
  },

  log_get_history(ctx, p) {
    const log = ctx.logs.logs.get(p.session_id);
    const after = p.after_seq ?? 0;
    const limit = p.limit ?? DEFAULT_HISTORY_LIMIT;
    const stats = log.store.stats();
    const messages = log.store.history().filter((m) => m.seq > after).slice(0, limit);
    return { session_id: log.id, messages, finished: log.store.finished, evicted: stats.evicted, last_seq: stats.lastSeq };
  },

  async log_export(ctx, p) {
    const log = ctx.logs.logs.get(p.session_id);
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

/**
 * A session's whole log as JSONL, for a surface that streams it (the dashboard's export route):
 * a writer, or undefined when there is no such session.
 */
export function sessionExport(services: Services, sessionId: string): ((out: Writable) => Promise<void>) | undefined {
  const log = services.logs.logs.find(sessionId);
  return log ? (out) => log.store.exportJsonl(out) : undefined;
}
