/**
 * Dispatch, the node side: pull a pool's work items one at a time, only while a slot is free, and
 * for each one win the run's claim (run-claims.ts) before starting anything. While a run lives
 * the item is held with heartbeats (`working()`), so the pool's max_ack_pending caps the runs in
 * flight across the cluster; it is acknowledged when the run ends, however it ended, and never
 * handed back (max_deliver 1: a run is not started twice behind the user's back).
 *
 * An item once delivered cannot be given back, so a pull is never abandoned: stop() waits for the
 * pull in flight to end (at most its expiry) and starts what it brought, as any other.
 *
 * A second item of a run this puller has in hand (a controller that restarted past the queue's
 * duplicate window sends a still-queued run again, and both items come here) is acknowledged at
 * once and not started: the claim, which is this node's own, would let it through, and it would
 * hold a slot until the run ended.
 */
import { jetstream, type Consumer, type JsMsg } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { Emitter, type Event } from '../core/emitter.js';
import { errorMessage } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import { LogLimiter } from '../core/log-limiter.js';
import { isConnectionClosed } from './nats-errors.js';
import { RunClaims, type ClaimOutcome, type RunClaim } from './run-claims.js';
import { checkName, poolConsumer, STALE_WORK_ITEM_MS, WORK_STREAM } from './topology.js';
import { WorkItemSchema, type WorkItem } from './work-queue.js';
import { isReflected } from './reflected.js';

/** How long one pull waits for an item on the server (NATS's minimum is 1 s). */
const DEFAULT_PULL_EXPIRES_MS = 5_000;
/** After a pull failed (a reconnect, a consumer not there yet), wait this long before the next. */
const PULL_RETRY_MS = 1_000;
/** Heartbeats per ack wait: two may be lost before the server counts the item undelivered. */
const HEARTBEATS_PER_ACK_WAIT = 3;

export interface WorkSlots {
  readonly total: number;
  readonly free: number;
}

/** What happened to an item the puller took. */
export type WorkEvent =
  | { readonly kind: 'started'; readonly item: WorkItem }
  | { readonly kind: 'finished'; readonly item: WorkItem; readonly error?: string }
  /** The run's claim was someone else's (another node, or the controller that abandoned it): not started. */
  | { readonly kind: 'claim-lost'; readonly item: WorkItem; readonly holder: RunClaim | undefined }
  /** A second item of a run this puller has in hand: acknowledged, not started, its slot given back at once. */
  | { readonly kind: 'duplicate'; readonly item: WorkItem; readonly streamSeq: number }
  /** Not started: the item was not a work item, too old, or its claim could not be asked for. */
  /** `runId` when the item named one (the controller is told, and ends the run no node has). */
  | { readonly kind: 'refused'; readonly streamSeq: number; readonly reason: string; readonly runId?: string };

export interface WorkPullerOptions {
  nc: NatsConnection;
  pool: string;
  /** The node's name and process (its lease record's `instance`): the claim's holder. */
  node: string;
  instance: string;
  /** Runs at once on this node from this pool. */
  slots: number;
  /** The run's life: the item is acknowledged when this settles. */
  run: (item: WorkItem) => Promise<void>;
  logger: Logger;
  pullExpiresMs?: number;
}

/** `paused`: no new pull (the node's lease is not held); a pull already in flight is still taken. */
type Phase = 'pulling' | 'paused' | 'stopping' | 'stopped';

export class WorkPuller {
  private readonly slotEvents = new Emitter<WorkSlots>();
  /** Fires when a run takes or gives back a slot (for the lease: setSlots). */
  readonly onSlotsChanged: Event<WorkSlots> = this.slotEvents.event;
  private readonly workEvents = new Emitter<WorkEvent>();
  readonly onWork: Event<WorkEvent> = this.workEvents.event;
  private phase: Phase = 'pulling';
  private free: number;
  private readonly running = new Set<Promise<void>>();
  /** The runs whose item this puller holds, from its delivery until it is acknowledged or given up. */
  private readonly inHand = new Set<string>();
  private loop: Promise<void> = Promise.resolve();
  /** Refused items: any client can have the server put JSON of its making in a pool's queue (reflected.ts). */
  private readonly refusals: LogLimiter;
  /** Wakes the loop from a wait (for a slot, or before a retry). */
  private wake: (() => void) | undefined;

  private constructor(
    private readonly consumer: Consumer,
    private readonly claims: RunClaims,
    private readonly heartbeatMs: number,
    private readonly options: WorkPullerOptions,
    private readonly logger: Logger,
  ) {
    this.free = options.slots;
    this.refusals = new LogLimiter(logger);
  }

  /** Binds the pool's consumer and starts pulling. */
  static async start(options: WorkPullerOptions): Promise<WorkPuller> {
    checkName('node', options.node);
    if (!Number.isInteger(options.slots) || options.slots < 1) throw new RangeError(`slots must be a whole number >= 1 (got ${options.slots})`);
    const consumer = await jetstream(options.nc).consumers.get(WORK_STREAM, poolConsumer(options.pool));
    const { config } = await consumer.info(true);
    const ackWaitMs = (config.ack_wait ?? 30e9) / 1e6;
    const claims = await RunClaims.open(options.nc, 'read');
    const puller = new WorkPuller(consumer, claims, Math.floor(ackWaitMs / HEARTBEATS_PER_ACK_WAIT), options, options.logger.child({ pool: options.pool }));
    puller.loop = puller.pull();
    return puller;
  }

  get slots(): WorkSlots {
    return { total: this.options.slots, free: this.free };
  }

  /**
   * Pulls no more until resume() (a node whose lease is not held must not take new runs); what a
   * pull already in flight brings is still started, as an item once delivered cannot be given back.
   */
  pause(): void {
    if (this.phase === 'pulling') this.phase = 'paused';
  }

  /** Pulls again after pause(). */
  resume(): void {
    if (this.phase !== 'paused') return;
    this.phase = 'pulling';
    this.wake?.();
  }

  get paused(): boolean {
    return this.phase === 'paused';
  }

  /** Stops pulling: resolves once the pull in flight ended and what it brought was started. */
  async stop(): Promise<void> {
    if (this.phase === 'pulling' || this.phase === 'paused') this.phase = 'stopping';
    this.wake?.();
    await this.loop;
    this.phase = 'stopped';
    this.refusals.flush();
  }

  /** Resolves when no run of this puller is going. */
  async idle(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
  }

  private async pull(): Promise<void> {
    const expires = this.options.pullExpiresMs ?? DEFAULT_PULL_EXPIRES_MS;
    while (this.phase === 'pulling' || this.phase === 'paused') {
      if (this.phase === 'paused' || this.free === 0) {
        await this.waitForWake();
        continue;
      }
      let message: JsMsg | null;
      try {
        message = await this.consumer.next({ expires });
      } catch (err) {
        // A closed connection ends the loop: nothing can be pulled on it any more.
        if (isConnectionClosed(err) || this.options.nc.isClosed()) break;
        this.logger.warn('pulling work failed; trying again', { error: errorMessage(err) });
        await this.waitForWake(PULL_RETRY_MS);
        continue;
      }
      if (message !== null) this.take(message);
    }
  }

  /** Waits until woken (a slot freed, stop()) or `ms` passed. */
  private waitForWake(ms?: number): Promise<void> {
    return new Promise((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      const done = (): void => {
        clearTimeout(timer);
        if (this.wake === done) this.wake = undefined;
        resolve();
      };
      if (ms !== undefined) timer = setTimeout(done, ms);
      this.wake = done;
    });
  }

  private take(message: JsMsg): void {
    this.free--;
    this.tellSlots();
    const job = this.handle(message).finally(() => {
      this.running.delete(job);
      this.free++;
      this.tellSlots();
      this.wake?.();
    });
    this.running.add(job);
  }

  private async handle(message: JsMsg): Promise<void> {
    const heartbeat = setInterval(() => this.safely('heartbeat', () => message.working()), this.heartbeatMs);
    const stopHeartbeat = (): void => clearInterval(heartbeat);
    try {
      const item = this.readItem(message);
      if (item === undefined) return;
      if (this.inHand.has(item.run_id)) {
        this.logger.info('a second work item of a run this node has in hand; acknowledged, not started', { run_id: item.run_id, stream_seq: message.seq });
        await this.acknowledge(message, item, 'a second work item');
        this.fire({ kind: 'duplicate', item, streamSeq: message.seq });
        return;
      }
      this.inHand.add(item.run_id);
      try {
        await this.claimAndRun(message, item, stopHeartbeat);
      } finally {
        this.inHand.delete(item.run_id);
      }
    } finally {
      stopHeartbeat();
    }
  }

  /** Wins the run's claim and runs it, acknowledging the item once the run has ended; a claim lost ends the item unstarted. */
  private async claimAndRun(message: JsMsg, item: WorkItem, stopHeartbeat: () => void): Promise<void> {
    const claim: RunClaim = { holder: this.options.node, role: 'node', instance: this.options.instance, at: Date.now() };
    let outcome: ClaimOutcome;
    try {
      outcome = await this.claims.claim(this.options.pool, item.run_id, claim);
    } catch (err) {
      this.refuse(message, `cannot claim run ${item.run_id}: ${errorMessage(err)}`, item.run_id);
      return;
    }
    if (!outcome.won) {
      this.logger.info('run claimed elsewhere; not started', { run_id: item.run_id, holder: outcome.holder?.holder });
      this.safely('term', () => message.term(`run ${item.run_id} is claimed by ${outcome.holder?.holder ?? 'someone else'}`));
      this.fire({ kind: 'claim-lost', item, holder: outcome.holder });
      return;
    }
    this.fire({ kind: 'started', item });
    let error: string | undefined;
    try {
      await this.options.run(item);
    } catch (err) {
      error = errorMessage(err);
    }
    stopHeartbeat();
    await this.acknowledge(message, item, 'a finished run');
    this.fire(error === undefined ? { kind: 'finished', item } : { kind: 'finished', item, error });
  }

  /** The item in `message`, or undefined (refused) when it is not one or is too old to start safely. */
  private readItem(message: JsMsg): WorkItem | undefined {
    if (isReflected(message.headers)) {
      this.refuse(message, "put in the queue by the server on another client's say-so (a direct get answered there), not dispatched");
      return undefined;
    }
    let parsed: unknown;
    try {
      parsed = message.json();
    } catch {
      parsed = undefined;
    }
    const item = WorkItemSchema.safeParse(parsed);
    if (!item.success) {
      this.refuse(message, 'not a work item');
      return undefined;
    }
    const ageMs = Date.now() - message.info.timestampNanos / 1e6;
    if (ageMs > STALE_WORK_ITEM_MS) {
      this.refuse(message, `run ${item.data.run_id} was queued ${Math.round(ageMs / 3_600_000)} h ago, longer than its claim is kept`, item.data.run_id);
      return undefined;
    }
    return item.data;
  }

  private refuse(message: JsMsg, reason: string, runId?: string): void {
    this.refusals.log('warn', 'work item refused', { stream_seq: message.seq, run_id: runId, reason });
    this.safely('term', () => message.term(reason));
    this.fire({ kind: 'refused', streamSeq: message.seq, reason, ...(runId !== undefined && { runId }) });
  }

  private async acknowledge(message: JsMsg, item: WorkItem, what: string): Promise<void> {
    try {
      await message.ackAck();
    } catch (err) {
      // The item stays in the queue, claimed: the controller removes it.
      this.logger.warn(`could not acknowledge ${what}`, { run_id: item.run_id, stream_seq: message.seq, error: errorMessage(err) });
    }
  }

  private safely(what: string, act: () => void): void {
    try {
      act();
    } catch (err) {
      this.logger.debug(`work item ${what} not sent`, { error: errorMessage(err) });
    }
  }

  private tellSlots(): void {
    this.fireSafely(() => this.slotEvents.fire(this.slots));
  }

  private fire(event: WorkEvent): void {
    this.fireSafely(() => this.workEvents.fire(event));
  }

  private fireSafely(fire: () => void): void {
    try {
      fire();
    } catch (err) {
      this.logger.error('a work puller listener failed', { error: errorMessage(err) });
    }
  }
}
