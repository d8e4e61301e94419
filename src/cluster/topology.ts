/**
 * Every name the cluster uses on NATS, in one place: streams, subjects, consumers, buckets, keys,
 * and what a node's user may touch. Everything starts with `sb` so Switchboard can share a NATS
 * system with other programs. The controller lays the topology out (`ensureTopology`, idempotent);
 * nodes only bind to it, so a node's user needs no JetStream admin rights (`nodePermissions`).
 *
 * Checked on Debian's nats-server 2.9.10 (/work/nats-notes.md): a consumer has one filter subject
 * (several need 2.10), so a pool is one subject; filters of a work-queue stream must not overlap;
 * per-key TTLs and delete markers do not exist, so a lease's life is the bucket's max age.
 */
import { AckPolicy, DeliverPolicy, JetStreamApiError, RetentionPolicy, StorageType, type ConsumerConfig, type ConsumerUpdateConfig, type JetStreamManager, type StreamConfig, type StreamUpdateConfig } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';
import { SwitchboardError } from '../core/errors.js';

/** The work queue: one message per run to start, on `sb.work.<pool>`, gone once acknowledged. */
export const WORK_STREAM = 'SB_WORK';
/** Every run's events, on `sb.events.<node>.<run>`, kept for the ledger to read (and read again). */
export const EVENTS_STREAM = 'SB_EVENTS';
/** The controller's durable consumer of SB_EVENTS. */
export const LEDGER_CONSUMER = 'ledger';
/** Node leases: key `node.<name>`, gone when not renewed within the bucket's TTL. */
export const NODES_BUCKET = 'sb_nodes';
/**
 * Run claims: key `run.<pool>.<id>`, created once by whoever starts (or abandons) the run; and key
 * `cancel.<id>`, the controller's durable mark that the run was cancelled (nodes read it only).
 */
export const CLAIMS_BUCKET = 'sb_claims';

const SECOND_MS = 1_000;
const MINUTE_MS = 60 * SECOND_MS;
const DAY_MS = 24 * 60 * MINUTE_MS;

/** A node's lease lasts this long without a renewal, unless the controller says otherwise. */
export const DEFAULT_NODE_TTL_MS = 15 * SECOND_MS;
/** How long a node may hold a work item without a heartbeat before the server counts it undelivered. */
const DEFAULT_WORK_ACK_WAIT_MS = 30 * SECOND_MS;
/** How long the ledger may hold an event without acknowledging it before it comes again. */
const DEFAULT_EVENTS_ACK_WAIT_MS = 30 * SECOND_MS;
/** Runs of one pool in flight at once, across the cluster, unless the pool says otherwise. */
const DEFAULT_POOL_RUNS_IN_FLIGHT = 1_000;
/**
 * A run waiting in the queue is dropped after this long. A claim must outlive any work item (a
 * frozen node that wakes late must still find the claim), so claims live CLAIM_TTL_MS, longer.
 */
const WORK_ITEM_MAX_AGE_MS = DAY_MS;
const CLAIM_TTL_MS = 7 * DAY_MS;
/**
 * A node refuses an item older than this (by the stream's timestamp): a node frozen for days
 * could otherwise find an abandoned run's claim expired, and start it. The margin of a day covers
 * clocks that disagree.
 */
export const STALE_WORK_ITEM_MS = CLAIM_TTL_MS - WORK_ITEM_MAX_AGE_MS;
/** Events stay readable for a gap refetch and a late ledger for this long. */
export const EVENTS_MAX_AGE_MS = 7 * DAY_MS;
/** A node may publish an event again with the same id within this window and it is stored once. */
export const EVENTS_DUPLICATE_WINDOW_MS = 2 * MINUTE_MS;
/** Events the ledger has in hand but not yet acknowledged, at most (it acknowledges in order). */
const LEDGER_MAX_ACK_PENDING = 256;

/** One token of a subject: no dots, wildcards or spaces, so a name cannot reach into another's subjects. */
const TOKEN = /^[A-Za-z0-9_-]+$/;
const NAME_MAX = 64;
const RUN_ID_MAX = 128;

/** What a name is, for the error that refuses it. */
type NameKind = 'node' | 'pool' | 'run id' | 'control topic';

/** Throws INVALID_PARAMS unless `value` is a subject-safe token (letters, digits, `_`, `-`). */
export function checkName(kind: NameKind, value: string): string {
  const max = kind === 'run id' ? RUN_ID_MAX : NAME_MAX;
  if (!TOKEN.test(value) || value.length > max) {
    throw new SwitchboardError('INVALID_PARAMS', `${kind} '${value}' is not usable on the cluster: use 1 to ${max} letters, digits, '_' or '-'`, { [kind.replace(' ', '_')]: value });
  }
  return value;
}

/** The object store of `node`'s CLI conversation files (conversation-shelf.ts). */
export function conversationBucket(node: string): string {
  return `sb_conversations_${checkName('node', node)}`;
}

/** Its stream, as the server names it (for permissions). */
function conversationStream(node: string): string {
  return `OBJ_${conversationBucket(node)}`;
}

/** `sb.work.<pool>`: where a pool's work items are published. */
export function workSubject(pool: string): string {
  return `sb.work.${checkName('pool', pool)}`;
}

/** The durable pull consumer that every node of a pool pulls from. */
export function poolConsumer(pool: string): string {
  return `pool_${checkName('pool', pool)}`;
}

/**
 * `sb.events.<node>.<run>`: one subject per run, so a gap is refetched by subject, under the name of
 * the node the run was sent to, so the server's permissions say who published an event: a node's
 * user may publish under its own name only (nodePermissions). The controller writes a run's
 * `orphaned` on the same subject, fenced on its last message.
 */
export function eventSubject(node: string, runId: string): string {
  return `sb.events.${checkName('node', node)}.${checkName('run id', runId)}`;
}

/**
 * The node and run an event subject names; `node` undefined for `sb.events.<run>`, the subject
 * Switchboard used before events went under their node's name (an older node's). Undefined for a
 * subject that is neither.
 */
export function parseEventSubject(subject: string): { node: string | undefined; runId: string } | undefined {
  const named = parseNodeSubject(subject, 'events', 'run id');
  return named && { node: named.node, runId: named.name };
}

/**
 * `sb.<area>.<node>.<name>` (or an older node's `sb.<area>.<name>`, naming no node): the node and
 * the name, each checked as a subject token of its kind; undefined for any other subject.
 */
export function parseNodeSubject(subject: string, area: string, kind: NameKind): { node: string | undefined; name: string } | undefined {
  const [sb, named, ...rest] = subject.split('.');
  if (sb !== 'sb' || named !== area || rest.length < 1 || rest.length > 2) return undefined;
  const name = rest.at(-1) ?? '';
  const node = rest.length === 2 ? rest[0] : undefined;
  try {
    checkName(kind, name);
    if (node !== undefined) checkName('node', node);
  } catch {
    return undefined;
  }
  return { node, name };
}

/** `sb.node.<name>.ctl`: requests to one node. */
export function nodeControlSubject(node: string): string {
  return `sb.node.${checkName('node', node)}.ctl`;
}

/** `sb.node.<name>.panes`: requests for one node's panes (list, attach, input, resize). */
export function nodePanesSubject(node: string): string {
  return `sb.node.${checkName('node', node)}.panes`;
}

/**
 * `sb.pane.<node>.<attachment>`: a node's output for one attached terminal, published by the node
 * (its user may publish only under its own name) and read by the controller that attached.
 */
export function paneOutputSubject(node: string, attachment: string): string {
  return `sb.pane.${checkName('node', node)}.${checkName('control topic', attachment)}`;
}

/** `sb.pane.<node>.created`: a node tells the controllers a pane of its started (under its own name, as its frames). */
export function paneCreatedSubject(node: string): string {
  return `sb.pane.${checkName('node', node)}.created`;
}

/** paneCreatedSubject of every node, for a controller's subscription (the node is the subject's third token). */
export const PANE_CREATED_ANY_NODE = 'sb.pane.*.created';

/** `sb.pane.<node>.exited`: a node tells the controllers the program of a pane of its ended. */
export function paneExitedSubject(node: string): string {
  return `sb.pane.${checkName('node', node)}.exited`;
}

/** paneExitedSubject of every node. */
export const PANE_EXITED_ANY_NODE = 'sb.pane.*.exited';

/** `sb.pane.<node>.state`: a node tells the controllers an agent pane's state changed. */
export function paneStateSubject(node: string): string {
  return `sb.pane.${checkName('node', node)}.state`;
}

/** paneStateSubject of every node. */
export const PANE_STATE_ANY_NODE = 'sb.pane.*.state';

/**
 * `sb.ctl.<node>.<topic>`: node `node`'s requests to the controller, under its own name, so the
 * server's permissions say which node asks (the controller checks what a request says of its
 * node against it).
 */
export function controllerSubject(node: string, topic: string): string {
  return `sb.ctl.${checkName('node', node)}.${checkName('control topic', topic)}`;
}

/** A node's lease key in sb_nodes. */
export function nodeKey(node: string): string {
  return `node.${checkName('node', node)}`;
}

/**
 * A run's claim key in sb_claims, `run.<pool>.<run>`: under the pool whose queue the run was sent
 * to, so only that pool's nodes (and the controller) may write it (nodePermissions).
 */
export function claimKey(pool: string, runId: string): string {
  return `run.${checkName('pool', pool)}.${checkName('run id', runId)}`;
}

/** `run.<run>`: where Switchboard before per-pool claims kept a run's claim; the controller reads it, nobody writes it now. */
export function legacyClaimKey(runId: string): string {
  return `run.${checkName('run id', runId)}`;
}

/**
 * A run's cancel mark in sb_claims: written by the controller before it asks the node to cancel,
 * so a cancel that comes while the node has won the claim but not yet started the run still stands.
 */
export function cancelKey(runId: string): string {
  return `cancel.${checkName('run id', runId)}`;
}

/** The reply inbox prefix of a node's connection: its user may read only its own replies. */
export function nodeInboxPrefix(node: string): string {
  return `_INBOX_${checkName('node', node)}`;
}

/** A permission block of nats-server's `authorization { users = [...] }`. */
export interface NatsUserPermissions {
  publish: { allow: string[] };
  subscribe: { allow: string[] };
  allow_responses: boolean;
}

/**
 * What node `node` of `pools` needs and nothing more (the list was found denied-first on 2.9.10):
 * pull, heartbeat and acknowledge its pools' work, claim runs, read cancel marks, keep its own
 * lease, publish events (under its own name), ask the controller, answer its own control subject,
 * read replies on its own inbox. It cannot touch another node's lease, events or subjects, read or
 * claim another pool's work, or change the topology. It can write any claim key of its own pools
 * (NATS cannot limit it to create-only); the controller checks an event against the node its
 * ledger sent the run to, named by the subject it came on. It may read every lease and claim (the
 * stream API's get is allowed per stream, not per key): they say which nodes there are and who
 * holds which run, nothing of what a run does.
 */
export function nodePermissions(node: string, pools: readonly string[]): NatsUserPermissions {
  return {
    publish: {
      allow: [
        ...pools.flatMap((pool) => [`$JS.API.CONSUMER.INFO.${WORK_STREAM}.${poolConsumer(pool)}`, `$JS.API.CONSUMER.MSG.NEXT.${WORK_STREAM}.${poolConsumer(pool)}`, `$JS.ACK.${WORK_STREAM}.${poolConsumer(pool)}.>`]),
        `$KV.${NODES_BUCKET}.${nodeKey(node)}`,
        // The lease reads the TTL the controller chose from the bucket's status.
        `$JS.API.STREAM.INFO.KV_${NODES_BUCKET}`,
        // Claims of its pools' runs only: another pool's run it can neither take nor hand to anyone.
        ...pools.map((pool) => `$KV.${CLAIMS_BUCKET}.run.${checkName('pool', pool)}.*`),
        // Its lease, claims, cancel marks and the key older versions claimed under are read by the
        // stream API's get, never a direct get: a direct get answers with the stored bytes on
        // whatever subject its asker names, past these permissions (reflected.ts). Its last event
        // of a run it asks of the controller (last_event), for the same reason.
        `$JS.API.STREAM.MSG.GET.KV_${NODES_BUCKET}`,
        `$JS.API.STREAM.MSG.GET.KV_${CLAIMS_BUCKET}`,
        `sb.events.${checkName('node', node)}.*`,
        `sb.ctl.${checkName('node', node)}.>`,
        // Its panes' output for the terminals attached to them, under its own name only.
        `sb.pane.${checkName('node', node)}.>`,
        // Its CLIs' conversation files (conversation-shelf.ts), on its own shelf only: the controller copies one across for a resume.
        // Read by the stream API's get, never a consumer nor a direct get: either delivers wherever its asker says, past these permissions.
        `$O.${conversationBucket(node)}.>`,
        ...['STREAM.MSG.GET', 'STREAM.PURGE'].map((api) => `$JS.API.${api}.${conversationStream(node)}`),
      ],
    },
    subscribe: { allow: [`${nodeInboxPrefix(node)}.>`, `sb.node.${checkName('node', node)}.>`] },
    allow_responses: true,
  };
}

/** A pool of nodes that pull the same work queue. */
export interface PoolSpec {
  name: string;
  /** Runs of this pool in flight at once across the cluster (the consumer's max_ack_pending). */
  maxRunsInFlight?: number;
}

export interface TopologyOptions {
  pools: readonly PoolSpec[];
  /** A node's lease TTL (the sb_nodes bucket's max age); nodes renew at a third of it. */
  nodeTtlMs?: number;
  workAckWaitMs?: number;
  eventsAckWaitMs?: number;
}

/** Milliseconds as JetStream's nanoseconds. */
const nanos = (ms: number): number => ms * 1_000_000;

/**
 * Creates or updates every stream, consumer and bucket (the controller's job; nodes only bind).
 * Safe to call at every start and again with more pools: what matches is left alone, what differs
 * is updated, pools not named any more are left in place (their consumers may hold work).
 */
export async function ensureTopology(nc: NatsConnection, jsm: JetStreamManager, options: TopologyOptions): Promise<void> {
  const nodeTtlMs = options.nodeTtlMs ?? DEFAULT_NODE_TTL_MS;
  if (!Number.isInteger(nodeTtlMs) || nodeTtlMs < SECOND_MS) throw new SwitchboardError('INVALID_PARAMS', `the node TTL must be a whole number of milliseconds, at least ${SECOND_MS} (got ${nodeTtlMs})`);
  await ensureStream(
    jsm,
    { name: WORK_STREAM, retention: RetentionPolicy.Workqueue, storage: StorageType.File },
    // A controller that retries a dispatch with the same run id stores it once.
    { subjects: ['sb.work.>'], max_age: nanos(WORK_ITEM_MAX_AGE_MS), duplicate_window: nanos(EVENTS_DUPLICATE_WINDOW_MS) },
  );
  for (const pool of options.pools) await ensurePool(jsm, pool, options.workAckWaitMs);
  await ensureStream(
    jsm,
    { name: EVENTS_STREAM, retention: RetentionPolicy.Limits, storage: StorageType.File },
    { subjects: ['sb.events.>'], max_age: nanos(EVENTS_MAX_AGE_MS), duplicate_window: nanos(EVENTS_DUPLICATE_WINDOW_MS), allow_direct: true },
  );
  await ensureConsumer(
    jsm,
    EVENTS_STREAM,
    { durable_name: LEDGER_CONSUMER, filter_subject: 'sb.events.>', ack_policy: AckPolicy.Explicit, deliver_policy: DeliverPolicy.All },
    { ack_wait: nanos(options.eventsAckWaitMs ?? DEFAULT_EVENTS_ACK_WAIT_MS), max_ack_pending: LEDGER_MAX_ACK_PENDING },
  );
  await ensureBucket(nc, jsm, NODES_BUCKET, nodeTtlMs);
  await ensureBucket(nc, jsm, CLAIMS_BUCKET, CLAIM_TTL_MS);
}

/**
 * Creates or updates one pool's consumer of SB_WORK (the stream must be there: ensureTopology):
 * what a controller does when a node that pulls a pool of its own joins.
 */
export async function ensurePool(jsm: JetStreamManager, pool: PoolSpec, workAckWaitMs?: number): Promise<void> {
  await ensureConsumer(
    jsm,
    WORK_STREAM,
    { durable_name: poolConsumer(pool.name), filter_subject: workSubject(pool.name), ack_policy: AckPolicy.Explicit },
    {
      // At most once: a run that reached a node is never handed to another behind the user's back.
      max_deliver: 1,
      ack_wait: nanos(workAckWaitMs ?? DEFAULT_WORK_ACK_WAIT_MS),
      max_ack_pending: pool.maxRunsInFlight ?? DEFAULT_POOL_RUNS_IN_FLIGHT,
    },
  );
}

/** JetStream's "not found" for a stream (10059) or a consumer (10014). */
function isNotFound(err: unknown): boolean {
  return err instanceof JetStreamApiError && (err.code === 10059 || err.code === 10014);
}

/** True when a value of `wanted` differs in `actual` (arrays compared by content). */
function differs(wanted: object, actual: object): boolean {
  const have = actual as Record<string, unknown>;
  return Object.entries(wanted).some(([key, value]) => JSON.stringify(value) !== JSON.stringify(have[key]));
}

/** A thing laid out before with settings that cannot be changed in place: the operator decides. */
function cannotChange(what: string, wanted: object, actual: object): SwitchboardError {
  const have = actual as Record<string, unknown>;
  const keys = Object.entries(wanted).filter(([key, value]) => JSON.stringify(value) !== JSON.stringify(have[key])).map(([key]) => key);
  return new SwitchboardError('CONFLICT', `${what} exists with other ${keys.join(', ')}, which cannot be changed in place: delete it to have it made again`, { what, keys });
}

/** A stream with `fixed` settings (made once) and `editable` ones (brought up to date). */
async function ensureStream(jsm: JetStreamManager, fixed: { name: string; retention: RetentionPolicy; storage: StorageType }, editable: Partial<StreamUpdateConfig>): Promise<void> {
  let current: StreamConfig;
  try {
    current = (await jsm.streams.info(fixed.name)).config;
  } catch (err) {
    if (!isNotFound(err)) throw err;
    await jsm.streams.add({ ...fixed, ...editable });
    return;
  }
  if (differs(fixed, current)) throw cannotChange(`stream ${fixed.name}`, fixed, current);
  if (differs(editable, current)) await jsm.streams.update(fixed.name, { ...current, ...editable });
}

/** A durable consumer with `fixed` settings (made once) and `editable` ones (brought up to date). */
async function ensureConsumer(jsm: JetStreamManager, stream: string, fixed: Partial<ConsumerConfig> & { durable_name: string }, editable: Partial<ConsumerUpdateConfig>): Promise<void> {
  let current: ConsumerConfig;
  try {
    current = (await jsm.consumers.info(stream, fixed.durable_name)).config;
  } catch (err) {
    if (!isNotFound(err)) throw err;
    await jsm.consumers.add(stream, { ...fixed, ...editable });
    return;
  }
  if (differs(fixed, current)) throw cannotChange(`consumer ${fixed.durable_name} of ${stream}`, fixed, current);
  if (differs(editable, current)) await jsm.consumers.update(stream, fixed.durable_name, editable);
}

/** A key-value bucket with one value per key that lives `ttlMs` unless written again. */
async function ensureBucket(nc: NatsConnection, jsm: JetStreamManager, bucket: string, ttlMs: number): Promise<void> {
  // Kvm.create makes the bucket with the right stream settings when it is missing and only binds
  // when it exists, so a changed TTL is set on the stream itself.
  await new Kvm(nc).create(bucket, { ttl: ttlMs, history: 1 });
  const stream = `KV_${bucket}`;
  const { config } = await jsm.streams.info(stream);
  // The duplicate window may not be longer than the max age.
  if (config.max_age !== nanos(ttlMs)) await jsm.streams.update(stream, { ...config, max_age: nanos(ttlMs), duplicate_window: Math.min(config.duplicate_window, nanos(ttlMs)) });
}
