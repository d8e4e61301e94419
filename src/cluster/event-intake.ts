/**
 * Run events into the ledger, the controller side: the durable `ledger` consumer of SB_EVENTS
 * hands each event to a sink (the ledger, with its unique key on run and sequence), in sequence
 * order per run, and acknowledges it only once the sink has it durably (EventSink.durable, asked
 * as a group commit by durable-acks.ts: one store transaction for the events that came in
 * meanwhile, not one per event). So nothing is lost across
 * a controller restart: what was not acknowledged comes again, and what was published while the
 * controller was down waits in the stream. `catchUp` reads a run's subject again from what the sink
 * holds, for a sink that lost events it had been given (a crash before it stored them).
 *
 * Order is kept even when JetStream breaks it (after a restart, what the old controller had in
 * hand comes back only after the ack wait, behind newer events): an early event is held
 * (run-order.ts), and a gap that stays open for `gapWaitMs` is fetched again from the stream by
 * the run's subject. A sequence that is not in the stream although a later one is was never
 * stored (its node gave up on it) and never will be: it is reported as a hole and skipped.
 */
import { jetstream, jetstreamManager, type ConsumerMessages, type JetStreamManager, type JsMsg } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { Emitter, type Event } from '../core/emitter.js';
import { errorMessage } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import { DurableAcks } from './durable-acks.js';
import { NODE_HEADER, parseRunEvent, type RunEventMessage } from './event-stream.js';
import { RunOrder } from './run-order.js';
import { EVENTS_STREAM, eventSubject, LEDGER_CONSUMER } from './topology.js';

/** How long a gap may stay open before it is fetched from the stream. */
const DEFAULT_GAP_WAIT_MS = 1_000;
/** Events the consumer asks for at once: few, since a crash makes them come back late. */
const DEFAULT_PREFETCH = 16;
/** After the sink failed, try it again this soon. */
const SINK_RETRY_MS = 1_000;
/** Runs whose place is remembered; past it, runs with nothing held are forgotten (the sink knows them). */
const REMEMBERED_RUNS = 10_000;

/** An event as the sink gets it: the event, the node that published it, its place in the stream. */
export interface DeliveredEvent {
  readonly event: RunEventMessage;
  readonly node: string | undefined;
  readonly streamSeq: number;
}

/** Where events go: the ledger. */
export interface EventSink {
  /** The highest sequence of run `runId` the sink holds (0: none). */
  lastSeq(runId: string): Promise<number>;
  /**
   * Stores one event. Called in sequence order per run, one at a time; after a restart an event
   * the sink stored may come again, so storing one it has must do nothing (a unique key on run and seq).
   */
  write(delivered: DeliveredEvent): Promise<void>;
  /**
   * Resolves once everything `write` took is stored durably (rejects when it could not be): only
   * then are those events acknowledged. Absent: `write` itself stores durably.
   */
  durable?(): Promise<void>;
}

/** Sequences of a run that were never stored, skipped. */
export interface EventHole {
  readonly runId: string;
  readonly from: number;
  readonly to: number;
}

export interface EventIntakeOptions {
  nc: NatsConnection;
  sink: EventSink;
  logger: Logger;
  gapWaitMs?: number;
  prefetch?: number;
}

/** An event waiting for the sink, with every delivery of it to acknowledge (none when refetched). */
interface Held {
  delivered: DeliveredEvent;
  deliveries: JsMsg[];
}

export class EventIntake {
  private readonly holes = new Emitter<EventHole>();
  readonly onHole: Event<EventHole> = this.holes.event;
  private readonly runs = new Map<string, RunOrder<Held>>();
  /** Per run: a gap being waited on, or the sink being tried again. */
  private readonly timers = new Map<string, NodeJS.Timeout>();
  /** Deliveries the sink took, acknowledged once a store write covers them (one write for many). */
  private readonly acks: DurableAcks<JsMsg>;
  /** Everything that touches the runs, one step at a time (deliveries, refetches, retries). */
  private chain: Promise<void> = Promise.resolve();
  private reading: Promise<void> = Promise.resolve();
  private closed = false;

  private constructor(
    private readonly jsm: JetStreamManager,
    private readonly messages: ConsumerMessages,
    private readonly options: EventIntakeOptions,
    private readonly logger: Logger,
  ) {
    this.acks = new DurableAcks({ durable: () => options.sink.durable?.() ?? Promise.resolve(), ack: (message) => this.settle(message, 'ack'), retryMs: SINK_RETRY_MS, logger });
  }

  /** Starts reading the `ledger` consumer (laid out by ensureTopology). */
  static async start(options: EventIntakeOptions): Promise<EventIntake> {
    const jsm = await jetstreamManager(options.nc);
    const consumer = await jetstream(options.nc).consumers.get(EVENTS_STREAM, LEDGER_CONSUMER);
    const messages = await consumer.consume({ max_messages: options.prefetch ?? DEFAULT_PREFETCH });
    const intake = new EventIntake(jsm, messages, options, options.logger.child({ component: 'event-intake' }));
    intake.reading = intake.read();
    return intake;
  }

  /** Stops reading; what the sink has not taken is not acknowledged, and comes again to the next intake. */
  async close(): Promise<void> {
    this.closed = true;
    await this.messages.close();
    await this.reading;
    await this.chain;
    await this.acks.close();
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    this.holes.dispose();
  }

  private async read(): Promise<void> {
    try {
      for await (const message of this.messages) await this.serially(() => this.receive(message));
    } catch (err) {
      if (!this.closed) this.logger.error('reading events stopped', { error: errorMessage(err) });
    }
  }

  private serially(step: () => Promise<void>): Promise<void> {
    this.chain = this.chain.then(step).catch((err: unknown) => this.logger.error('an event intake step failed', { error: errorMessage(err) }));
    return this.chain;
  }

  private async receive(message: JsMsg): Promise<void> {
    const event = parseRunEvent(message.data);
    if (event === undefined) {
      this.logger.warn('dropped a message on the event stream that is not an event', { subject: message.subject, stream_seq: message.seq });
      this.settle(message, 'term');
      return;
    }
    const order = await this.orderOf(event.run_id);
    if (order.isDelivered(event.seq)) {
      // Taken by the sink already, but maybe not yet stored: acknowledged once it is.
      this.acks.add([message]);
      return;
    }
    const held = order.heldAt(event.seq);
    if (held) held.deliveries.push(message);
    else order.hold(event.seq, { delivered: { event, node: message.headers?.get(NODE_HEADER) || undefined, streamSeq: message.seq }, deliveries: [message] });
    await this.drain(order);
  }

  /** The run's order, from the sink's last sequence the first time it is seen (since this intake started). */
  private async orderOf(runId: string): Promise<RunOrder<Held>> {
    const known = this.runs.get(runId);
    if (known) {
      // Most recently used last, so the oldest are forgotten first.
      this.runs.delete(runId);
      this.runs.set(runId, known);
      return known;
    }
    const order = new RunOrder<Held>(runId, await this.options.sink.lastSeq(runId));
    this.runs.set(runId, order);
    this.forgetIdleRuns();
    return order;
  }

  private forgetIdleRuns(): void {
    for (const [runId, order] of this.runs) {
      if (this.runs.size <= REMEMBERED_RUNS) return;
      if (order.heldCount === 0 && !this.timers.has(runId)) this.runs.delete(runId);
    }
  }

  /** Hands the sink every event it can take now, in order; the ones it took are acknowledged once durable (DurableAcks). */
  private async drain(order: RunOrder<Held>): Promise<void> {
    const taken: JsMsg[] = [];
    let sinkFailed = false;
    for (let held = order.heldAt(order.next); held !== undefined; held = order.heldAt(order.next)) {
      try {
        await this.options.sink.write(held.delivered);
      } catch (err) {
        this.logger.warn('the event sink failed; trying again', { run_id: order.runId, seq: order.next, error: errorMessage(err) });
        this.later(order.runId, SINK_RETRY_MS);
        sinkFailed = true;
        break;
      }
      order.advance(held.delivered.streamSeq);
      taken.push(...held.deliveries);
    }
    this.acks.add(taken);
    if (sinkFailed) return;
    if (order.gap()) this.later(order.runId, this.options.gapWaitMs ?? DEFAULT_GAP_WAIT_MS);
    else this.cancelLater(order.runId);
  }

  /**
   * Reads run `runId`'s subject again after the last event the sink holds, up to the last one in
   * the stream, and hands the sink what it lacks: for a sink that may have lost events it was given
   * (a controller that crashed before storing them), or whose run's last events never came. Cheap
   * when the sink is up to date (one read of the subject's last message).
   */
  catchUp(runId: string): Promise<void> {
    return this.serially(async () => {
      if (this.closed) return;
      const order = await this.orderOf(runId);
      const last = await this.jsm.direct.getMessage(EVENTS_STREAM, { last_by_subj: eventSubject(runId) });
      const event = last === null ? undefined : parseRunEvent(last.data);
      if (last === null || event === undefined || order.isDelivered(event.seq)) return;
      this.logger.info('catching up on a run from the event stream', { run_id: runId, from: order.next, to: event.seq });
      order.hold(event.seq, { delivered: { event, node: last.header.get(NODE_HEADER) || undefined, streamSeq: last.seq }, deliveries: order.heldAt(event.seq)?.deliveries ?? [] });
      await this.refetch(order, event.seq);
      await this.drain(order);
    });
  }

  /** Looks at run `runId` again after `ms` (unless something is already due). */
  private later(runId: string, ms: number): void {
    if (this.closed || this.timers.has(runId)) return;
    const timer = setTimeout(() => {
      this.timers.delete(runId);
      void this.serially(() => this.revisit(runId));
    }, ms);
    this.timers.set(runId, timer);
  }

  private cancelLater(runId: string): void {
    clearTimeout(this.timers.get(runId));
    this.timers.delete(runId);
  }

  /** A gap stayed open (or the sink failed): fetch what is missing from the stream, then hand on what can be. */
  private async revisit(runId: string): Promise<void> {
    const order = this.runs.get(runId);
    if (this.closed || order === undefined) return;
    const gap = order.gap();
    if (gap) {
      try {
        await this.refetch(order, gap.to + 1);
      } catch (err) {
        // Not an answer about the gap: look again later rather than call it a hole.
        this.logger.warn('cannot fetch a gap from the event stream now', { run_id: runId, from: gap.from, to: gap.to, error: errorMessage(err) });
        this.later(runId, this.options.gapWaitMs ?? DEFAULT_GAP_WAIT_MS);
        return;
      }
    }
    await this.drain(order);
    const still = order.gap();
    if (still && gap && still.from === gap.from) {
      this.logger.warn('events of a run were never stored; skipping them', { run_id: runId, from: still.from, to: still.to });
      order.skipTo(still.to + 1);
      this.fireHole({ runId, from: still.from, to: still.to });
      await this.drain(order);
    }
  }

  /** Reads the run's subject from after the last event the sink took up to the first held one. */
  private async refetch(order: RunOrder<Held>, firstHeldSeq: number): Promise<void> {
    const stopAt = order.heldAt(firstHeldSeq)?.delivered.streamSeq ?? Number.MAX_SAFE_INTEGER;
    const subject = eventSubject(order.runId);
    for (let from = order.lastStreamSeq + 1; from < stopAt; ) {
      const stored = await this.jsm.direct.getMessage(EVENTS_STREAM, { seq: from, next_by_subj: subject });
      if (stored === null || stored.seq >= stopAt) return;
      const event = parseRunEvent(stored.data);
      if (event !== undefined && !order.isDelivered(event.seq) && order.heldAt(event.seq) === undefined) {
        order.hold(event.seq, { delivered: { event, node: stored.header.get(NODE_HEADER) || undefined, streamSeq: stored.seq }, deliveries: [] });
      }
      from = stored.seq + 1;
    }
  }

  private settle(message: JsMsg, how: 'ack' | 'term'): void {
    try {
      if (how === 'ack') message.ack();
      else message.term();
    } catch (err) {
      // The connection closed: the event comes again to the next intake.
      this.logger.debug('could not settle an event message', { how, error: errorMessage(err) });
    }
  }

  private fireHole(hole: EventHole): void {
    try {
      this.holes.fire(hole);
    } catch (err) {
      this.logger.error('an event hole listener failed', { error: errorMessage(err) });
    }
  }
}
