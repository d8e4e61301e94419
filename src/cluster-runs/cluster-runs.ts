/**
 * The controller's side of runs on the cluster (issue 26), what the run service knows as its
 * RemoteRuns: which nodes can take a run (the directory of leases: backend, labels, least loaded),
 * a recorded run sent to its node's own queue, a run given up by taking its claim, a cancel sent
 * to the node that holds the run by request and reply, and the nodes' events into the ledger
 * (EventIntake → RunLedger.ingest), each checked against the node the run was sent to
 * (ledger-sink.ts), and the runs of nodes that are gone reconciled (node-run-sweep.ts).
 *
 * Each node pulls a queue of its own (the pool named after it, laid out when it joins): the
 * controller chose the node, so the run goes there and nowhere else.
 */
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import type { Disposable } from '../core/disposable.js';
import { errorMessage, isSwitchboardError, SwitchboardError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import { CLAIM_BUDGET_MS, ConversationShelf, DEFAULT_NODE_TTL_MS, EventIntake, ensurePool, ensureTopology, lastEventSeq, NodeDirectory, nodeControlClient, serveControllerControl, WorkDispatcher, type RunClaim } from '../cluster/index.js';
import type { RunLedger } from '../ledger/index.js';
import type { RunMode, RunSpec } from '../ledger/run-model.js';
import type { ChooseOptions, ClusterNodeView, RemoteCancel, RemoteRuns, RunPlace, StopHow } from '../runs/index.js';
import { LedgerSink } from './ledger-sink.js';
import { NodeRunSweep, type WorkItemAt } from './node-run-sweep.js';
import { runWork } from './run-wire.js';

/** Runs whose node is remembered for the events' check; past it the oldest are read again from the ledger. */
const REMEMBERED_RUNS = 10_000;
/** How long a resume waits for the node that ran its conversation to write its latest copy; past it, the copy there is taken. */
const SHELVE_WAIT_MS = 5_000;
/** A run that ended longer ago than this had its last copy written: its node is not asked again. */
const SHELVED_AFTER_END_MS = 60_000;

export interface ClusterRunsOptions {
  nc: NatsConnection;
  logger: Logger;
  /** A node's lease TTL (ensureTopology's default when absent). */
  nodeTtlMs?: number;
  /** How long a node may hold a work item without a heartbeat (ensureTopology's default when absent). */
  workAckWaitMs?: number;
  /** How often queued node runs are looked at for a work item nobody took (node-run-sweep.ts's default when absent). */
  sweepEveryMs?: number;
}

export class ClusterRuns implements RemoteRuns {
  private intake: EventIntake | undefined;
  /** Where the nodes' events go into the ledger (takeEvents). */
  private sink: LedgerSink | undefined;
  private sweep: NodeRunSweep | undefined;
  /** Where each run dispatched by this process sits in the work stream, to remove it when it is given up. */
  private readonly dispatched = new Map<string, WorkItemAt>();
  /** The conversation copies for resumes, one after another (copyConversation never rejects). */
  private carrying: Promise<void> = Promise.resolve();
  /** The ledger events go into: where a resumed run's node is read. */
  private ledger: RunLedger | undefined;
  /** Where the run service has its runs (trackPlaces). */
  private placeOf: (runId: string) => RunPlace | undefined = () => undefined;

  private constructor(
    private readonly options: ClusterRunsOptions,
    readonly directory: NodeDirectory,
    private readonly dispatcher: WorkDispatcher,
    private readonly serving: Disposable,
    private readonly logger: Logger,
  ) {}

  /** Lays out the cluster's topology (the controller's job, idempotent), watches the nodes and answers their joins. */
  static async open(options: ClusterRunsOptions): Promise<ClusterRuns> {
    const logger = options.logger.child({ component: 'cluster-runs' });
    const jsm: JetStreamManager = await jetstreamManager(options.nc);
    await ensureTopology(options.nc, jsm, {
      pools: [],
      ...(options.nodeTtlMs !== undefined && { nodeTtlMs: options.nodeTtlMs }),
      ...(options.workAckWaitMs !== undefined && { workAckWaitMs: options.workAckWaitMs }),
    });
    const directory = await NodeDirectory.open({ nc: options.nc, logger });
    const dispatcher = await WorkDispatcher.open(options.nc, logger);
    // The handlers answer only once it exists: a request before that finds nothing to settle.
    const late: { runs?: ClusterRuns } = {};
    const serving = serveControllerControl(
      options.nc,
      {
        ping: () => Promise.resolve({ at: Date.now() }),
        join: async ({ node }) => {
          await ensurePool(jsm, { name: node }, options.workAckWaitMs);
          // Its shelf for its CLIs' conversations (a node may not create streams). Without one the
          // node runs all the same; a resume elsewhere then finds no copy of its conversations.
          await ConversationShelf.ensure(options.nc, node).catch((err: unknown) => logger.warn("could not lay out a node's conversation shelf", { node, error: errorMessage(err) }));
          logger.info('node joined', { node });
          return { pool: node };
        },
        refused: async ({ node, run_id: runId, reason }) => ({ ended: (await late.runs?.sweep?.settleRefused(runId, node, reason)) ?? false }),
        last_event: async ({ node, run_id: runId }) => ({ seq: (await lastEventSeq(jsm, node, runId)) ?? (await late.runs?.storedLastSeq(node, runId)) ?? 0 }),
      },
      logger,
    );
    late.runs = new ClusterRuns(options, directory, dispatcher, serving, logger);
    return late.runs;
  }

  /**
   * Starts taking the nodes' events into `ledger`. Call once the run service has taken up the runs
   * in flight (RunService.start), so that each event finds its run live in the ledger. Each
   * unfinished node run is first caught up from its subject (what an earlier controller took but
   * never stored), then the runs of nodes that are gone are reconciled, and from then on as nodes go.
   */
  async takeEvents(ledger: RunLedger): Promise<void> {
    if (this.intake) throw new SwitchboardError('INVALID_REQUEST', 'the cluster already takes events into a ledger');
    this.ledger = ledger;
    const sink = new LedgerSink(ledger, this.logger);
    this.sink = sink;
    const nodeRuns = (await ledger.unfinished()).filter((r) => r.spec.node !== undefined);
    for (const run of nodeRuns) if (run.status === 'orphaned') sink.markOrphaned(run.spec.id);
    const intake = await EventIntake.start({ nc: this.options.nc, sink, logger: this.logger });
    this.intake = intake;
    intake.onHole((hole) => this.logger.warn('events of a run were never stored by its node', { run_id: hole.runId, from: hole.from, to: hole.to }));
    for (const run of nodeRuns) if (run.spec.node !== undefined) await intake.catchUp(run.spec.node, run.spec.id);
    this.sweep = await NodeRunSweep.start({
      nc: this.options.nc,
      ledger,
      intake,
      directory: this.directory,
      runs: { claimOf: (run) => this.claimOf(run), abandon: (spec) => this.abandon(spec), elsewhere: (runId, node) => this.elsewhere(runId, node), workItemOf: (runId) => this.dispatched.get(runId), isQueued: (seq) => this.dispatcher.isQueued(seq), consumerPosition: (pool) => this.dispatcher.consumerPosition(pool) },
      // A node that holds an item may still be claiming it for this long, or be frozen for a lease's life.
      lostAfterMs: Math.max(CLAIM_BUDGET_MS, this.options.nodeTtlMs ?? DEFAULT_NODE_TTL_MS),
      logger: this.logger,
      ...(this.options.sweepEveryMs !== undefined && { sweepEveryMs: this.options.sweepEveryMs }),
    });
  }

  /** Who holds the run's claim (a node that started it, the controller), or undefined; its claim is under its node's pool. */
  claimOf(run: Pick<RunSpec, 'id' | 'node'>): Promise<RunClaim | undefined> {
    return this.dispatcher.claimOf(nodeOf(run), run.id);
  }

  offers(backend: string): boolean {
    return this.directory.list().some((n) => n.record.clis.some((c) => c.name === backend));
  }

  choose(backend: string, labels: readonly string[], options: ChooseOptions = {}): string | undefined {
    return this.directory.choose({ backend, labels, ...options })[0]?.name;
  }

  nodes(): ClusterNodeView[] {
    return this.directory
      .list()
      .map(({ record, seenAt }) => ({ name: record.name, labels: [...record.labels], clis: record.clis.map((c) => ({ ...c })), repos: [...record.repos], slots: { ...record.slots }, started_at: record.started_at, seen_at: seenAt }))
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  backendNames(): string[] {
    return [...new Set(this.directory.list().flatMap((n) => n.record.clis.map((c) => c.name)))];
  }

  onNodesChanged(listener: () => void): Disposable {
    return this.directory.onChange(() => listener());
  }

  trackPlaces(placeOf: (runId: string) => RunPlace | undefined): void {
    this.placeOf = placeOf;
  }

  /** The run service has run `runId` waiting for a slot, or on another node than `node`. */
  private elsewhere(runId: string, node: string): boolean {
    const place = this.placeOf(runId);
    return place !== undefined && (place.waiting || place.node !== node);
  }

  async dispatch(spec: RunSpec, mode: 'auto' | RunMode): Promise<void> {
    const node = nodeOf(spec);
    await this.carryConversation(spec, node);
    // Before the node can take it: its events are its node's from now on (a run that waited may have moved).
    this.sink?.sentTo(spec.id, node);
    const sent = await this.dispatcher.dispatch({ run_id: spec.id, pool: node, payload: runWork(spec, mode) });
    this.dispatched.set(spec.id, { streamSeq: sent.streamSeq, pool: node });
    if (this.dispatched.size > REMEMBERED_RUNS) this.dispatched.delete(this.dispatched.keys().next().value ?? '');
    this.logger.info('run sent to a node', { run_id: spec.id, node, backend: spec.backend });
  }

  /**
   * A resume on another node than the one that ran the conversation: the copy that node keeps of
   * it goes onto the shelf of the node the run goes to, which puts it where its CLI reads it. Not
   * there (a CLI whose files are not carried, a node that could not write it): the run goes all
   * the same, and goes on where the CLI has the conversation (a shared HOME) or fails saying so.
   */
  private carryConversation(spec: RunSpec, to: string): Promise<void> {
    // Only a resume waits here; one at a time, so that many resumes at once do not read and write
    // many conversations (up to 256 MiB each) at once over the controller's connection.
    if (spec.agent_session === undefined || spec.parent === null) return Promise.resolve();
    const copy = this.carrying.then(() => this.copyConversation(spec, to));
    this.carrying = copy;
    return copy;
  }

  private async copyConversation(spec: RunSpec, to: string): Promise<void> {
    if (spec.agent_session === undefined || spec.parent === null || this.ledger === undefined) return;
    const parent = await this.ledger.run(spec.parent).catch(() => undefined);
    const from = parent?.spec.node;
    if (from === undefined || from === to) return;
    // A node still there writes its latest copy first: a resume sent just as the run ended would
    // otherwise take the copy before its last. One that is gone left what it last wrote.
    const endedLongAgo = parent?.ended_at != null && Date.now() - parent.ended_at > SHELVED_AFTER_END_MS;
    if (this.directory.get(from) !== undefined && !endedLongAgo) {
      await nodeControlClient(this.options.nc, from, SHELVE_WAIT_MS)
        .call('shelve', { backend: spec.backend, conversation: spec.agent_session })
        .catch((err: unknown) => this.logger.info('the node that ran a conversation did not write its latest copy before a resume elsewhere', { run_id: spec.id, from, error: errorMessage(err) }));
    }
    try {
      const source = await ConversationShelf.open(this.options.nc, from);
      const bytes = await source.copyTo(spec.backend, spec.agent_session, await ConversationShelf.open(this.options.nc, to));
      if (bytes === undefined) this.logger.info("no copy of the conversation on its node's shelf", { run_id: spec.id, from, backend: spec.backend });
      else this.logger.info('conversation carried to the node a resume goes to', { run_id: spec.id, from, to, bytes });
    } catch (err) {
      this.logger.warn('could not carry a conversation to the node a resume goes to', { run_id: spec.id, from, to, error: errorMessage(err) });
    }
  }

  /**
   * The last event of `node`'s run `runId` the ledger has: what a node's outbox goes on from when
   * the stream's last message on its subject is no event (0: none, or not that node's run). What
   * the stream has past it is sent again and taken once.
   */
  async storedLastSeq(node: string, runId: string): Promise<number> {
    const run = await this.ledger?.run(runId).catch(() => undefined);
    return run?.spec.node === node ? run.last_seq : 0;
  }

  async abandon(spec: RunSpec): Promise<boolean> {
    const outcome = await this.dispatcher.abandon(nodeOf(spec), spec.id, this.dispatched.get(spec.id)?.streamSeq);
    if (outcome.won) return true;
    return outcome.holder?.role === 'controller';
  }

  async claimed(spec: RunSpec): Promise<boolean> {
    return (await this.claimOf(spec)) !== undefined;
  }

  async failForPolicy(spec: RunSpec, violation: { rule: string; reason: string }): Promise<void> {
    const node = (await this.claimOf(spec))?.holder ?? nodeOf(spec);
    await nodeControlClient(this.options.nc, node).call('cancel', { run_id: spec.id, violation });
  }

  async cancel(spec: RunSpec, how: StopHow = 'cancel'): Promise<RemoteCancel> {
    // The durable mark first: a node that has won the claim but not yet started the run reads it
    // before it starts it, so the node's answer to the request below (found or not) loses nothing.
    // An interrupt's mark says so: a node that has started the run by the time it reads it ends the
    // turn only; one that has not cancels it (no turn to end).
    await this.dispatcher.markStopped(spec.id, how);
    const holder = await this.claimOf(spec);
    if (holder === undefined || holder.role === 'controller') {
      if (await this.abandon(spec)) return 'abandoned';
    }
    // A node holds it (or won it just now): that node ends it.
    const node = (await this.claimOf(spec))?.holder ?? nodeOf(spec);
    try {
      await nodeControlClient(this.options.nc, node).call(how, { run_id: spec.id });
    } catch (err) {
      // A node of an earlier version has no interrupt: run_interrupt exists, so not METHOD_NOT_FOUND.
      if (how === 'interrupt' && isSwitchboardError(err, 'METHOD_NOT_FOUND')) throw new SwitchboardError('INVALID_REQUEST', `node ${node} cannot interrupt a turn (an earlier version of Switchboard): cancel the run instead`, { run_id: spec.id, node });
      throw err;
    }
    return 'sent';
  }

  /** Stops taking events (what the ledger has not taken comes again to the next controller) and watching nodes. */
  async close(): Promise<void> {
    this.serving.dispose();
    await this.sweep?.close();
    await this.intake?.close();
    await this.directory.close();
  }
}

function nodeOf(spec: Pick<RunSpec, 'id' | 'node'>): string {
  if (spec.node === undefined) throw new SwitchboardError('INVALID_PARAMS', `run ${spec.id} names no node`, { run_id: spec.id });
  return spec.node;
}
