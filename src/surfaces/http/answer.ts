/**
 * How every HTTP answer of the daemon is written, and the bounds on what a client may leave unread.
 * A JSON answer is serialized a piece at a time (a list item by item, never the whole list as one
 * string) and written a slice at a time, each slice only once the client took the one before
 * (backpressure): a client that does not read holds at most a slice and the kernel's buffers, not
 * the answer. Whatever writes without waiting (SSE, the MCP SDK) is held to the same bounds by the
 * server's `AnswerGuard`: past `maxUnreadBytes` unread, or with nothing taken for `writeTimeoutMs`
 * while an answer is pending, the connection is destroyed, counted, and logged through the log
 * limiter (a stranger's doing must not flood the log). JSON-RPC has the same kind of bound
 * (rpc/peer.ts, 64 MiB per connection); an HTTP answer streams, so it needs far less.
 */
import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { LogLimiter } from '../../core/log-limiter.js';

export interface AnswerLimits {
  /** Bytes of an answer not yet taken by the kernel for the client; past this the connection is destroyed. */
  maxUnreadBytes: number;
  /** A client that takes nothing of a pending answer for this long is dropped. */
  writeTimeoutMs: number;
}

/** The SSE stream's bound (4 MiB) for every answer; half a minute without reading a byte is a client gone. */
export const DEFAULT_ANSWER_LIMITS: AnswerLimits = { maxUnreadBytes: 4 * 1024 * 1024, writeTimeoutMs: 30_000 };

/** The most written at once: the writer waits for the client to take a slice before the next. */
const WRITE_SLICE_BYTES = 64 * 1024;
/** Small pieces (list items) are gathered to about this many characters before a write. */
const GATHER_CHARS = 16 * 1024;

export type DropReason = 'unread' | 'stalled';

interface Watch {
  /** What the kernel had taken of this connection's output at the last sign of progress. */
  taken: number;
  since: number;
}

/** The guard of the server that took each response (so SSE can check its bound without being handed the guard). */
const guardOf = new WeakMap<ServerResponse, AnswerGuard>();

/** Bytes of this response's connection the kernel has taken: grows while the client reads, stands still when it does not. */
function takenBy(res: ServerResponse): number {
  const socket = res.socket;
  if (!socket) return 0;
  // bytesWritten counts what is still queued too; less what is queued, it is what the kernel took.
  return socket.bytesWritten - socket.writableLength;
}

/** One server's bounds on its answers: every response it makes is watched from the start to its close. */
export class AnswerGuard {
  private readonly watched = new Map<ServerResponse, Watch>();
  private timer: NodeJS.Timeout | undefined;
  /** Connections dropped, by why: too much unread, or nothing read for the write timeout. */
  readonly drops: Record<DropReason, number> = { unread: 0, stalled: 0 };

  constructor(
    readonly limits: AnswerLimits,
    private readonly log: LogLimiter,
  ) {}

  /** Watches `res` until it closes. */
  watch(res: ServerResponse): void {
    guardOf.set(res, this);
    this.watched.set(res, { taken: takenBy(res), since: Date.now() });
    res.once('close', () => {
      this.watched.delete(res);
      guardOf.delete(res);
      if (this.watched.size === 0) this.stop();
    });
    this.timer ??= this.start();
  }

  /** Destroys `res` when more than the bound is unread; false when it is gone (now or before). */
  check(res: ServerResponse): boolean {
    if (res.destroyed) return false;
    const unread = res.writableLength;
    if (unread <= this.limits.maxUnreadBytes) return true;
    this.drop(res, 'unread', unread);
    return false;
  }

  /** Stops watching (the server closed). */
  close(): void {
    this.stop();
    this.watched.clear();
  }

  private start(): NodeJS.Timeout {
    // Often enough that a stalled answer goes within a quarter of its timeout past it.
    const timer = setInterval(() => this.sweep(), Math.max(50, Math.min(1_000, this.limits.writeTimeoutMs / 4)));
    timer.unref();
    return timer;
  }

  private stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private sweep(): void {
    const now = Date.now();
    for (const [res, watch] of this.watched) {
      if (!this.check(res)) continue;
      const unread = res.writableLength;
      const taken = takenBy(res);
      if (unread === 0 || taken > watch.taken) {
        watch.taken = taken;
        watch.since = now;
      } else if (now - watch.since >= this.limits.writeTimeoutMs) {
        this.drop(res, 'stalled', unread);
      }
    }
  }

  private drop(res: ServerResponse, reason: DropReason, unread: number): void {
    this.drops[reason] += 1;
    const message = reason === 'unread' ? 'http: dropped a client that left more of its answer unread than the bound' : 'http: dropped a client that read nothing of its answer for the write timeout';
    this.log.log('info', message, { unread_bytes: unread, limit_bytes: this.limits.maxUnreadBytes, write_timeout_ms: this.limits.writeTimeoutMs });
    this.watched.delete(res);
    res.destroy();
  }
}

/**
 * After a write that does not wait for the client (SSE): destroys `res` past the unread bound of
 * the guard watching it (or the default bound). False when it is gone.
 */
export function withinUnreadBound(res: ServerResponse): boolean {
  const guard = guardOf.get(res);
  if (guard) return guard.check(res);
  if (res.destroyed) return false;
  if (res.writableLength <= DEFAULT_ANSWER_LIMITS.maxUnreadBytes) return true;
  res.destroy();
  return false;
}

/** Resolves true once `res` can take more, false when it closed first. */
function drained(res: ServerResponse): Promise<boolean> {
  return new Promise((resolve) => {
    const done = (ok: boolean): void => {
      res.off('drain', onDrain);
      res.off('close', onClose);
      resolve(ok);
    };
    const onDrain = (): void => done(true);
    const onClose = (): void => done(false);
    res.on('drain', onDrain);
    res.on('close', onClose);
  });
}

/** Writes `text` a slice at a time, each once the client took the one before; false when the client went away. */
async function writeSliced(res: ServerResponse, text: string): Promise<boolean> {
  const bytes = Buffer.from(text, 'utf8');
  for (let at = 0; at < bytes.length; at += WRITE_SLICE_BYTES) {
    if (res.destroyed) return false;
    if (!res.write(bytes.subarray(at, at + WRITE_SLICE_BYTES)) && !(await drained(res))) return false;
  }
  return !res.destroyed;
}

/**
 * Writes an answer whose body is `pieces`, gathered into writes of a few KiB and sent with
 * backpressure, then ends it. Resolves false when the client went away (the rest is not made).
 */
async function writeAnswer(res: ServerResponse, status: number, headers: OutgoingHttpHeaders, pieces: Iterable<string> | AsyncIterable<string>): Promise<boolean> {
  res.writeHead(status, headers);
  let gathered = '';
  for await (const piece of pieces) {
    gathered += piece;
    if (gathered.length < GATHER_CHARS) continue;
    const text = gathered;
    gathered = '';
    if (!(await writeSliced(res, text))) return false;
  }
  if (gathered !== '' && !(await writeSliced(res, gathered))) return false;
  res.end();
  return true;
}

const JSON_HEADERS = { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store', 'X-Content-Type-Options': 'nosniff' };

/**
 * A JSON answer: small ones whole with their length, anything larger streamed (lists item by
 * item). Resolves false when the client went away before the end.
 */
export async function sendJson(res: ServerResponse, status: number, body: unknown, headers: OutgoingHttpHeaders = {}): Promise<boolean> {
  const pieces = jsonPieces(body, 0);
  let head = '';
  for (let next = pieces.next(); !next.done; next = pieces.next()) {
    head += next.value;
    if (head.length >= GATHER_CHARS) return writeAnswer(res, status, { ...JSON_HEADERS, ...headers }, prepend(head, pieces));
  }
  res.writeHead(status, { ...JSON_HEADERS, ...headers, 'Content-Length': Buffer.byteLength(head) });
  res.end(head);
  return !res.destroyed;
}

function* prepend(first: string, rest: Iterator<string>): Generator<string> {
  yield first;
  for (let next = rest.next(); !next.done; next = rest.next()) yield next.value;
}

/** JSON.stringify, with null where it would give nothing (undefined, a function, a symbol), as it does in a list. */
function json(value: unknown): string {
  return value === undefined || typeof value === 'function' || typeof value === 'symbol' ? 'null' : JSON.stringify(value);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && typeof (value as { toJSON?: unknown }).toJSON !== 'function';
}

/**
 * `value` as JSON text, exactly as JSON.stringify writes it, in pieces: the top object key by key,
 * and every list item by item (each item whole), so no answer is one string the size of a list.
 */
export function* jsonPieces(value: unknown, depth = 0): Generator<string> {
  if (Array.isArray(value)) {
    yield '[';
    for (let i = 0; i < value.length; i++) yield `${i > 0 ? ',' : ''}${json(value[i])}`;
    yield ']';
    return;
  }
  if (depth === 0 && isPlainObject(value)) {
    yield '{';
    let first = true;
    for (const [key, item] of Object.entries(value)) {
      if (item === undefined || typeof item === 'function' || typeof item === 'symbol') continue;
      yield `${first ? '' : ','}${JSON.stringify(key)}:`;
      first = false;
      yield* jsonPieces(item, depth + 1);
    }
    yield '}';
    return;
  }
  yield json(value);
}
