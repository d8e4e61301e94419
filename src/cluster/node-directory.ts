/**
 * The controller's view of the live nodes: it watches `node.*` in sb_nodes and keeps each node's
 * latest record, telling who joined, changed, left and was lost.
 *
 * Leaving is a DEL on the watch (kv.delete). Loss is not on the watch at all: nats-server 2.9.10
 * drops an expired key without a marker (/work/nats-notes.md §3), so the directory keeps a timer
 * per node, due one TTL after the last PUT it saw, and confirms with kv.get() === null on the
 * server before it says `lost`. A record with another epoch or process than the one known also
 * means the old registration is gone (the node lapsed and came back): `lost`, then `joined`.
 *
 * The watch starts with updates only, then the current records are read key by key; each key's
 * revision decides which of the two is newer, so nothing between the two steps is missed or
 * applied out of order. The keys are listed by one request (the stream's subjects), never by
 * kv.keys(): that lister is a push consumer that ends only when a delivery says nothing is pending
 * or the consumer has been idle for its 5 s heartbeat, and on nats-server 2.9.10 it went on
 * delivering a node's renewals (every third of the TTL, 5 s by default) for minutes without
 * either, so the controller never finished opening.
 */
import { jetstreamManager } from '@nats-io/jetstream';
import { Kvm, KvWatchInclude, type KV, type KvEntry } from '@nats-io/kv';
import type { NatsConnection, QueuedIterator } from '@nats-io/transport-node';
import { Emitter, type Event } from '../core/emitter.js';
import { errorMessage } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import { LogLimiter } from '../core/log-limiter.js';
import { readKvEntry } from './kv-records.js';
import { NodeRecordSchema, type NodeRecord } from './node-record.js';
import { NODES_BUCKET } from './topology.js';

/** After a loss check finds the key still there (the server expires on its own clock), look again this often. */
const RECHECK_DIVISOR = 10;
const MIN_RECHECK_MS = 50;
/** A watch that ended on its own (a connection closed under it) is started again after this. */
const REWATCH_DELAY_MS = 1_000;

/** A node as the directory knows it: its record, the revision it came with, and when it was seen. */
export interface LiveNode {
  readonly record: NodeRecord;
  readonly revision: number;
  readonly seenAt: number;
}

export type DirectoryEvent =
  | { readonly kind: 'joined'; readonly node: LiveNode }
  | { readonly kind: 'updated'; readonly node: LiveNode; readonly previous: LiveNode }
  /** The node deleted its lease (a graceful leave). */
  | { readonly kind: 'left'; readonly node: LiveNode; readonly evidence: string }
  /** The lease expired, or a new registration replaced it: the node's runs of that epoch are orphaned. */
  | { readonly kind: 'lost'; readonly node: LiveNode; readonly evidence: string };

/** What a run needs of a node. */
export interface NodeRequirements {
  /** An agent CLI the node has (a name in its `clis`). */
  backend: string;
  /** Labels the node must all have. */
  labels?: readonly string[];
  /**
   * Runs the caller has sent to a node and counts as taking its slots: a node's lease says a slot is
   * taken only once the node pulls the run, so two runs chosen in that gap would both go to its last
   * slot. A node's free slots are the fewer of its lease's and its total less these.
   */
  occupied?: (node: string) => number;
  /** Only this node, by name (the caller named it). */
  node?: string;
  /** A repository the node must have at hand (a name in its `repos`). */
  repo?: string;
}

export interface NodeDirectoryOptions {
  nc: NatsConnection;
  logger: Logger;
  now?: () => number;
}

interface Tracked {
  node: LiveNode;
  /** Due when the node's lease may have expired, for a check with the server. */
  timer: NodeJS.Timeout | undefined;
}

export class NodeDirectory {
  private readonly events = new Emitter<DirectoryEvent>();
  readonly onChange: Event<DirectoryEvent> = this.events.event;
  private readonly nodes = new Map<string, Tracked>();
  /** The last revision applied per key, removed ones included, so an older read never wins. */
  private readonly revisions = new Map<string, number>();
  private watch: QueuedIterator<KvEntry> | undefined;
  private watching: Promise<void> | undefined;
  private rewatchTimer: NodeJS.Timeout | undefined;
  private closed = false;
  /** What any client can make the directory say. */
  private readonly strays: LogLimiter;

  private constructor(
    private readonly nc: NatsConnection,
    private readonly kv: KV,
    /** The bucket's TTL: how long a lease lives without a renewal. */
    readonly ttlMs: number,
    private readonly logger: Logger,
    private readonly now: () => number,
  ) {
    this.strays = new LogLimiter(logger);
  }

  /** Opens the bucket and resolves once the current nodes are known. */
  static async open(options: NodeDirectoryOptions): Promise<NodeDirectory> {
    const kv = await new Kvm(options.nc).open(NODES_BUCKET);
    const { ttl } = await kv.status();
    const directory = new NodeDirectory(options.nc, kv, ttl, options.logger.child({ component: 'node-directory' }), options.now ?? Date.now);
    await directory.startWatch();
    return directory;
  }

  /** The live nodes now. */
  list(): LiveNode[] {
    return [...this.nodes.values()].map((t) => t.node);
  }

  /** A live node by name. */
  get(name: string): LiveNode | undefined {
    return this.nodes.get(name)?.node;
  }

  /**
   * The nodes that can take a run now: they have the backend, every label, the repository and a free slot; the
   * least loaded first (the smallest share of slots busy, then the most free, then by name).
   */
  choose(needs: NodeRequirements): NodeRecord[] {
    const labels = needs.labels ?? [];
    // The lease's free slots, less what the caller sent the node that the lease may not show yet.
    const free = (r: NodeRecord): number => Math.max(0, Math.min(r.slots.free, r.slots.total - (needs.occupied?.(r.name) ?? 0)));
    const busyShare = (r: NodeRecord): number => (r.slots.total - free(r)) / r.slots.total;
    return this.list()
      .map((n) => n.record)
      .filter((r) => (needs.node === undefined || r.name === needs.node) && free(r) > 0 && r.clis.some((c) => c.name === needs.backend) && labels.every((l) => r.labels.includes(l)) && (needs.repo === undefined || r.repos.includes(needs.repo)))
      .sort((a, b) => busyShare(a) - busyShare(b) || free(b) - free(a) || a.name.localeCompare(b.name));
  }

  /** Stops watching; no event fires after it resolves. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.rewatchTimer);
    this.watch?.stop();
    await this.watching;
    for (const tracked of this.nodes.values()) clearTimeout(tracked.timer);
    this.strays.flush();
    this.events.dispose();
  }

  private async startWatch(): Promise<void> {
    const watch = await this.kv.watch({ key: 'node.*', include: KvWatchInclude.UpdatesOnly });
    this.watch = watch;
    this.watching = this.follow(watch);
    for (const key of await this.currentKeys()) {
      const entry = await this.kv.get(key);
      if (entry) this.apply(entry);
    }
  }

  /** The keys `node.*` the bucket holds now (a deleted one too, until its marker goes), by one stream info request. */
  private async currentKeys(): Promise<string[]> {
    const jsm = await jetstreamManager(this.nc);
    const prefix = `$KV.${NODES_BUCKET}.`;
    const info = await jsm.streams.info(`KV_${NODES_BUCKET}`, { subjects_filter: `${prefix}node.*` });
    return Object.keys(info.state.subjects ?? {}).map((subject) => subject.slice(prefix.length));
  }

  private async follow(watch: QueuedIterator<KvEntry>): Promise<void> {
    try {
      for await (const entry of watch) this.apply(entry);
    } catch (err) {
      this.logger.warn('the node watch failed', { error: errorMessage(err) });
    }
    if (this.closed) return;
    if (this.nc.isClosed()) {
      this.logger.warn('the node watch ended: the NATS connection is closed');
      return;
    }
    this.logger.warn('the node watch ended; starting it again');
    this.rewatchTimer = setTimeout(() => {
      this.startWatch().catch((err: unknown) => this.logger.error('cannot watch the nodes again', { error: errorMessage(err) }));
    }, REWATCH_DELAY_MS);
  }

  private apply(entry: KvEntry): void {
    if (this.closed) return;
    if (entry.revision <= (this.revisions.get(entry.key) ?? 0)) return;
    this.revisions.set(entry.key, entry.revision);
    const name = entry.key.slice('node.'.length);
    const known = this.nodes.get(name);
    if (entry.operation !== 'PUT') {
      if (known) this.remove(name, known, { kind: 'left', node: known.node, evidence: `the node deleted its lease (${entry.operation})` });
      return;
    }
    const record = recordOf(entry, name);
    if (record === undefined) {
      // Any client can have the server answer a request of its own onto a lease key (reflected.ts): a few lines a minute, then a count.
      this.strays.log('warn', 'ignored a node record that is not one', { key: entry.key, revision: entry.revision });
      return;
    }
    const node: LiveNode = { record, revision: entry.revision, seenAt: this.now() };
    if (known && (known.node.record.instance !== node.record.instance || known.node.record.epoch !== node.record.epoch)) {
      this.remove(name, known, { kind: 'lost', node: known.node, evidence: `replaced by a new registration (epoch ${node.record.epoch} of process ${node.record.instance})` });
      this.track(name, node, undefined);
      return;
    }
    this.track(name, node, known);
  }

  private track(name: string, node: LiveNode, known: Tracked | undefined): void {
    if (known) clearTimeout(known.timer);
    const tracked: Tracked = { node, timer: undefined };
    this.nodes.set(name, tracked);
    this.arm(name, tracked, this.ttlMs);
    this.fire(known ? { kind: 'updated', node, previous: known.node } : { kind: 'joined', node });
  }

  private remove(name: string, tracked: Tracked, event: DirectoryEvent): void {
    clearTimeout(tracked.timer);
    this.nodes.delete(name);
    this.fire(event);
  }

  private arm(name: string, tracked: Tracked, delayMs: number): void {
    clearTimeout(tracked.timer);
    tracked.timer = setTimeout(() => void this.checkLoss(name, tracked), delayMs);
  }

  /** The TTL passed without a PUT: ask the server whether the lease is really gone. */
  private async checkLoss(name: string, tracked: Tracked): Promise<void> {
    const recheckMs = Math.max(MIN_RECHECK_MS, Math.floor(this.ttlMs / RECHECK_DIVISOR));
    let entry: KvEntry | null;
    try {
      entry = await this.kv.get(`node.${name}`);
    } catch (err) {
      // A closed connection never answers: checking again every tenth of the TTL would go on for
      // as long as the process lives.
      if (this.closed || this.nc.isClosed()) return;
      this.logger.debug('cannot check a lease now', { node: name, error: errorMessage(err) });
      if (this.nodes.get(name) === tracked) this.arm(name, tracked, recheckMs);
      return;
    }
    // Something newer came on the watch meanwhile, or the directory closed.
    if (this.closed || this.nodes.get(name) !== tracked) return;
    // Gone, or something newer that is no node record (no node wrote it: a live node writes its
    // record over it at its next renewal, well inside the TTL that has passed).
    const newer = entry !== null && entry.revision > tracked.node.revision;
    if (entry === null || (newer && entry.operation === 'PUT' && recordOf(entry, name) === undefined)) {
      this.remove(name, tracked, { kind: 'lost', node: tracked.node, evidence: `no renewal for ${this.now() - tracked.node.seenAt} ms and the lease is gone from the server${entry === null ? '' : ' (what is there is no node record)'}` });
      return;
    }
    if (newer) this.apply(entry);
    // Still there at the revision we know: the server has not expired it yet.
    else this.arm(name, tracked, recheckMs);
  }

  private fire(event: DirectoryEvent): void {
    try {
      this.events.fire(event);
    } catch (err) {
      this.logger.error('a node directory listener failed', { event: event.kind, error: errorMessage(err) });
    }
  }
}

/** The node record `entry` holds for node `name`, or undefined when it holds none (or another node's). */
function recordOf(entry: KvEntry, name: string): NodeRecord | undefined {
  const held = readKvEntry(entry, NodeRecordSchema);
  return held.kind === 'record' && held.record.name === name ? held.record : undefined;
}
