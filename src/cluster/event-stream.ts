/**
 * A run's events on the wire, the node side: each one on the run's own subject under the node's
 * name, `sb.events.<node>.<run>`, in SB_EVENTS, with a message id of its publish
 * (`<node>:<run>:<seq>:<random>`). JetStream stores a message id once within the stream's
 * duplicate window, so a publish that got no answer (a reconnect, a server restart) is sent again
 * with the same id, safely: stored once, or found stored already. The controller reads
 * them back in order into the ledger (event-intake.ts).
 */
import { randomBytes } from 'node:crypto';
import { jetstream, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import { headers, type NatsConnection } from '@nats-io/transport-node';
import { z } from 'zod';
import { errorMessage, SwitchboardError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import { controllerControlClient, maxPayload } from './control.js';
import { isNoAnswer } from './nats-errors.js';
import { isReflected } from './reflected.js';
import { checkName, EVENTS_DUPLICATE_WINDOW_MS, EVENTS_STREAM, eventSubject } from './topology.js';

/**
 * The header naming who published an event: the node, or the controller (its `orphaned`). Who it
 * came from is its subject's to say (the server's permissions hold a node to its own name); the
 * header only tells the controller's own events apart, and names the node on an older node's
 * `sb.events.<run>`.
 */
export const NODE_HEADER = 'Sb-Node';
/** How long a publish is tried again: well inside the duplicate window, so a retry is never stored twice. */
const DEFAULT_RETRY_FOR_MS = EVENTS_DUPLICATE_WINDOW_MS / 2;
const RETRY_FIRST_MS = 100;
const RETRY_MAX_MS = 2_000;

/**
 * An event as the cluster carries it: the run's event in the ledger's wire form (ledger/run-events.ts,
 * `schema_version` saying which), of which the cluster reads only the run, the sequence and the version.
 */
const RunEventMessageSchema = z.looseObject({
  schema_version: z.string().min(1),
  run_id: z.string().min(1),
  /** The event's place in its run: 1, 2, 3, … with no gap. */
  seq: z.number().int().positive(),
});

export type RunEventMessage = z.infer<typeof RunEventMessageSchema>;

/** What a publish's headers (the node's name, the message id) may take of a message. */
const HEADERS_ROOM_BYTES = 4 * 1024;

/**
 * A message id for one publish of an event: what JetStream deduplicates on, across the whole
 * stream, so the tries of one publish are stored once. It ends in a random part: any publisher
 * chooses its message ids, and one another node could foresee would let that node have the event
 * refused as a duplicate before it is sent. A publish that failed is not tried again under the
 * same id: the outbox first reads back what its subject holds (lastPublished).
 */
export function eventMessageId(node: string, runId: string, seq: number): string {
  return `${node}:${runId}:${seq}:${randomBytes(12).toString('hex')}`;
}

export interface EventPublisherOptions {
  nc: NatsConnection;
  /** The publishing node's name, sent with every event. */
  node: string;
  logger: Logger;
  /** How long to keep trying one event through an outage before giving up with TIMEOUT. */
  retryForMs?: number;
}

/** Where an event was stored, and whether it was there already (a retry of one stored before). */
export interface PublishedEvent {
  readonly streamSeq: number;
  readonly duplicate: boolean;
}

export class EventPublisher {
  private readonly js: JetStreamClient;
  private readonly logger: Logger;

  constructor(private readonly options: EventPublisherOptions) {
    checkName('node', options.node);
    this.js = jetstream(options.nc);
    this.logger = options.logger.child({ node: options.node });
  }

  /**
   * Publishes one event and resolves once JetStream stored it. Publish a run's events one after
   * another (await each): the controller's order per run is the sequence, and a later event stored
   * before an earlier one only costs it a wait. TIMEOUT after `retryForMs` of no answers.
   */
  /** The most bytes of JSON one event may take: the server's max_payload, less room for the headers. */
  get maxEventBytes(): number {
    return maxPayload(this.options.nc) - HEADERS_ROOM_BYTES;
  }

  async publish(event: RunEventMessage): Promise<PublishedEvent> {
    const checked = RunEventMessageSchema.parse(event);
    const subject = eventSubject(this.options.node, checked.run_id);
    const data = JSON.stringify(checked);
    const msgID = eventMessageId(this.options.node, checked.run_id, checked.seq);
    const h = headers();
    h.set(NODE_HEADER, this.options.node);
    const deadline = Date.now() + (this.options.retryForMs ?? DEFAULT_RETRY_FOR_MS);
    for (let waitMs = RETRY_FIRST_MS; ; waitMs = Math.min(RETRY_MAX_MS, waitMs * 2)) {
      try {
        const ack = await this.js.publish(subject, data, { msgID, headers: h });
        return { streamSeq: ack.seq, duplicate: ack.duplicate };
      } catch (err) {
        if (!isNoAnswer(err)) throw err;
        if (Date.now() + waitMs > deadline) throw new SwitchboardError('TIMEOUT', `event ${msgID} could not be published: ${errorMessage(err)}`, { run_id: checked.run_id, seq: checked.seq }, { cause: err });
        this.logger.debug('event publish got no answer; sending it again', { msg_id: msgID, error: errorMessage(err) });
        await new Promise((resolve) => setTimeout(resolve, waitMs));
      }
    }
  }

  /**
   * The sequence number of run `runId`'s last event in the stream (0: none there), asked of the
   * controller (`last_event`): where a node's outbox resumes after a restart or an outage, so what
   * the stream has is not sent again. A node may make no direct get of its own (reflected.ts).
   */
  async lastPublished(runId: string): Promise<number> {
    return (await controllerControlClient(this.options.nc, this.options.node).call('last_event', { node: this.options.node, run_id: runId })).seq;
  }
}

/**
 * The sequence number of node `node`'s last event of run `runId` in the stream, read by a direct
 * get by subject (the controller's, for `last_event`): 0 when there is none, undefined when what is
 * last there is no event of the run (put there by the server on another client's say-so; the
 * controller then answers from its ledger).
 */
export async function lastEventSeq(jsm: JetStreamManager, node: string, runId: string): Promise<number | undefined> {
  const stored = await jsm.direct.getMessage(EVENTS_STREAM, { last_by_subj: eventSubject(node, runId) });
  if (stored === null) return 0;
  const event = isReflected(stored.header, 'direct get') ? undefined : parseRunEvent(stored.data);
  return event?.run_id === runId ? event.seq : undefined;
}

/** Parses an event's JSON, or undefined when it is not an event. */
export function parseRunEvent(data: Uint8Array): RunEventMessage | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder().decode(data));
  } catch {
    return undefined;
  }
  const event = RunEventMessageSchema.safeParse(parsed);
  if (!event.success) return undefined;
  try {
    checkName('run id', event.data.run_id);
  } catch {
    return undefined;
  }
  return event.data;
}
