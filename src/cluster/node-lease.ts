/**
 * A node's lease, the node side: its record under `node.<name>` in sb_nodes, created only if no
 * live node has the name (kv.create), renewed by compare-and-set (kv.update with the revision we
 * hold) every third of the bucket's TTL and at once when the slots change, and deleted when the
 * node leaves. Nothing but the renewals keeps it: nats-server 2.9.10 drops a key its bucket's max
 * age passed, silently (no delete marker), so a renewal refused with "wrong last sequence" is how
 * a node learns its lease lapsed. It then registers again under a new epoch; the states and their
 * changes are lease-state.ts's.
 */
import { randomUUID } from 'node:crypto';
import { Kvm, type KV } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';
import { Emitter, type Event } from '../core/emitter.js';
import { errorMessage, SwitchboardError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import { leaseStep, type LeaseInput, type LeaseState } from './lease-state.js';
import { readKvEntry } from './kv-records.js';
import { isWrongLastSequence } from './nats-errors.js';
import { NodeRecordSchema, type NodeDescription, type NodeRecord } from './node-record.js';
import { checkName, nodeKey, NODES_BUCKET } from './topology.js';

/** A renewal every third of the TTL: two can be lost before the lease lapses. */
const RENEWALS_PER_TTL = 3;

export interface LeaseChange {
  readonly from: LeaseState;
  readonly to: LeaseState;
}

export interface NodeLeaseOptions {
  nc: NatsConnection;
  node: NodeDescription;
  logger: Logger;
  now?: () => number;
}

export class NodeLease {
  private readonly changes = new Emitter<LeaseChange>();
  /** Fires on every change of state, with the evidence in the state it reached. */
  readonly onStateChange: Event<LeaseChange> = this.changes.event;
  private current: LeaseState = { kind: 'registering', epoch: 1 };
  /** The epoch of the last registration made or being made (kept when the lease is left). */
  private epoch = 1;
  private description: NodeDescription;
  private readonly key: string;
  private readonly instance = randomUUID();
  private readonly startedAt: number;
  private timer: NodeJS.Timeout | undefined;
  /** The step in flight, if any: renewals never overlap, since each needs the revision of the last. */
  private stepping: Promise<void> | undefined;
  /** A step was asked for while one ran (the slots changed): run another right after. */
  private stepAgain = false;
  private leaving = false;

  private readonly nc: NatsConnection;

  private constructor(
    private readonly kv: KV,
    readonly ttlMs: number,
    options: NodeLeaseOptions,
    private readonly logger: Logger,
    private readonly now: () => number,
  ) {
    this.nc = options.nc;
    this.description = options.node;
    this.key = nodeKey(options.node.name);
    this.startedAt = now();
  }

  /**
   * Registers the node and resolves once the lease is held. CONFLICT when a live node has the
   * name; CONNECTION_FAILED when the cluster's bucket cannot be reached (the controller lays it out).
   */
  static async register(options: NodeLeaseOptions): Promise<NodeLease> {
    checkName('node', options.node.name);
    checkSlots(options.node.slots);
    const logger = options.logger.child({ node: options.node.name });
    let kv: KV;
    let ttlMs: number;
    try {
      // Bind only (no stream lookups a node's user may not make); the stream API's get reads its own key, never a direct get (reflected.ts).
      kv = await new Kvm(options.nc).open(NODES_BUCKET, { allow_direct: false });
      ttlMs = (await kv.status()).ttl;
    } catch (err) {
      throw new SwitchboardError('CONNECTION_FAILED', `cannot open the cluster's node bucket ${NODES_BUCKET} (${errorMessage(err)}); the controller lays it out when it starts`, {}, { cause: err });
    }
    if (ttlMs <= 0) throw new SwitchboardError('CONNECTION_FAILED', `the bucket ${NODES_BUCKET} has no TTL, so it cannot hold leases; the controller lays it out`);
    const lease = new NodeLease(kv, ttlMs, options, logger, options.now ?? Date.now);
    try {
      await lease.claim();
    } catch (err) {
      throw new SwitchboardError('CONNECTION_FAILED', `cannot register node ${options.node.name}: ${errorMessage(err)}`, {}, { cause: err });
    }
    if (lease.current.kind !== 'held') {
      throw new SwitchboardError('CONFLICT', `a live node is already registered as '${options.node.name}': ${lease.current.kind === 'left' ? lease.current.evidence : 'the name is taken'}`, { node: options.node.name });
    }
    lease.schedule();
    return lease;
  }

  get state(): LeaseState {
    return this.current;
  }

  /** The record as the lease writes it now. */
  get record(): NodeRecord {
    return { ...this.description, started_at: this.startedAt, epoch: this.epoch, instance: this.instance };
  }

  /** How long between renewals. */
  get renewEveryMs(): number {
    return Math.floor(this.ttlMs / RENEWALS_PER_TTL);
  }

  /** Says the node's slots changed; the lease is renewed at once, so the controller sees it. */
  setSlots(slots: NodeDescription['slots']): void {
    checkSlots(slots);
    this.description = { ...this.description, slots: { ...slots } };
    this.kick();
  }

  /** Deletes the record if it is still ours, and ends in `left`. */
  async leave(): Promise<void> {
    if (this.leaving) return;
    this.leaving = true;
    clearTimeout(this.timer);
    await this.stepping;
    const state = this.current;
    if (state.kind === 'held') {
      try {
        // Only our own revision: a record another process wrote since is not ours to delete.
        await this.kv.delete(this.key, { previousSeq: state.revision });
      } catch (err) {
        this.logger.warn('could not delete the lease when leaving; it will expire', { error: errorMessage(err) });
      }
    }
    this.apply({ kind: 'leave', evidence: 'the node left the cluster' });
    this.changes.dispose();
  }

  private apply(input: LeaseInput): void {
    const from = this.current;
    const to = leaseStep(from, input);
    if (to === from) return;
    this.current = to;
    if (to.kind !== 'left') this.epoch = to.epoch;
    const fields = { from: from.kind, to: to.kind, epoch: this.epoch };
    if (to.kind === 'lapsed' || (to.kind === 'left' && from.kind !== 'held')) this.logger.warn('node lease changed', { ...fields, evidence: to.evidence });
    else if (to.kind !== from.kind) this.logger.info('node lease changed', fields);
    this.changes.fire({ from, to });
  }

  private schedule(): void {
    clearTimeout(this.timer);
    if (this.leaving || this.current.kind === 'left') return;
    this.timer = setTimeout(() => this.kick(), this.renewEveryMs);
  }

  /** Runs a step now, or right after the one in flight. */
  private kick(): void {
    if (this.leaving) return;
    if (this.nc.isClosed()) {
      // Nothing can renew the lease any more (a closed connection never reconnects): it ends
      // here, rather than in a timer that fails every third of the TTL for as long as the process
      // lives, and keeps it from exiting.
      this.logger.warn('the NATS connection is closed; the lease is given up');
      clearTimeout(this.timer);
      this.apply({ kind: 'leave', evidence: 'the NATS connection closed, so nothing renews the lease' });
      return;
    }
    if (this.stepping) {
      this.stepAgain = true;
      return;
    }
    clearTimeout(this.timer);
    this.stepping = this.step()
      .catch((err: unknown) => this.logger.warn('lease step failed; trying again', { error: errorMessage(err) }))
      .finally(() => {
        this.stepping = undefined;
        if (this.stepAgain) {
          this.stepAgain = false;
          this.kick();
        } else this.schedule();
      });
  }

  /** One turn of the machine: renew what is held, register again what lapsed. */
  private async step(): Promise<void> {
    const state = this.current;
    if (state.kind === 'held') {
      const sinceMs = this.now() - state.confirmedAt;
      if (sinceMs >= this.ttlMs) this.apply({ kind: 'renewal-overdue', sinceMs });
      else await this.renew(state.revision);
    }
    if (this.current.kind === 'lapsed') this.apply({ kind: 'retry' });
    if (this.current.kind === 'registering') await this.claim();
  }

  private encode(): string {
    return JSON.stringify(this.record);
  }

  private async renew(revision: number): Promise<void> {
    try {
      this.apply({ kind: 'renewed', revision: await this.kv.update(this.key, this.encode(), revision), at: this.now() });
    } catch (err) {
      if (!isWrongLastSequence(err)) {
        // Not an answer (a timeout, a reconnect): the next step tries again, until the TTL is up.
        this.logger.debug('lease renewal got no answer', { error: errorMessage(err) });
        return;
      }
      // A renewal that timed out may have been stored after all, leaving us a revision behind:
      // a record that is still ours is a lease still held.
      const holder = await this.keyHolder();
      if (holder.kind === 'ours') this.apply({ kind: 'renewed', revision: holder.revision, at: this.now() });
      else if (holder.kind === 'nobody-s') this.apply({ kind: 'renewed', revision: await this.overwrite(holder.revision), at: this.now() });
      else this.apply({ kind: 'renewal-refused', evidence: 'the server refused the renewal: the lease had expired or another process wrote it (wrong last sequence)' });
    }
  }

  /**
   * Creates the record; a record of ours found instead (a create whose answer was lost) is taken
   * back. Something there that is no node record is taken only once it has stayed so for a whole
   * lease time: a live node of the name writes its record over it at its next renewal, well inside
   * that, and must find its name still its own.
   */
  private async claim(): Promise<void> {
    if (await this.create()) return;
    let holder = await this.keyHolder();
    if (holder.kind === 'nobody-s') {
      await new Promise((resolve) => setTimeout(resolve, this.ttlMs));
      if (await this.create()) return;
      holder = await this.keyHolder();
    }
    // Gone since (it expired between the two calls): the next step creates it.
    if (holder.kind === 'none') return;
    if (holder.kind === 'ours') {
      this.apply({ kind: 'created', revision: await this.kv.update(this.key, this.encode(), holder.revision), at: this.now() });
      return;
    }
    if (holder.kind === 'nobody-s') {
      this.apply({ kind: 'created', revision: await this.overwrite(holder.revision), at: this.now() });
      return;
    }
    this.apply({ kind: 'name-taken', evidence: `the name ${this.description.name} is taken: a node started at ${new Date(holder.record.started_at).toISOString()} holds it` });
  }

  /** Creates the record where there is none: false when the key holds something. */
  private async create(): Promise<boolean> {
    try {
      this.apply({ kind: 'created', revision: await this.kv.create(this.key, this.encode()), at: this.now() });
      return true;
    } catch (err) {
      if (!isWrongLastSequence(err)) throw err;
      return false;
    }
  }

  /**
   * Who holds the lease's key now: this process, another node process (its record), nobody (no
   * entry, or a delete), or nobody's (`nobody-s`): an entry that is no node record, which no node
   * wrote. Any client can have the server answer a request of its own onto this key (a JetStream
   * API reply goes wherever its asker says: reflected.ts), and such an answer must not take a
   * node's name from it.
   */
  private async keyHolder(): Promise<{ kind: 'ours'; revision: number } | { kind: 'nobody-s'; revision: number } | { kind: 'theirs'; record: NodeRecord } | { kind: 'none' }> {
    const held = readKvEntry(await this.kv.get(this.key), NodeRecordSchema);
    if (held.kind === 'none') return held;
    if (held.kind === 'stray') return { kind: 'nobody-s', revision: held.revision };
    return held.record.instance === this.instance ? { kind: 'ours', revision: held.revision } : { kind: 'theirs', record: held.record };
  }

  /** Writes the record over an entry that is no node record (compare-and-set on its revision). */
  private async overwrite(revision: number): Promise<number> {
    this.logger.warn('the lease key held something that is no node record (the server put it there on another client\'s say-so): written over', { key: this.key, revision });
    return this.kv.update(this.key, this.encode(), revision);
  }
}

function checkSlots(slots: NodeDescription['slots']): void {
  const whole = (n: number): boolean => Number.isInteger(n) && n >= 0;
  if (!whole(slots.total) || !whole(slots.free) || slots.free > slots.total) {
    throw new SwitchboardError('INVALID_PARAMS', `slots must be whole numbers with 0 <= free <= total (got free ${slots.free} of ${slots.total})`);
  }
}
