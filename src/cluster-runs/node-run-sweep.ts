/**
 * The controller's reconciling of runs it sent to nodes (issue 26), so none waits forever on a node
 * that is gone or on a work item nobody took:
 *
 * - a node lost or left (NodeDirectory), and once at start for every node not live: each of its
 *   unfinished runs is looked at by its claim. Nobody's claim, or the controller's: no node started
 *   it and none can once the controller holds the claim (abandon), so it ends `failed
 *   (not_started)`: ending it is not a retry. The node's claim: the run becomes `orphaned`, an
 *   event the controller publishes on the run's own subject, fenced on the subject's last message
 *   (expect-last-subject-sequence), so it lands after everything the node stored and a node that
 *   comes back cannot slip an event in between. The person then decides (cancel it, or resume it in a new run).
 * - now and then: a queued run whose work item is gone from the queue (refused, aged out) with no
 *   claim, or is older than a node would start, is abandoned and ends `failed (not_started)` too.
 *   So is one whose item was lost in delivery: the pool's consumer handed it to a pull whose
 *   connection then died (a node cut off just then), and with max_deliver 1 never hands it again.
 *   It is still in the queue, unacknowledged, and nobody claimed it: once it has been seen so for
 *   longer than a node that has the item could still be claiming it (the consumer's ack wait, the
 *   claim's own budget of tries, and the node's lease TTL, whichever is longest, on a monotonic
 *   clock), the controller takes the claim, so a node that still has it cannot start it, and
 *   removes it. Not sent again: a run is never retried behind the user's back.
 *
 * One sweep at a time (a chain), so two never race on one run.
 */
import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import { headers, type NatsConnection } from '@nats-io/transport-node';
import type { Disposable } from '../core/disposable.js';
import { errorMessage } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import { EVENTS_STREAM, eventMessageId, eventSubject, isWrongLastSequence, NODE_HEADER, parseRunEvent, STALE_WORK_ITEM_MS, type ConsumerPosition, type EventIntake, type NodeDirectory, type RunClaim } from '../cluster/index.js';
import type { RunLedger, RunRecord } from '../ledger/index.js';
import { initialState, step, type EndStatus, type RunSpec, type RunState } from '../ledger/run-model.js';
import { doneEvent, stateEvent, type RunEvent } from '../ledger/run-events.js';
import { CONTROLLER_PUBLISHER } from './ledger-sink.js';
import { eventMessage } from './run-wire.js';

/** How often queued runs are looked at for a work item nobody took. */
const DEFAULT_SWEEP_EVERY_MS = 60_000;
/** How old the controller's own claim on a queued run must be before the sweep ends the run (whoever took it ends it sooner). */
const CONTROLLER_CLAIM_SETTLE_MS = 60_000;
/** Tries at publishing `orphaned` when the node's events keep landing first. */
const ORPHAN_ATTEMPTS = 5;

/** Where a run's work item was put: its place in SB_WORK and the pool whose consumer hands it out. */
export interface WorkItemAt {
  streamSeq: number;
  pool: string;
}

/** What the check of queued runs needs to see of the work queue. */
export interface QueuedItems {
  /** Where the run's work item sits, when this process dispatched it. */
  workItemOf(runId: string): WorkItemAt | undefined;
  /** True while the work item at `streamSeq` is in the queue. */
  isQueued(streamSeq: number): Promise<boolean>;
  /** How far pool `pool`'s consumer has handed out the stream, and its ack wait. */
  consumerPosition(pool: string): Promise<ConsumerPosition>;
}

/** What the sweep needs of the controller's side (ClusterRuns). */
interface SweptRuns extends QueuedItems {
  claimOf(run: Pick<RunSpec, 'id' | 'node'>): Promise<RunClaim | undefined>;
  /** Takes the run's claim: true when no node has it (the run is the controller's to end). */
  abandon(spec: RunSpec): Promise<boolean>;
  /**
   * True when the run service has the run elsewhere than on `node` (RemoteRuns.trackPlaces): waiting
   * on the controller for a slot, or moved to another node since the ledger was read. Such a run is
   * not `node`'s to settle: the service sends it, moves it or ends it.
   */
  elsewhere(runId: string, node: string): boolean;
}

/**
 * Queued runs whose work item the consumer delivered but nobody claimed, and since when the sweep
 * has seen them so: an item delivered to a node is claimed at once, so one still unclaimed past
 * the consumer's ack wait was lost on the way (the consumer counts it undelivered by then, and
 * never hands it again).
 */
export class UnclaimedDeliveries {
  private readonly since = new Map<string, number>();

  /** Notes that run `runId`'s item is delivered and unclaimed at `now`; true once it has been so for longer than `ackWaitMs`. */
  seen(runId: string, now: number, ackWaitMs: number): boolean {
    const first = this.since.get(runId) ?? now;
    this.since.set(runId, first);
    return now - first > ackWaitMs;
  }

  /** Keeps only the runs in `runIds` (the others were claimed, ended, or not delivered). */
  keepOnly(runIds: ReadonlySet<string>): void {
    for (const runId of this.since.keys()) if (!runIds.has(runId)) this.since.delete(runId);
  }
}

/** One sweep's look at the queued runs: each pool's consumer is asked once, whatever the number of runs. */
export interface QueuedRunsPass {
  readonly positions: Map<string, Promise<ConsumerPosition>>;
  /** Runs seen delivered and unclaimed in this pass. */
  readonly unclaimed: Set<string>;
}

export interface QueuedRunCheckOptions {
  /** The wall clock, for a run's `created_at`. */
  now: () => number;
  /** A clock that never jumps (an NTP step, a resumed VM), for how long an item has been seen unclaimed. */
  monotonicNow: () => number;
  /**
   * The least time an item delivered and unclaimed is waited on before it counts as lost, besides
   * the consumer's ack wait: what a node that has it may still spend claiming it (the claim's
   * budget of tries, the node's lease TTL).
   */
  lostAfterMs: number;
}

/**
 * Decides, for a queued run nobody claimed, whether a node may still take it: its work item too old
 * for any node, gone from the queue, or lost in delivery (handed to a pull, still in the queue,
 * unclaimed for longer than a node holding it could be claiming it) say no.
 */
export class QueuedRunCheck {
  private readonly unclaimed = new UnclaimedDeliveries();

  constructor(
    private readonly items: QueuedItems,
    private readonly options: QueuedRunCheckOptions,
  ) {}

  /** Starts a sweep's pass; `endPass` forgets the runs it did not see delivered and unclaimed. */
  startPass(): QueuedRunsPass {
    return { positions: new Map(), unclaimed: new Set() };
  }

  endPass(pass: QueuedRunsPass): void {
    this.unclaimed.keepOnly(pass.unclaimed);
  }

  /** Why unclaimed queued run `record` will never be taken by a node, or undefined while one still may. */
  async whyNotTaken(record: RunRecord, pass: QueuedRunsPass): Promise<string | undefined> {
    if (this.options.now() - record.spec.created_at > STALE_WORK_ITEM_MS) return 'its work item waited longer than any node would start it';
    const runId = record.spec.id;
    const item = this.items.workItemOf(runId);
    if (item === undefined) return undefined;
    if (!(await this.items.isQueued(item.streamSeq))) return 'its work item left the queue without a node taking it';
    let position = pass.positions.get(item.pool);
    if (position === undefined) {
      position = this.items.consumerPosition(item.pool);
      pass.positions.set(item.pool, position);
    }
    const { deliveredSeq, ackWaitMs } = await position;
    if (item.streamSeq > deliveredSeq) return undefined;
    pass.unclaimed.add(runId);
    if (!this.unclaimed.seen(runId, this.options.monotonicNow(), Math.max(ackWaitMs, this.options.lostAfterMs))) return undefined;
    return `its work item was lost on the way to node ${record.spec.node ?? item.pool}; nothing was started: submit it again`;
  }
}

export interface NodeRunSweepOptions {
  nc: NatsConnection;
  ledger: RunLedger;
  intake: EventIntake;
  directory: NodeDirectory;
  runs: SweptRuns;
  logger: Logger;
  sweepEveryMs?: number;
  now?: () => number;
  /** QueuedRunCheckOptions.lostAfterMs (default 0: the consumer's ack wait alone). */
  lostAfterMs?: number;
}

export class NodeRunSweep {
  private chain: Promise<void> = Promise.resolve();
  private readonly watching: Disposable;
  private readonly timer: NodeJS.Timeout;
  private closed = false;
  private readonly now: () => number;
  private readonly queued: QueuedRunCheck;

  private constructor(
    private readonly options: NodeRunSweepOptions,
    private readonly js: JetStreamClient,
    private readonly jsm: JetStreamManager,
  ) {
    this.now = options.now ?? Date.now;
    this.queued = new QueuedRunCheck(options.runs, { now: this.now, monotonicNow: () => performance.now(), lostAfterMs: options.lostAfterMs ?? 0 });
    this.watching = options.directory.onChange((change) => {
      if (change.kind === 'lost' || change.kind === 'left') void this.serially(() => this.sweepNode(change.node.record.name, `node ${change.node.record.name} ${change.kind === 'lost' ? 'was lost' : 'left'}: ${change.evidence}`, change.node.record.instance));
    });
    this.timer = setInterval(() => void this.serially(() => this.sweepQueued()), options.sweepEveryMs ?? DEFAULT_SWEEP_EVERY_MS);
    this.timer.unref();
  }

  /** Starts watching, and sweeps the runs of every node not live now (resolves once that sweep is done). */
  static async start(options: NodeRunSweepOptions): Promise<NodeRunSweep> {
    const sweep = new NodeRunSweep(options, jetstream(options.nc), await jetstreamManager(options.nc));
    await sweep.serially(() => sweep.sweepAbsentNodes());
    return sweep;
  }

  /** Stops watching and waits for a sweep under way. */
  async close(): Promise<void> {
    this.closed = true;
    this.watching.dispose();
    clearInterval(this.timer);
    await this.chain;
  }

  private serially(step: () => Promise<void>): Promise<void> {
    this.chain = this.chain.then(() => (this.closed ? undefined : step())).catch((err: unknown) => this.options.logger.error('a sweep of node runs failed', { error: errorMessage(err) }));
    return this.chain;
  }

  private async nodeRuns(): Promise<RunRecord[]> {
    return (await this.options.ledger.unfinished()).filter((r) => r.spec.node !== undefined);
  }

  private async sweepAbsentNodes(): Promise<void> {
    for (const record of await this.nodeRuns()) {
      const node = record.spec.node ?? '';
      if (this.options.directory.get(node) === undefined) await this.sweepRun(record, `node ${node} is not live (found when the controller started)`);
    }
  }

  /** The runs of `node`, gone: of its process `instance` when known (a lost node may be back already, under a new one). */
  private async sweepNode(node: string, why: string, instance?: string): Promise<void> {
    for (const record of await this.nodeRuns()) if (record.spec.node === node) await this.sweepRun(record, why, instance);
  }

  /** A run whose node is gone: ended when no node started it, orphaned when its node (that process, when known) had. */
  private async sweepRun(record: RunRecord, why: string, instance?: string): Promise<void> {
    if (record.status === 'orphaned' || this.placedElsewhere(record)) return;
    const runId = record.spec.id;
    try {
      const claim = await this.options.runs.claimOf(record.spec);
      if (claim === undefined || claim.role === 'controller') {
        if (await this.options.runs.abandon(record.spec)) {
          this.endNotStarted(record, `${why}; no node had started it`);
          return;
        }
      }
      const held = await this.options.runs.claimOf(record.spec);
      const holder = held?.holder;
      if (holder === undefined || holder !== record.spec.node) {
        this.options.logger.warn('a run sent to a lost node is held by another; left as it is', { run_id: runId, node: record.spec.node, holder });
        return;
      }
      // Claimed by the node's next process (it came back at once, and took the run from the controller's line): running there, not orphaned.
      if (instance !== undefined && held?.instance !== instance) {
        this.options.logger.info('a run of a lost node is held by its next process; left as it is', { run_id: runId, node: record.spec.node });
        return;
      }
      await this.orphan(holder, runId, why);
    } catch (err) {
      this.options.logger.warn('cannot settle a run of a node that is gone now', { run_id: runId, node: record.spec.node, error: errorMessage(err) });
    }
  }

  /**
   * A node could not take run `runId` it was sent (its claim could not be tried, or the item was
   * too old): no node has it, so it ends `failed (not_started)`; the person submits it again. False
   * when it is not a queued run of that node, or a node holds its claim after all.
   */
  settleRefused(runId: string, node: string, reason: string): Promise<boolean> {
    let ended = false;
    return this.serially(async () => {
      const record = await this.options.ledger.run(runId);
      if (record === undefined || record.status !== 'queued' || record.spec.node !== node) return;
      const claim = await this.options.runs.claimOf(record.spec);
      if (claim !== undefined && claim.role !== 'controller') return;
      if (!(await this.options.runs.abandon(record.spec))) return;
      this.endNotStarted(record, `node ${node} could not take it: ${reason}`);
      ended = true;
    }).then(() => ended);
  }

  /** Queued runs whose work item nobody took (refused, aged out, lost in delivery) or is older than any node would start. */
  private async sweepQueued(): Promise<void> {
    const pass = this.queued.startPass();
    for (const record of await this.nodeRuns()) {
      // One the run service still places (waiting for a slot, moved) has no work item anywhere yet, or another node's.
      if (record.status !== 'queued' || this.placedElsewhere(record)) continue;
      const runId = record.spec.id;
      try {
        const claim = await this.options.runs.claimOf(record.spec);
        // The controller gave it up (a cancel, a dispatch that failed) and its end never came
        // (the controller stopped in between): no node can start it, so it ends now. A claim
        // taken just now is left to the one ending it.
        if (claim?.role === 'controller') {
          if (this.now() - claim.at > CONTROLLER_CLAIM_SETTLE_MS) this.endNotStarted(record, 'the controller had given it up, and its end was not recorded (the controller stopped in between)');
          continue;
        }
        // A node that took the item holds the claim; only one nobody took is ended.
        if (claim !== undefined) continue;
        const why = await this.queued.whyNotTaken(record, pass);
        if (why === undefined) continue;
        if (await this.options.runs.abandon(record.spec)) this.endNotStarted(record, why);
      } catch (err) {
        this.options.logger.warn('cannot look at a queued node run now', { run_id: runId, error: errorMessage(err) });
      }
    }
    this.queued.endPass(pass);
  }

  /** The run service has this run in a line, or on another node than its record (read before it moved) says. */
  private placedElsewhere(record: RunRecord): boolean {
    return this.options.runs.elsewhere(record.spec.id, record.spec.node ?? '');
  }

  /**
   * Records `failed (not_started)` for a run the controller holds the claim of (no node will start
   * it), unless the run service has it elsewhere by now (asked again here, after every await).
   */
  private endNotStarted(record: RunRecord, message: string): void {
    const { ledger } = this.options;
    const runId = record.spec.id;
    if (!ledger.isLive(runId) || record.status !== 'queued' || this.placedElsewhere(record)) return;
    const at = this.now();
    const next = step(initialState(record.spec.created_at), { type: 'fail', reason: 'not_started', message }, at);
    ledger.append(runId, stateEvent(next.transition));
    ledger.append(runId, doneEvent(at, next.state.status as EndStatus, 'not_started', message));
    this.options.logger.info('a node run no node started was ended', { run_id: runId, node: record.spec.node, why: message });
  }

  /**
   * Publishes `orphaned` on the run's subject (under `node`, its node's name) after the last event there: first everything in the
   * stream is taken into the ledger (so the transition starts from the status the node last
   * reported), then the event goes out fenced on the subject's last message. A node event that
   * lands first makes the publish fail; the sweep catches up and tries again.
   */
  private async orphan(node: string, runId: string, why: string): Promise<void> {
    const { ledger, intake, logger } = this.options;
    const subject = eventSubject(node, runId);
    for (let attempt = 1; attempt <= ORPHAN_ATTEMPTS; attempt++) {
      await intake.catchUp(node, runId);
      const record = await ledger.run(runId);
      if (record === undefined || record.status === 'orphaned' || !ledger.isLive(runId)) return;
      const last = await this.jsm.direct.getMessage(EVENTS_STREAM, { last_by_subj: subject });
      const lastSeq = last === null ? 0 : (parseRunEvent(last.data)?.seq ?? 0);
      // The stream has more than the ledger: catch up again.
      if (lastSeq > record.last_seq) continue;
      const at = this.now();
      const state = { status: record.status, since: at, started_at: record.started_at } as RunState;
      const next = step(state, { type: 'orphan', message: why }, at);
      const event: RunEvent = { run_id: runId, seq: record.last_seq + 1, ...stateEvent(next.transition) };
      const h = headers();
      h.set(NODE_HEADER, CONTROLLER_PUBLISHER);
      try {
        const ack = await this.js.publish(subject, JSON.stringify(eventMessage(event)), {
          msgID: eventMessageId(node, runId, event.seq),
          headers: h,
          expect: { lastSubjectSequence: last?.seq ?? 0 },
        });
        // The server looks at the message id before the fence: a duplicate was stored by no one here, so the fence was never asked.
        if (ack.duplicate) continue;
      } catch (err) {
        if (isWrongLastSequence(err)) continue;
        throw err;
      }
      logger.warn('a run was orphaned: its node is gone, and what became of the agent is unknown', { run_id: runId, node: record.spec.node, seq: event.seq, why });
      // Taken into the ledger now, not when the intake's delivery comes round.
      await intake.catchUp(node, runId);
      return;
    }
    logger.warn('could not orphan a run: its node kept writing', { run_id: runId });
  }
}
