/**
 * A session's message log: bounded in memory (bytes and count, oldest evicted first), replayable,
 * and live. A subscriber gets the retained history and then every new message, with no gap and
 * no duplicate: taking the history and joining the live stream happen in one synchronous step.
 * Delivery is batched (one batch per window, 16 ms by default) so a burst costs one callback per
 * subscriber, and it never blocks the producer: each subscriber has a bounded queue, and one that
 * falls too far behind (still busy with an earlier batch while its queue passes its limit) is
 * dropped with a notice instead of holding messages (or the producer) back.
 * Evicted messages can spill to a JSONL file so that an export still holds the whole session.
 */
import { createReadStream, createWriteStream, type WriteStream } from 'node:fs';
import type { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { drainOrClose } from '../core/drain.js';

export interface MsgStoreOptions<T> {
  /** Bytes retained in memory (default 50 MB), as `sizeOf` counts them. */
  maxBytes?: number;
  /** Messages retained in memory (default 10,000). */
  maxMessages?: number;
  /** How a message is counted against maxBytes (default: its JSON length). */
  sizeOf?: (msg: T) => number;
  /** Batching window for delivery to subscribers, in ms (default 16; 0 delivers on the next tick). */
  batchMs?: number;
  /** Messages a subscriber may have waiting before it is dropped (default 10,000). */
  subscriberQueueLimit?: number;
  /** Where evicted messages are appended as JSONL, so exportJsonl covers the whole session. */
  spillFile?: string;
  /** The spill file's bound (default 1 GiB): past it, evicted messages are dropped (counted in `unspilled`), not written. */
  maxSpillBytes?: number;
  /** Called once, when the spill file first has no room for an evicted message (it and later ones are dropped). */
  onSpillFull?: () => void;
}

/** A message with its place in the session: seq counts from 1 and never repeats. */
export interface StoredMsg<T> {
  seq: number;
  msg: T;
}

export interface SubscribeOptions {
  /** Replay retained history first (default true); false starts with the next message. */
  history?: boolean;
  /** Called once if the subscriber is dropped for falling behind; no batch follows it. */
  onDropped?: (reason: string) => void;
  /** Called once when the session finishes (after the last batch). */
  onFinished?: () => void;
}

/** The listener may return a promise: the next batch waits for it, and messages queue meanwhile. */
export type BatchListener<T> = (batch: StoredMsg<T>[]) => void | Promise<void>;

export interface MsgStoreStats {
  retained: number;
  retainedBytes: number;
  evicted: number;
  lastSeq: number;
  subscribers: number;
  dropped: number;
  /** Evicted messages the spill file had no room for (they are in no export). */
  unspilled: number;
}

const DEFAULT_MAX_BYTES = 50 * 1024 * 1024;
const DEFAULT_MAX_MESSAGES = 10_000;
export const DEFAULT_BATCH_MS = 16;
const DEFAULT_SUBSCRIBER_QUEUE_LIMIT = 10_000;
const DEFAULT_MAX_SPILL_BYTES = 1024 * 1024 * 1024;
/** A subscriber that is not busy may hold this many times its limit, for a synchronous burst, before it counts as behind. */
const BURST_FACTOR = 10;

/** A message's size as JSON (undefined, which JSON cannot hold, counts as nothing). */
function jsonBytes(msg: unknown): number {
  const json: string | undefined = JSON.stringify(msg);
  // JSON.stringify's type says string, but undefined (and functions) give undefined at run time.
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition
  return json === undefined ? 0 : Buffer.byteLength(json);
}

interface Entry<T> extends StoredMsg<T> {
  bytes: number;
}

class Subscriber<T> {
  queue: StoredMsg<T>[] = [];
  /** Queue length allowed: the limit, plus the history it was given on joining until that is delivered. */
  limit = 0;
  busy = false;
  closed = false;
  finishPending = false;
  constructor(
    readonly listener: BatchListener<T>,
    readonly options: SubscribeOptions,
  ) {}
}

export class MsgStore<T> {
  private maxBytes: number;
  private maxSpillBytes: number;
  private readonly maxMessages: number;
  private readonly sizeOf: (msg: T) => number;
  private readonly batchMs: number;
  private readonly queueLimit: number;
  // A ring in an array: entries[head..] are retained; the dead prefix (emptied slots, so what was
  // evicted is free at once and memory follows maxBytes) is cut off now and then.
  private entries: (Entry<T> | undefined)[] = [];
  private head = 0;
  private bytes = 0;
  private seq = 0;
  private evictedCount = 0;
  private droppedCount = 0;
  private readonly subscribers = new Set<Subscriber<T>>();
  private flushTimer: NodeJS.Timeout | undefined;
  private spill: WriteStream | undefined;
  private spillError: Error | undefined;
  private finishedFlag = false;
  private spilledBytes = 0;
  private unspilledCount = 0;

  constructor(private readonly options: MsgStoreOptions<T> = {}) {
    this.maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
    this.maxSpillBytes = options.maxSpillBytes ?? DEFAULT_MAX_SPILL_BYTES;
    this.maxMessages = options.maxMessages ?? DEFAULT_MAX_MESSAGES;
    if (!(this.maxBytes > 0) || !(this.maxMessages > 0)) throw new RangeError('maxBytes and maxMessages must be positive');
    this.sizeOf = options.sizeOf ?? jsonBytes;
    this.batchMs = options.batchMs ?? DEFAULT_BATCH_MS;
    this.queueLimit = options.subscriberQueueLimit ?? DEFAULT_SUBSCRIBER_QUEUE_LIMIT;
  }

  get finished(): boolean {
    return this.finishedFlag;
  }

  /**
   * Changes the bounds (a share of a daemon-wide budget that moved): `maxBytes` in memory, evicting
   * (and spilling) at once what no longer fits; `maxSpillBytes` on disk, for what is evicted next.
   */
  setBounds(bounds: { maxBytes?: number; maxSpillBytes?: number }): void {
    if (bounds.maxBytes !== undefined) {
      if (!(bounds.maxBytes > 0)) throw new RangeError('maxBytes must be positive');
      this.maxBytes = bounds.maxBytes;
      this.evict();
    }
    if (bounds.maxSpillBytes !== undefined) this.maxSpillBytes = Math.max(0, bounds.maxSpillBytes);
  }

  /** Adds a message; returns its seq. Never waits: slow subscribers are dropped, not waited for. */
  push(msg: T): number {
    if (this.finishedFlag) throw new Error('the session has finished: no more messages');
    const entry: Entry<T> = { seq: ++this.seq, msg, bytes: this.sizeOf(msg) };
    this.entries.push(entry);
    this.bytes += entry.bytes;
    this.evict();
    // Subscribers get the message and its seq only, never the store's bookkeeping.
    const delivered: StoredMsg<T> = { seq: entry.seq, msg };
    for (const sub of this.subscribers) {
      sub.queue.push(delivered);
      // Behind means still busy with an earlier batch. One that is free will take the whole queue
      // in the next window, however big a synchronous burst made it (within reason).
      if ((sub.busy && sub.queue.length > sub.limit) || sub.queue.length > sub.limit * BURST_FACTOR) this.drop(sub, `fell more than ${this.queueLimit} messages behind`);
    }
    this.scheduleFlush();
    return entry.seq;
  }

  /** The retained messages, oldest first (a copy). */
  history(): StoredMsg<T>[] {
    return (this.entries.slice(this.head) as Entry<T>[]).map(({ seq, msg }) => ({ seq, msg }));
  }

  /**
   * Joins the stream: the retained history (unless `history: false`), then every new message, in
   * batches. Returns the unsubscribe function.
   */
  subscribe(listener: BatchListener<T>, options: SubscribeOptions = {}): () => void {
    const sub = new Subscriber(listener, options);
    // One synchronous step: what is in history now is exactly what came before the live stream.
    if (options.history !== false) sub.queue = this.history();
    sub.limit = this.queueLimit + sub.queue.length;
    this.subscribers.add(sub);
    if (this.finishedFlag) sub.finishPending = true;
    this.scheduleFlush();
    return () => this.remove(sub);
  }

  /** Marks the session finished: subscribers get what is queued, then onFinished. */
  finish(): void {
    if (this.finishedFlag) return;
    this.finishedFlag = true;
    for (const sub of this.subscribers) sub.finishPending = true;
    this.scheduleFlush();
  }

  stats(): MsgStoreStats {
    return {
      retained: this.entries.length - this.head,
      retainedBytes: this.bytes,
      evicted: this.evictedCount,
      lastSeq: this.seq,
      subscribers: this.subscribers.size,
      dropped: this.droppedCount,
      unspilled: this.unspilledCount,
    };
  }

  /**
   * Writes the session as JSONL ({seq, msg} per line): the spilled messages, then those retained.
   * Without a spill file, only the retained ones (the oldest may be gone: `stats().evicted` says).
   */
  async exportJsonl(out: Writable): Promise<void> {
    if (this.spill) {
      await new Promise<void>((resolve, reject) => this.spill?.write('', (err) => (err ? reject(err) : resolve())));
      if (this.spillError) throw this.spillError;
      if (this.options.spillFile && this.evictedCount > 0) await pipeline(createReadStream(this.options.spillFile), out, { end: false });
    }
    for (const entry of this.history()) {
      if (out.destroyed) throw new Error('the export was abandoned (its stream was closed)');
      if (!out.write(`${JSON.stringify(entry)}\n`)) await drainOrClose(out);
    }
  }

  /** Stops delivery and closes the spill file. */
  async close(): Promise<void> {
    clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    for (const sub of this.subscribers) sub.closed = true;
    this.subscribers.clear();
    const spill = this.spill;
    this.spill = undefined;
    if (spill) await new Promise<void>((resolve) => spill.end(resolve));
  }

  private evict(): void {
    while (this.entries.length - this.head > 0 && (this.bytes > this.maxBytes || this.entries.length - this.head > this.maxMessages)) {
      const old = this.entries[this.head];
      if (!old) break;
      this.entries[this.head] = undefined;
      this.head++;
      this.bytes -= old.bytes;
      this.evictedCount++;
      this.spillOut(old);
    }
    // Cut the dead prefix once it is as long as what is retained: amortized O(1) per message.
    if (this.head > 1024 && this.head * 2 > this.entries.length) {
      this.entries = this.entries.slice(this.head);
      this.head = 0;
    }
  }

  private spillOut(entry: Entry<T>): void {
    if (!this.options.spillFile || this.spillError) return;
    const line = `${JSON.stringify({ seq: entry.seq, msg: entry.msg })}\n`;
    // A session left running for days must not fill the disk: the spill file has a bound too.
    if (this.spilledBytes + line.length > this.maxSpillBytes) {
      if (this.unspilledCount++ === 0) this.safely(() => this.options.onSpillFull?.());
      return;
    }
    this.spilledBytes += line.length;
    if (!this.spill) {
      // Truncated on first use: the file is this store's, not a log to append to across runs.
      this.spill = createWriteStream(this.options.spillFile, { flags: 'w', mode: 0o600 });
      this.spill.on('error', (err) => (this.spillError = err));
    }
    // The stream buffers; the producer does not wait for the disk.
    this.spill.write(line);
  }

  private scheduleFlush(): void {
    if (this.flushTimer) return;
    this.flushTimer = setTimeout(() => {
      this.flushTimer = undefined;
      this.flush();
    }, this.batchMs);
  }

  private flush(): void {
    for (const sub of this.subscribers) this.deliver(sub);
  }

  private deliver(sub: Subscriber<T>): void {
    if (sub.busy || sub.closed) return;
    if (sub.queue.length === 0) {
      if (sub.finishPending) {
        sub.finishPending = false;
        this.safely(() => sub.options.onFinished?.());
      }
      return;
    }
    const batch = sub.queue;
    sub.queue = [];
    sub.limit = this.queueLimit;
    let result: void | Promise<void>;
    try {
      result = sub.listener(batch);
    } catch {
      this.drop(sub, 'its listener threw');
      return;
    }
    if (result instanceof Promise) {
      sub.busy = true;
      result.then(
        () => {
          sub.busy = false;
          if (!sub.closed) this.deliver(sub);
        },
        () => this.drop(sub, 'its listener failed'),
      );
      return;
    }
    // What queued meanwhile (or the finish notice) goes in the next window.
    if (sub.finishPending) this.scheduleFlush();
  }

  private drop(sub: Subscriber<T>, reason: string): void {
    if (sub.closed) return;
    this.remove(sub);
    this.droppedCount++;
    this.safely(() => sub.options.onDropped?.(reason));
  }

  private remove(sub: Subscriber<T>): void {
    sub.closed = true;
    sub.queue = [];
    this.subscribers.delete(sub);
  }

  private safely(fn: () => void): void {
    try {
      fn();
    } catch {
      // A subscriber's notice handler must not break the store.
    }
  }
}
