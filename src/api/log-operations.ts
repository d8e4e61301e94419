/**
 * Seed 001's log stream for any session (a pane's, a structured run's, a conversation's): list,
 * subscribe, unsubscribe, read history, export to a file (log_export) or to a stream (the
 * dashboard's export route).
 */
import { randomBytes } from 'node:crypto';
import { createWriteStream, openSync, rmSync } from 'node:fs';
import { Transform, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import path from 'node:path';
import { ensurePrivateDir } from '../platform/index.js';
import { drainOrClose } from '../core/drain.js';
import { SwitchboardError } from '../core/errors.js';
import type { SessionLog } from '../logs/index.js';
import type { LogMsg } from '../contract/entry.js';
import type { Result } from '../protocol/methods.js';
import type { OperationContext } from './context.js';
import type { Handler } from './handler.js';
import { nodePaneId, parseNodePaneId, type NodeLogPage, type NodePaneRef, type RemotePanes } from './remote-panes.js';
import type { Services } from './services.js';
import { ExportRoom } from './export-room.js';
import { sessionInfo } from './to-wire.js';

type LogMethods = 'log_sessions' | 'log_subscribe' | 'log_unsubscribe' | 'log_get_history' | 'log_export';

const DEFAULT_HISTORY_LIMIT = 1_000;
/** Messages asked of a node per page of an export (log_read's most). */
const NODE_EXPORT_PAGE = 10_000;
/**
 * The most pages one export of a node's session reads: a page carries up to half of NATS's
 * max_payload, so this is gigabytes, far past what a node's output budget holds.
 */
const MAX_NODE_EXPORT_PAGES = 10_000;

export const logHandlers: { [M in LogMethods]: Handler<M> } = {
  async log_sessions(ctx) {
    const own = ctx.logs.logs.list().map(sessionInfo);
    const remote = ctx.nodePanes.remote;
    return { sessions: remote ? [...own, ...(await remote.logSessions(ctx.signal))] : own };
  },

  async log_subscribe(ctx, p) {
    const ref = parseNodePaneId(p.session_id);
    if (ref) return { subscription: await ctx.caller.nodeLogSubscribe(ref, remoteLogs(ctx, ref), { history: p.history ?? true }), session_id: p.session_id };
    const log = ctx.logs.logs.get(p.session_id);
    return { subscription: ctx.caller.logSubscribe(log, { history: p.history ?? true }), session_id: log.id };
  },

  log_unsubscribe(ctx, p) {
    ctx.caller.unsubscribe(p.subscription);
    return { success: true };
  },

  async log_get_history(ctx, p) {
    const after = p.after_seq ?? 0;
    const limit = p.limit ?? DEFAULT_HISTORY_LIMIT;
    const ref = parseNodePaneId(p.session_id);
    if (ref) {
      const { waited: _waited, ...page } = await remoteLogs(ctx, ref).readLog(ref, { after_seq: after, limit, wait_ms: 0 }, ctx.signal);
      return { session_id: p.session_id, ...page };
    }
    const log = ctx.logs.logs.get(p.session_id);
    return { session_id: log.id, ...logPage(log, after, limit) };
  },

  async log_export(ctx, p) {
    const ref = parseNodePaneId(p.session_id);
    // A node's session is asked for its first page before any file is made (one it does not have is SESSION_NOT_FOUND).
    const log = ref ? { id: p.session_id, write: await nodeLogExport(remoteLogs(ctx, ref), ref, { signal: ctx.signal }) } : localLogExport(ctx.logs.logs.get(p.session_id));
    const dir = path.join(ctx.daemon.home, 'exports');
    ensurePrivateDir(dir);
    // One budget for the folder, shared by the exports going at once: exports are the caller's to remove, and the disk is not endless.
    const budget = ctx.daemon.exportsMaxBytes;
    const full = (): SwitchboardError =>
      new SwitchboardError('LIMIT_EXCEEDED', `the exports folder is full (${budget} bytes at most): remove old exports from ${dir}`, { session_id: log.id, max_bytes: budget });
    const room = ExportRoom.enter(dir, budget);
    try {
      if (room.full) throw full();
      return await writeExport(log, dir, room, full, ref !== undefined);
    } finally {
      room.end();
    }
  },
};

/** Writes `log` as JSONL into a new file in `dir`, each chunk taken out of `room`: the file's path and its lines. */
async function writeExport(log: { id: string; write: (out: Writable) => Promise<void> }, dir: string, room: ExportRoom, full: () => SwitchboardError, fromNode: boolean): Promise<Result<'log_export'>> {
  {
    // A node's session is `<node>/<session>`: one file name all the same.
    const file = path.join(dir, `${log.id.replace(/[^\w.-]/g, '_')}-${new Date().toISOString().replace(/[:.]/g, '-')}-${randomBytes(3).toString('hex')}.jsonl`);
    let lines = 0;
    let bytes = 0;
    // Set from the stream's transform: an object, so the catch below sees the change.
    const cut = { overflowed: false };
    const counter = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        if (!room.take(chunk.length)) {
          cut.overflowed = true;
          done(full());
          return;
        }
        bytes += chunk.length;
        for (const byte of chunk) if (byte === 0x0a) lines++;
        done(null, chunk);
      },
    });
    // 'wx': a name that exists is never overwritten (the timestamp makes one unlikely anyway). Opened
    // here, not by the stream: a file the stream opened after a failure was seen would outlive its removal.
    let fd: number;
    try {
      fd = openSync(file, 'wx', 0o600);
    } catch (err) {
      throw new SwitchboardError('INTERNAL_ERROR', `the export failed: ${(err as Error).message}`, { session_id: log.id });
    }
    const writing = pipeline(counter, createWriteStream(file, { fd }));
    try {
      // Both at once: a write that fails `writing` (a full disk) must not go unheard.
      await Promise.all([writing, log.write(counter).then(() => counter.end())]);
    } catch (err) {
      counter.destroy();
      await writing.catch(() => undefined);
      // Ours, half written.
      rmSync(file, { force: true });
      room.giveBack(bytes);
      if (cut.overflowed) throw full();
      // What the node answered (it went away, the session is gone there) is said as it said it.
      if (fromNode && err instanceof SwitchboardError) throw err;
      throw new SwitchboardError('INTERNAL_ERROR', `the export failed: ${(err as Error).message}`, { session_id: log.id });
    }
    return { session_id: log.id, path: file, messages: lines };
  }
}

/** The nodes' logs, on a controller; SESSION_NOT_FOUND on a daemon that is none. */
function remoteLogs(ctx: OperationContext, ref: NodePaneRef): RemotePanes {
  const remote = ctx.nodePanes.remote;
  if (!remote) throw new SwitchboardError('SESSION_NOT_FOUND', `session ${nodePaneId(ref)} is on node ${ref.node}, and this daemon is not a cluster controller`, { session_id: nodePaneId(ref), node: ref.node });
  return remote;
}

/**
 * A session's retained messages after `after`, oldest first, at most `limit`; with `maxBytes`, as
 * many as that much JSON holds (at least one, cut to fit when it alone is larger: a message that
 * could never be carried would stop a reader for good).
 */
export function logPage(log: SessionLog, after: number, limit: number, maxBytes = Infinity): Omit<Result<'log_get_history'>, 'session_id'> {
  const stats = log.store.stats();
  const messages: ReturnType<SessionLog['store']['history']> = [];
  let bytes = 0;
  for (const message of log.store.history()) {
    if (message.seq <= after) continue;
    if (messages.length >= limit) break;
    let carried = message;
    let size = maxBytes === Infinity ? 0 : Buffer.byteLength(JSON.stringify(message));
    if (size > maxBytes) {
      carried = { seq: message.seq, msg: cutToFit(message.msg, size, maxBytes) };
      size = Buffer.byteLength(JSON.stringify(carried));
    }
    if (messages.length > 0 && bytes + size > maxBytes) break;
    messages.push(carried);
    bytes += size;
  }
  return { messages, finished: log.store.finished, evicted: stats.evicted, last_seq: stats.lastSeq };
}

/** A message too large to carry, as one that fits: its text's start and what was left out, or (a structured entry) a line saying it was. */
function cutToFit(msg: LogMsg, size: number, maxBytes: number): LogMsg {
  const note = `[${String(size)} bytes of this message were more than one answer carries (${String(maxBytes)}): cut here]`;
  // A character may take 6 bytes as JSON (a control character's escape): this many always fit.
  if (msg.type !== 'normalized') return { type: msg.type, content: `${msg.content.slice(0, Math.floor(maxBytes / 8))}… ${note}` };
  return { type: 'stderr', content: note };
}


/**
 * A session's whole log as JSONL, for a surface that streams it (the dashboard's export route):
 * a writer, or undefined when there is no such session (an id that names none, a node's session
 * its node does not have). A node's session is read once before this answers, so a node that
 * cannot be read rejects here, before anything is sent.
 */
export async function sessionExport(services: Services, sessionId: string): Promise<((out: Writable) => Promise<void>) | undefined> {
  let ref: NodePaneRef | undefined;
  try {
    ref = parseNodePaneId(sessionId);
  } catch {
    return undefined;
  }
  if (ref) {
    const remote = services.nodePanes.remote;
    if (!remote) return undefined;
    try {
      return await nodeLogExport(remote, ref);
    } catch (err) {
      if (err instanceof SwitchboardError && err.code === 'SESSION_NOT_FOUND') return undefined;
      throw err;
    }
  }
  const log = services.logs.logs.find(sessionId);
  return log ? localLogExport(log).write : undefined;
}

/** A session of this daemon's as JSONL: its spilled messages, then those it retains. */
function localLogExport(log: SessionLog): { id: string; write: (out: Writable) => Promise<void> } {
  return { id: log.id, write: (out) => log.store.exportJsonl(out) };
}

/**
 * A node session's log as JSONL, as a session here is written ({seq, msg} per line): what the node
 * retains of it (a node spills nothing to disk), read in pages up to its last message when the
 * export began, so a log that keeps growing still ends. Its first page is read before this
 * resolves (a session the node does not have rejects here, SESSION_NOT_FOUND). Each message is
 * written once and in order whatever the node answers, and a node that keeps sending new
 * messages for more than `maxPages` pages is stopped (INTERNAL_ERROR). `signal` stops it between
 * messages.
 */
export async function nodeLogExport(remote: Pick<RemotePanes, 'readLog'>, ref: NodePaneRef, options: { signal?: AbortSignal; maxPages?: number } = {}): Promise<(out: Writable) => Promise<void>> {
  const { signal } = options;
  const read = (after: number): Promise<NodeLogPage> => {
    signal?.throwIfAborted();
    return remote.readLog(ref, { after_seq: after, limit: NODE_EXPORT_PAGE, wait_ms: 0 }, signal);
  };
  const first = await read(0);
  const end = first.last_seq;
  const maxPages = options.maxPages ?? MAX_NODE_EXPORT_PAGES;
  return async (out) => {
    let after = 0;
    let page = first;
    for (let pages = 1; ; pages++) {
      const before = after;
      for (const message of page.messages) {
        // Taken already, or after the export began: left out (a node that repeats or reorders writes each once, in order).
        if (message.seq <= after || message.seq > end) continue;
        if (out.destroyed) throw new Error('the export was abandoned (its stream was closed)');
        signal?.throwIfAborted();
        if (!out.write(`${JSON.stringify(message)}\n`)) await drainOrClose(out);
        after = message.seq;
      }
      // Nothing new in a page (the rest was evicted meanwhile), or the log is read to where it was.
      if (after === before || after >= end) return;
      if (pages >= maxPages) throw new SwitchboardError('INTERNAL_ERROR', `node ${ref.node} was still sending the log of ${nodePaneId(ref)} after ${String(maxPages)} pages: the export stopped there`, { session_id: nodePaneId(ref), node: ref.node });
      page = await read(after);
    }
  };
}

