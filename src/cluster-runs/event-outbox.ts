/**
 * A node's outbox (issue 26): the node's own store is the ledger of record for its runs, and the
 * outbox sends what that store holds to the stream, run by run, each run's events in order from a
 * cursor (the last event the stream has of it, asked once per run and again after a failed
 * publish). It never sits between the ledger and its readers: a write is told to it (`written`)
 * and returns at once, and the events are read back from the store when their turn comes. An
 * outage only delays them: nothing written here is dropped for want of the network, and a node
 * that starts again sends what the stream lacks of every run it holds (`replay`), ended ones too.
 * Each event keeps its message id `<run>:<seq>`, so one sent twice within the stream's duplicate
 * window is stored once.
 */
import { Emitter } from '../core/emitter.js';
import { errorMessage } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import { untilEvent } from '../core/until-event.js';
import type { PublishedEvent, RunEventMessage } from '../cluster/index.js';
import type { LedgerBatch, LedgerStore } from '../ledger/ledger-store.js';
import { isEnded } from '../ledger/run-model.js';
import { eventMessage } from './run-wire.js';

/** Runs sent at once (each one's events one after another). */
const SENDERS = 8;
/** Events read back from the store at a time. */
const PAGE = 256;
/** Runs listed from the store at a time while replaying. */
const REPLAY_PAGE = 200;
/** After a failed send, a run waits this long before it is tried again, doubling up to RETRY_MAX_MS. */
const RETRY_FIRST_MS = 500;
const RETRY_MAX_MS = 30_000;

/** Where the outbox sends (the cluster's EventPublisher). */
export interface OutboxOutlet {
  publish(event: RunEventMessage): Promise<PublishedEvent>;
  /** The most bytes of JSON one event may take on the way (a larger one is cut to fit: eventMessage). */
  readonly maxEventBytes: number;
  /** The sequence number of the run's last event in the stream (0: none). */
  lastPublished(runId: string): Promise<number>;
}

/** What the outbox reads back: the node's own store. */
type OutboxSource = Pick<LedgerStore, 'events' | 'runs'>;

export interface EventOutboxOptions {
  source: OutboxSource;
  outlet: OutboxOutlet;
  logger: Logger;
  /** The first wait after a failed send (tests shorten it). */
  retryFirstMs?: number;
}

/**
 * One run on its way out. `idle`: the stream has everything written; `ready`: waiting for a
 * sender; `sending`: a sender has it; `resting`: a send failed, tried again when its timer fires.
 */
type TailPhase = 'idle' | 'ready' | 'sending' | 'resting';

interface RunTail {
  readonly runId: string;
  phase: TailPhase;
  /** The last sequence number the stream holds; undefined until asked (after a start, or a failed send). */
  sent: number | undefined;
  /** The last sequence number the store holds. */
  written: number;
  /** Its `done` is written: the run is forgotten here once that is sent. */
  ended: boolean;
  /** Sends that failed in a row (each retry waits longer). */
  failures: number;
  retry?: NodeJS.Timeout;
}

export class EventOutbox {
  private readonly tails = new Map<string, RunTail>();
  private readonly ready: RunTail[] = [];
  private senders = 0;
  private closed = false;
  /** Fires whenever a run's send settles (for drained()). */
  private readonly settled = new Emitter<void>();

  constructor(private readonly options: EventOutboxOptions) {}

  /** The events of `batch` were written to the store: they go out in turn. New runs have nothing in the stream yet. */
  written(batch: LedgerBatch): void {
    if (this.closed) return;
    for (const spec of batch.runs) if (!this.tails.has(spec.id)) this.tails.set(spec.id, { runId: spec.id, phase: 'idle', sent: 0, written: 0, ended: false, failures: 0 });
    for (const event of batch.events) {
      const tail = this.tailOf(event.run_id);
      tail.written = Math.max(tail.written, event.seq);
      if (event.type === 'done') tail.ended = true;
    }
    for (const runId of new Set(batch.events.map((e) => e.run_id))) this.wake(this.tailOf(runId));
  }

  /**
   * Takes up every run the store holds that was created since `sinceMs` (the stream keeps no
   * older events): each one's cursor is asked from the stream, and what the stream lacks is sent.
   * Resolves once they are listed, not sent: the sending goes on behind.
   */
  async replay(sinceMs: number): Promise<number> {
    let before: number | undefined;
    let taken = 0;
    for (;;) {
      const page = await this.options.source.runs({ limit: REPLAY_PAGE, ...(before !== undefined && { before }) });
      for (const record of page.runs) {
        if (record.spec.created_at < sinceMs) return taken;
        if (record.last_seq === 0 || this.closed) continue;
        const tail = this.tailOf(record.spec.id);
        tail.written = Math.max(tail.written, record.last_seq);
        tail.ended ||= isEnded(record.status);
        this.wake(tail);
        taken++;
      }
      if (page.next_before === null) return taken;
      before = page.next_before;
    }
  }

  /** Runs with events the stream does not have yet (or not known to have). */
  get unsent(): number {
    return [...this.tails.values()].filter((t) => t.phase !== 'idle').length;
  }

  /** Resolves true once every written event is sent, false when `timeoutMs` passed first. */
  async drained(timeoutMs: number): Promise<boolean> {
    if (this.unsent === 0) return true;
    const end = await untilEvent(this.settled.event, () => this.unsent === 0, { timeoutMs });
    return end === 'event';
  }

  /** Stops sending (what is not sent is sent by the next start's replay). */
  close(): void {
    this.closed = true;
    for (const tail of this.tails.values()) clearTimeout(tail.retry);
    this.ready.length = 0;
    this.settled.dispose();
  }

  private tailOf(runId: string): RunTail {
    let tail = this.tails.get(runId);
    if (!tail) {
      tail = { runId, phase: 'idle', sent: undefined, written: 0, ended: false, failures: 0 };
      this.tails.set(runId, tail);
    }
    return tail;
  }

  /** An idle run with something to send joins the line; one sending or resting picks it up itself. */
  private wake(tail: RunTail): void {
    if (tail.phase !== 'idle' || this.closed) return;
    tail.phase = 'ready';
    this.ready.push(tail);
    this.pump();
  }

  private pump(): void {
    while (!this.closed && this.senders < SENDERS && this.ready.length > 0) {
      const tail = this.ready.shift() as RunTail;
      tail.phase = 'sending';
      this.senders++;
      void this.send(tail).then((error) => {
        this.senders--;
        this.settle(tail, error);
        this.pump();
      });
    }
  }

  /** Sends run `tail`'s events the stream lacks, in order; resolves with the failure, if any. */
  private async send(tail: RunTail): Promise<unknown> {
    try {
      tail.sent ??= await this.options.outlet.lastPublished(tail.runId);
      while (!this.closed && tail.sent < tail.written) {
        const page = await this.options.source.events(tail.runId, tail.sent, PAGE);
        if (page.length === 0) {
          // Gone from the store before it was sent (retention): nothing left to send of it.
          this.options.logger.warn('events of a run left the node before they were sent', { run_id: tail.runId, from: tail.sent + 1, to: tail.written });
          tail.sent = tail.written;
          break;
        }
        // A page goes out whole; a close stops the loop at the next (the connection's close ends a publish in flight).
        for (const event of page) {
          await this.options.outlet.publish(eventMessage(event, this.options.outlet.maxEventBytes));
          tail.sent = event.seq;
        }
      }
      return undefined;
    } catch (err) {
      // Asked again before the next try: the publish may have been stored after all.
      tail.sent = undefined;
      return err ?? new Error('send failed');
    }
  }

  /** After a send: done with the run, idle, in line again (more was written meanwhile), or resting after a failure. */
  private settle(tail: RunTail, error: unknown): void {
    if (this.closed) return;
    if (error !== undefined) {
      tail.failures++;
      const waitMs = Math.min(RETRY_MAX_MS, (this.options.retryFirstMs ?? RETRY_FIRST_MS) * 2 ** (tail.failures - 1));
      // Said once per outage of the run, not at every try.
      if (tail.failures === 1) this.options.logger.warn('events of a run could not be sent yet; kept on the node and tried again', { run_id: tail.runId, error: errorMessage(error) });
      tail.phase = 'resting';
      tail.retry = setTimeout(() => {
        tail.phase = 'idle';
        this.wake(tail);
      }, waitMs);
    } else {
      if (tail.failures > 0) this.options.logger.info('events of a run are sent again', { run_id: tail.runId });
      tail.failures = 0;
      tail.phase = 'idle';
      if (tail.sent === undefined || tail.sent < tail.written) this.wake(tail);
      else if (tail.ended) this.tails.delete(tail.runId);
    }
    this.settled.fire();
  }
}
