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
 *
 * Order is kept per subject, `sb.events.<node>.<run>`: what another node sends under a run id it
 * was not given is a sequence of its own, which the sink drops whole, and never takes the place of
 * the run's own events.
 */
import { jetstream, jetstreamManager, type ConsumerMessages, type JetStreamManager, type JsMsg } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { Emitter, type Event } from '../core/emitter.js';
import { errorMessage } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import { LogLimiter } from '../core/log-limiter.js';
import { DurableAcks } from './durable-acks.js';
import { NODE_HEADER, parseRunEvent, type RunEventMessage } from './event-stream.js';
import { RunOrder } from './run-order.js';
import { EVENTS_STREAM, eventSubject, LEDGER_CONSUMER, parseEventSubject } from './topology.js';
import { isReflected } from './reflected.js';

/** How long a gap may stay open before it is fetched from the stream. */
const DEFAULT_GAP_WAIT_MS = 1_000;
/** Events the consumer asks for at once: few, since a crash makes them come back late. */
const DEFAULT_PREFETCH = 16;
/** After the sink failed, try it again this soon. */
const SINK_RETRY_MS = 1_000;
/**
 * Early events of one subject held with their deliveries unacknowledged; past it, they are held
 * without (acknowledged at once). Well under the consumer's max_ack_pending (LEDGER_MAX_ACK_PENDING).
 */
const MAX_UNACKED_HELD = 32;
/** Runs whose place is remembered; past it, runs with nothing held are forgotten (the sink knows them). */
const REMEMBERED_RUNS = 10_000;

/** An event as the sink gets it: the event, the node whose subject it came on, who says they published it, its place in the stream. */
export interface DeliveredEvent {
  readonly event: RunEventMessage;
  /**
   * The node whose subject it came on (`sb.events.<node>.<run>`): a node's user may publish under
   * its own name only, the controller under any. On an older node's `sb.events.<run>`, what its
   * header says (its own word).
   */
  readonly node: string | undefined;
  /** The publisher's header: a node's name, or the controller's mark on its own events. */
  readonly publisher: string | undefined;
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
   * Whether an event of run `runId` that came on node `node`'s subject can be the run's at all
   * (the node its ledger sent the run to): one that cannot is refused before it is put in order,
   * so events another node makes up under run ids it was not given hold nothing back. Absent: all can.
   */
  accepts?(node: string | undefined, runId: string): Promise<boolean>;
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
  /** Each run's events in order, by the subject they came on. */
  private readonly runs = new Map<string, RunOrder<Held>>();
  /** Per subject: a gap being waited on, or the sink being tried again. */
  private readonly timers = new Map<string, NodeJS.Timeout>();
  /** Deliveries the sink took, acknowledged once a store write covers them (one write for many). */
  private readonly acks: DurableAcks<JsMsg>;
  /** Everything that touches the runs, one step at a time (deliveries, refetches, retries). */
  private chain: Promise<void> = Promise.resolve();
  private reading: Promise<void> = Promise.resolve();
  private closed = false;
  /** What nodes can make it say (events refused, older nodes' subjects): a few lines a minute, then a count. */
  private readonly nodeLog: LogLimiter;

  private constructor(
    private readonly jsm: JetStreamManager,
    private readonly messages: ConsumerMessages,
    private readonly options: EventIntakeOptions,
    private readonly logger: Logger,
  ) {
    this.nodeLog = new LogLimiter(logger);
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
    this.nodeLog.flush();
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
    const event = isReflected(message.headers) ? undefined : parseRunEvent(message.data);
    const named = parseEventSubject(message.subject);
    if (event === undefined || named?.runId !== event.run_id) {
      // Anything a node publishes may land here: logged a few lines a minute, then counted.
      this.nodeLog.log('warn', 'dropped a message on the event stream that is not an event of the run its subject names (or that the server put there on another client\'s say-so)', { subject: message.subject, stream_seq: message.seq });
      this.settle(message, 'term');
      return;
    }
    if (named.node === undefined) this.warnOlderNode(message.headers?.get(NODE_HEADER));
    const arrived = delivered(event, message.subject, message.headers?.get(NODE_HEADER), message.seq);
    if (this.options.sink.accepts && !(await this.options.sink.accepts(arrived.node, event.run_id))) {
      this.refuse(message, arrived);
      return;
    }
    const order = await this.orderOf(message.subject, event.run_id);
    if (order.isDelivered(event.seq)) {
      // Taken by the sink already, but maybe not yet stored: acknowledged once it is.
      this.acks.add([message]);
      return;
    }
    const held = order.heldAt(event.seq);
    if (held) held.deliveries.push(message);
    else if (event.seq !== order.next && order.heldCount >= MAX_UNACKED_HELD) {
      // Held without its delivery, which is acknowledged now: a run whose node leaves a gap open
      // must not take up the consumer's unacknowledged messages, and stall every other run. Should
      // this controller stop first, a restart catches the run up from the stream.
      order.hold(event.seq, { delivered: arrived, deliveries: [] });
      this.settle(message, 'ack');
    } else order.hold(event.seq, { delivered: arrived, deliveries: [message] });
    await this.drain(message.subject, order);
  }

  /** An event the sink says cannot be its run's: dropped (terminated, never delivered again), and said. */
  private refuse(message: JsMsg, arrived: DeliveredEvent): void {
    this.settle(message, 'term');
    this.nodeLog.log('warn', 'dropped events of a run that came from a node it was not sent to', { run_id: arrived.event.run_id, subject: message.subject, node: arrived.node, publisher: arrived.publisher });
  }

  /** Says a publisher sends on the subject older nodes used, where its header is all there is to say who it is. */
  private warnOlderNode(publisher: string | undefined): void {
    this.nodeLog.log('warn', 'a node sends events on sb.events.<run>, as Switchboard before per-node subjects did: upgrade it, and give it the permissions docs/cluster.md lists (they shut that subject)', { node: publisher || '(unnamed)' });
  }

  /** The order of the run's events on `subject`, from the sink's last sequence the first time it is seen (since this intake started). */
  private async orderOf(subject: string, runId: string): Promise<RunOrder<Held>> {
    const known = this.runs.get(subject);
    if (known) {
      // Most recently used last, so the oldest are forgotten first.
      this.runs.delete(subject);
      this.runs.set(subject, known);
      return known;
    }
    const order = new RunOrder<Held>(runId, await this.options.sink.lastSeq(runId));
    this.runs.set(subject, order);
    this.forgetIdleRuns();
    return order;
  }

  private forgetIdleRuns(): void {
    for (const [subject, order] of this.runs) {
      if (this.runs.size <= REMEMBERED_RUNS) return;
      if (order.heldCount === 0 && !this.timers.has(subject)) this.runs.delete(subject);
    }
  }

  /** Hands the sink every event it can take now, in order; the ones it took are acknowledged once durable (DurableAcks). */
  private async drain(subject: string, order: RunOrder<Held>): Promise<void> {
    const taken: JsMsg[] = [];
    let sinkFailed = false;
    for (let held = order.heldAt(order.next); held !== undefined; held = order.heldAt(order.next)) {
      try {
        await this.options.sink.write(held.delivered);
      } catch (err) {
        this.logger.warn('the event sink failed; trying again', { run_id: order.runId, seq: order.next, error: errorMessage(err) });
        this.later(subject, SINK_RETRY_MS);
        sinkFailed = true;
        break;
      }
      order.advance(held.delivered.streamSeq);
      taken.push(...held.deliveries);
    }
    this.acks.add(taken);
    if (sinkFailed) return;
    if (order.gap()) this.later(subject, this.options.gapWaitMs ?? DEFAULT_GAP_WAIT_MS);
    else this.cancelLater(subject);
  }

  /**
   * Reads run `runId`'s subject (under `node`, the node it was sent to) again after the last event
   * the sink holds, up to the last one in the stream, and hands the sink what it lacks: for a sink
   * that may have lost events it was given (a controller that crashed before storing them), or
   * whose run's last events never came. Cheap when the sink is up to date (one read of the
   * subject's last message).
   */
  catchUp(node: string, runId: string): Promise<void> {
    const subject = eventSubject(node, runId);
    return this.serially(async () => {
      if (this.closed) return;
      const order = await this.orderOf(subject, runId);
      const last = await this.jsm.direct.getMessage(EVENTS_STREAM, { last_by_subj: subject });
      const event = last === null ? undefined : parseRunEvent(last.data);
      if (last === null || event?.run_id !== runId || order.isDelivered(event.seq)) return;
      this.logger.info('catching up on a run from the event stream', { run_id: runId, node, from: order.next, to: event.seq });
      order.hold(event.seq, { delivered: delivered(event, subject, last.header.get(NODE_HEADER), last.seq), deliveries: order.heldAt(event.seq)?.deliveries ?? [] });
      await this.refetch(subject, order, event.seq);
      await this.drain(subject, order);
    });
  }

  /** Looks at the run on `subject` again after `ms` (unless something is already due). */
  private later(subject: string, ms: number): void {
    if (this.closed || this.timers.has(subject)) return;
    const timer = setTimeout(() => {
      this.timers.delete(subject);
      void this.serially(() => this.revisit(subject));
    }, ms);
    this.timers.set(subject, timer);
  }

  private cancelLater(subject: string): void {
    clearTimeout(this.timers.get(subject));
    this.timers.delete(subject);
  }

  /** A gap stayed open (or the sink failed): fetch what is missing from the stream, then hand on what can be. */
  private async revisit(subject: string): Promise<void> {
    const order = this.runs.get(subject);
    if (this.closed || order === undefined) return;
    const runId = order.runId;
    const gap = order.gap();
    if (gap) {
      try {
        await this.refetch(subject, order, gap.to + 1);
      } catch (err) {
        // Not an answer about the gap: look again later rather than call it a hole.
        this.logger.warn('cannot fetch a gap from the event stream now', { run_id: runId, subject, from: gap.from, to: gap.to, error: errorMessage(err) });
        this.later(subject, this.options.gapWaitMs ?? DEFAULT_GAP_WAIT_MS);
        return;
      }
    }
    await this.drain(subject, order);
    const still = order.gap();
    if (still && gap && still.from === gap.from) {
      this.logger.warn('events of a run were never stored; skipping them', { run_id: runId, subject, from: still.from, to: still.to });
      order.skipTo(still.to + 1);
      this.fireHole({ runId, from: still.from, to: still.to });
      await this.drain(subject, order);
    }
  }

  /** Reads the run's subject from after the last event the sink took up to the first held one. */
  private async refetch(subject: string, order: RunOrder<Held>, firstHeldSeq: number): Promise<void> {
    const stopAt = order.heldAt(firstHeldSeq)?.delivered.streamSeq ?? Number.MAX_SAFE_INTEGER;
    for (let from = order.lastStreamSeq + 1; from < stopAt; ) {
      const stored = await this.jsm.direct.getMessage(EVENTS_STREAM, { seq: from, next_by_subj: subject });
      if (stored === null || stored.seq >= stopAt) return;
      const event = isReflected(stored.header, 'direct get') ? undefined : parseRunEvent(stored.data);
      if (event?.run_id === order.runId && !order.isDelivered(event.seq) && order.heldAt(event.seq) === undefined) {
        order.hold(event.seq, { delivered: delivered(event, subject, stored.header.get(NODE_HEADER), stored.seq), deliveries: [] });
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

/** An event as the sink gets it: its node is its subject's (an older node's `sb.events.<run>`: its header's word). */
function delivered(event: RunEventMessage, subject: string, header: string | undefined, streamSeq: number): DeliveredEvent {
  const publisher = header || undefined;
  return { event, node: parseEventSubject(subject)?.node ?? publisher, publisher, streamSeq };
}
