/**
 * A cluster node that runs a controller's runs (issue 26): it holds a lease saying what it is
 * (name, labels, the backends it has and their versions, free slots), joins (the controller lays
 * out its own work queue), pulls its runs one per free slot, wins each run's claim (the puller's
 * job) and runs it on its own RunService under the controller's id. Every event of a run is
 * recorded in the node's own ledger, and the outbox (event-outbox.ts) sends it on: a run the
 * service would not even record (a folder missing here, a backend it lacks), or one cancelled
 * before it started, is recorded here as ended, never started, and goes out the same way.
 *
 * While its lease is not held (lapsed, or cut off from NATS), the node pulls no new runs.
 *
 * A cancel comes two ways, so none is lost: the controller's mark in the claims bucket
 * (`cancel.<run>`, written first), read after the claim is won and before the run is submitted,
 * and again once the service has it; and the request that follows, answered as soon as the cancel
 * is taken (the run's end comes through its events). An interrupt comes the same two ways: it ends
 * a started run's turn and keeps the conversation for a follow-up; a run not started yet it cancels.
 */
import { setTimeout as delay } from 'node:timers/promises';
import type { NatsConnection } from '@nats-io/transport-node';
import type { Disposable } from '../core/disposable.js';
import { errorMessage, isSwitchboardError, SwitchboardError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import { controllerControlClient, NodeLease, RunClaims, serveNodeControl, WorkPuller, type MarkedStop, type WorkItem } from '../cluster/index.js';
import type { RunLedger } from '../ledger/index.js';
import { agentSessionIn, doneEvent, stateEvent, type RunEvent } from '../ledger/run-events.js';
import { initialState, step, type EndStatus, type RunInput, type RunSpec } from '../ledger/run-model.js';
import { carriesBackend, type RunService } from '../runs/index.js';
import { RunWorkSchema, type RunWork } from './run-wire.js';
import type { ConversationCarrier } from './conversation-carrier.js';
import type { NodeWorkspaces } from './node-workspaces.js';

/** Between tries to join while no controller answers. */
const JOIN_RETRY_MS = 1_000;
/** Between tries to follow a live run whose events could not be read (the slot stays taken meanwhile). */
const FOLLOW_RETRY_MS = 1_000;

export interface RunNodeOptions {
  nc: NatsConnection;
  /** The node's run service. */
  service: RunService;
  /** The service's ledger (its store the node's own, behind the outbox): a run never started is ended there. */
  ledger: RunLedger;
  name: string;
  labels?: readonly string[];
  /** Runs at once on this node. */
  slots: number;
  logger: Logger;
  pullExpiresMs?: number;
  /** Gives up a start still waiting for a controller to answer the join (SHUTTING_DOWN). */
  signal?: AbortSignal;
  /**
   * Called first when a claimed run's turn comes, before anything of it is looked at: tests hold
   * a run here, in the window where the claim is won but the run is unknown to the service.
   */
  claimed?: (runId: string) => Promise<void>;
  /**
   * Called once the service has the run (it may be running), before the node applies the stops
   * asked while it was taken: tests hold a run here, where a stop request finds it still starting.
   */
  taken?: (runId: string) => Promise<void>;
  /** Keeps its runs' CLI conversations on its shelf, and puts one shelved for it in place before a resume. */
  conversations?: ConversationCarrier;
  /** Its repositories, and a worktree of one for each repository run (the service's beforeEnd reports what the run changed). */
  workspaces?: NodeWorkspaces;
}

/** What the controller asks of a run it stops (NODE_CONTROL_OPS cancel and interrupt). */
type StopRequest = { how: 'cancel' } | { how: 'interrupt' } | { how: 'policy'; violation: { rule: string; reason: string } };

/** A run claimed and being submitted: the stop asked of it meanwhile, if any (the strongest). */
interface Starting {
  stop: StopRequest | undefined;
}

const STOP_STRENGTH = { interrupt: 0, cancel: 1, policy: 2 } as const;

/** The stronger of two stops (a policy's failure over a cancel over an interrupt): a stop asked is never weakened by a later one. */
function stronger(a: StopRequest | undefined, b: StopRequest | undefined): StopRequest | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return STOP_STRENGTH[b.how] > STOP_STRENGTH[a.how] ? b : a;
}

export class RunNode {
  private readonly starting = new Map<string, Starting>();
  private readonly stopping = new AbortController();
  private puller: WorkPuller | undefined;
  private serving: Disposable | undefined;
  private leaseWatch: Disposable | undefined;

  private constructor(
    private readonly options: RunNodeOptions,
    readonly lease: NodeLease,
    private readonly claims: RunClaims,
    private readonly logger: Logger,
  ) {}

  /**
   * Registers the node, answers the controller's requests, joins and starts pulling: resolves once
   * it pulls (it waits for a controller to answer the join). CONFLICT when a live node has the
   * name; SHUTTING_DOWN when `signal` aborts the wait.
   */
  static async start(options: RunNodeOptions): Promise<RunNode> {
    const logger = options.logger.child({ node: options.name });
    const backends = await options.service.backends();
    const clis = backends.filter((b) => b.health.ok).map((b) => ({ name: b.name, version: b.health.version ?? '' }));
    const claims = await RunClaims.open(options.nc, 'read');
    const lease = await NodeLease.register({ nc: options.nc, node: { name: options.name, labels: [...(options.labels ?? [])], clis, repos: options.workspaces?.names() ?? [], slots: { total: options.slots, free: options.slots } }, logger });
    const node = new RunNode(options, lease, claims, logger);
    try {
      node.serving = serveNodeControl(
        options.nc,
        options.name,
        {
          ping: () => Promise.resolve({ node: options.name, epoch: lease.record.epoch }),
          cancel: ({ run_id, violation }) => node.stopRun(run_id, violation ? { how: 'policy', violation } : { how: 'cancel' }),
          interrupt: ({ run_id }) => node.stopRun(run_id, { how: 'interrupt' }),
          shelve: async ({ backend, conversation }) => ({ shelved: (await options.conversations?.shelveNow(backend, conversation)) ?? false }),
        },
        logger,
      );
      const pool = await node.join();
      node.puller = await WorkPuller.start({
        nc: options.nc,
        pool,
        node: options.name,
        instance: lease.record.instance,
        slots: options.slots,
        logger,
        run: (item) => node.run(item),
        ...(options.pullExpiresMs !== undefined && { pullExpiresMs: options.pullExpiresMs }),
      });
      node.puller.onSlotsChanged((slots) => lease.setSlots(slots));
      node.puller.onWork((event) => {
        if (event.kind === 'refused' && event.runId !== undefined) node.tellRefused(event.runId, event.reason);
      });
      node.followLease(node.puller);
      logger.info('node pulls its runs', { pool, slots: options.slots, backends: clis.map((c) => c.name) });
      return node;
    } catch (err) {
      await node.close();
      throw err;
    }
  }

  /** No new runs while the lease is not held (lapsed, cut off): the controller may count the node lost then. */
  private followLease(puller: WorkPuller): void {
    const apply = (held: boolean): void => {
      if (held === !puller.paused) return;
      if (held) puller.resume();
      else puller.pause();
      this.logger.info(held ? 'lease held again; pulling runs again' : 'lease not held; pulling no new runs', { lease: this.lease.state.kind });
    };
    this.leaseWatch = this.lease.onStateChange(({ to }) => apply(to.kind === 'held'));
    apply(this.lease.state.kind === 'held');
  }

  /**
   * Tells the controller this node refused run `runId`'s work item, so that it ends the run no
   * node has rather than leave it queued (a work item refused stays in the stream, looking queued).
   * Not answered: the controller's sweep ends it by age in the end.
   */
  private tellRefused(runId: string, reason: string): void {
    controllerControlClient(this.options.nc, this.options.name)
      .call('refused', { node: this.options.name, run_id: runId, reason })
      .catch((err: unknown) => this.logger.warn('could not tell the controller of a refused run', { run_id: runId, error: errorMessage(err) }));
  }

  /** Stops pulling and answering, and leaves the cluster (the service's dispose ends the runs going). */
  async close(): Promise<void> {
    await this.stop();
    await this.leave();
  }

  /** Stops pulling and answering; the lease stays (the runs going end, and their events go out, before leave()). */
  async stop(): Promise<void> {
    this.stopping.abort();
    this.leaseWatch?.dispose();
    await this.puller?.stop();
    this.serving?.dispose();
  }

  /**
   * Gives the lease back: the controller sees the node leave, and settles whatever of its runs it
   * still has unfinished. Last, so that a node stopping on purpose first ends its runs and sends
   * their ends: left before, its runs would be orphaned under it.
   */
  async leave(): Promise<void> {
    await this.lease.leave();
  }

  /** Resolves when no run of this node is going (each one's work item acknowledged). */
  async idle(): Promise<void> {
    await this.puller?.idle();
  }

  /** Asks the controller to lay out this node's queue, again while none answers, until closed or aborted. */
  private async join(): Promise<string> {
    const client = controllerControlClient(this.options.nc, this.options.name);
    const signal = this.options.signal ? AbortSignal.any([this.options.signal, this.stopping.signal]) : this.stopping.signal;
    for (;;) {
      if (signal.aborted) throw new SwitchboardError('SHUTTING_DOWN', `node ${this.options.name} stopped before a controller answered its join`);
      try {
        return (await client.call('join', { node: this.options.name })).pool;
      } catch (err) {
        if (!isSwitchboardError(err) || !['NODE_UNREACHABLE', 'TIMEOUT'].includes(err.code)) throw err;
        this.logger.info('no controller answers yet; trying to join again', { error: err.message });
        await delay(JOIN_RETRY_MS, undefined, { signal }).catch(() => undefined);
      }
    }
  }

  /** One run's life on this node: resolves once it has ended (the work item is acknowledged then). */
  private async run(item: WorkItem): Promise<void> {
    const runId = item.run_id;
    await this.options.claimed?.(runId);
    const parsed = RunWorkSchema.safeParse(item.payload);
    const work = parsed.success ? parsed.data : undefined;
    const starting: Starting = { stop: undefined };
    this.starting.set(runId, starting);
    try {
      if (!work) {
        await this.endUnstarted(runId, undefined, { type: 'fail', reason: 'spawn_failed', message: `node ${this.options.name} could not read what to run` });
        return;
      }
      let marked: MarkedStop | undefined;
      try {
        marked = await this.claims.stopMarked(runId);
      } catch (err) {
        // Not known not to be cancelled: it must not start.
        await this.endUnstarted(runId, work, { type: 'fail', reason: 'spawn_failed', message: `node ${this.options.name} could not check whether the run was cancelled: ${errorMessage(err)}` });
        return;
      }
      // Not started: there is no turn to interrupt, so any stop is a cancel.
      if (marked !== undefined || stopAsked(starting) !== undefined) {
        await this.endUnstarted(runId, work, { type: 'cancel', reason: 'cancelled_by_user', message: 'cancelled by the caller before the node started it' });
        return;
      }
      const submitted = await this.submit(runId, work);
      if (!submitted) return;
      await this.options.taken?.(runId);
    } finally {
      this.starting.delete(runId);
    }
    // Asked while the service took it, or marked before the node could hear it: stopped as asked.
    const marked = await this.markedAfterSubmit(runId);
    const stop = stronger(stopAsked(starting), marked === undefined ? undefined : { how: marked });
    if (stop !== undefined) this.stopLive(runId, stop);
    await this.followToEnd(runId);
    // A run its node's policy refused, or that never reached its program, has no report: what it
    // made for its repository goes, without holding the run's slot (the removal may wait behind
    // other git work on the repository; it holds the branch meanwhile, and never fails).
    void this.options.workspaces?.forget(runId);
  }

  /** Submits the run to the service: false when the service has no record of it (it is then recorded here as never started). */
  private async submit(runId: string, w: RunWork): Promise<boolean> {
    try {
      const cwd = await this.folderOf(runId, w);
      // A resume of a run this node ran is the service's own resume: it closes the conversation's CLI kept open here first.
      const own = w.agent_session !== undefined && w.resumes !== undefined && (await this.recorded(w.resumes));
      if (!own && w.agent_session !== undefined) await this.restoreConversation(runId, w.backend, cwd, w.agent_session);
      const resume = own ? { resume: w.resumes } : { agent_session: w.agent_session };
      await this.options.service.submit({ run_id: runId, backend: w.backend, prompt: w.prompt, cwd, mode: w.mode, schema_version: w.schema_version, limits: w.limits, keep_alive: w.keep_alive ?? false, caller: w.created_by, parent: w.parent, ...resume });
      return true;
    } catch (err) {
      // Refused by the policy (recorded failed), or anything after the run was recorded: the ledger has it and says how it goes.
      if (await this.recorded(runId)) {
        if (!isSwitchboardError(err, 'FORBIDDEN')) this.logger.warn('the run was recorded but its submit failed', { run_id: runId, error: errorMessage(err) });
        return true;
      }
      await this.endUnstarted(runId, w, { type: 'fail', reason: 'spawn_failed', message: `node ${this.options.name} could not start the run: ${errorMessage(err)}` });
      void this.options.workspaces?.forget(runId);
      return false;
    }
  }

  /** Where the run works: its folder as sent, or inside its worktree of a repository here (made, or taken up). */
  private async folderOf(runId: string, w: RunWork): Promise<string> {
    if (w.repo === undefined) return w.cwd;
    const { workspaces } = this.options;
    if (!workspaces) throw new SwitchboardError('INVALID_PARAMS', `node ${this.options.name} has no repositories (switchboard node --repo NAME=PATH)`, { repo: w.repo.name });
    return workspaces.prepare(runId, w.repo, w.cwd);
  }

  /** A conversation another node ran, put where the CLI reads it: without it the CLI says it has no such conversation. */
  private async restoreConversation(runId: string, backend: string, cwd: string, conversation: string): Promise<void> {
    const { conversations } = this.options;
    if (!conversations) return;
    try {
      const how = await conversations.restore(backend, cwd, conversation);
      this.logger.info('conversation for a resume', { run_id: runId, backend, conversation, found: how });
    } catch (err) {
      this.logger.warn('could not put the conversation a resume goes on with in place', { run_id: runId, backend, conversation, error: errorMessage(err) });
    }
  }

  private async recorded(runId: string): Promise<boolean> {
    try {
      return (await this.options.ledger.run(runId)) !== undefined;
    } catch {
      // The ledger cannot say: whatever it took stays there, and nothing is recorded twice.
      return this.options.ledger.isLive(runId);
    }
  }

  /** The mark read again once the service has the run; unreadable, the stop request still comes (the mark is written before it is sent). */
  private async markedAfterSubmit(runId: string): Promise<MarkedStop | undefined> {
    try {
      return await this.claims.stopMarked(runId);
    } catch (err) {
      this.logger.warn('could not read whether a started run was stopped', { run_id: runId, error: errorMessage(err) });
      return undefined;
    }
  }

  /**
   * Stops a run the service has, as asked: cancelled, its turn interrupted (the conversation kept),
   * or failed because the controller's policy denies what this node's allowed. A stop that fails is
   * said, and the run keeps its slot until it ends.
   */
  private stopLive(runId: string, request: StopRequest): void {
    const { service } = this.options;
    const stopping =
      request.how === 'policy'
        ? service.failForPolicy(runId, `the controller's policy denies what this node's allowed (${request.violation.rule}): ${request.violation.reason}`)
        : request.how === 'interrupt'
          ? service.interrupt(runId)
          : service.cancel(runId);
    stopping.catch((err: unknown) => this.logger.warn(`a ${request.how} of a run failed`, { run_id: runId, error: errorMessage(err) }));
  }

  /**
   * Resolves once the run has ended, following it from its last recorded event (not from its
   * start); from its start when its CLI's conversation is carried, to find the id the CLI said. Its
   * conversation's last copy is written after, without holding its slot.
   */
  private async followToEnd(runId: string): Promise<void> {
    const { ledger, conversations } = this.options;
    for (;;) {
      const ended = await new Promise<boolean>((resolve) => {
        const follow = async (): Promise<void> => {
          const record = await ledger.run(runId);
          let from = record?.last_seq ?? 0;
          let onEvent = (_event: RunEvent): void => undefined;
          if (conversations && record && carriesBackend(record.spec.backend)) {
            const { spec } = record;
            const carry = (conversation: string | undefined): void => {
              if (conversation !== undefined) conversations.carry(spec.id, spec.backend, spec.cwd, conversation);
            };
            carry(spec.agent_session);
            onEvent = (event) => carry(agentSessionIn(event));
            from = 0;
          }
          ledger.subscribe(runId, from, onEvent, { onEnd: () => resolve(true), onError: () => resolve(false) });
        };
        follow().catch(() => resolve(false));
      });
      if (ended || !ledger.isLive(runId)) break;
      this.logger.warn('could not follow a live run; trying again', { run_id: runId });
      await delay(FOLLOW_RETRY_MS);
    }
    void conversations?.finish(runId);
  }

  /**
   * Takes a request to stop a run: answered once taken; the run's end comes through its events.
   * Found false when this node has no such run. One the service is taking is stopped as asked once
   * it has it; one that never starts is cancelled, whatever the request (there is no turn to end).
   */
  private async stopRun(runId: string, request: StopRequest): Promise<{ found: boolean }> {
    const starting = this.starting.get(runId);
    if (starting) {
      // Applied once the service has the run (or, if it never starts, a cancel).
      starting.stop = stronger(starting.stop, request);
      return { found: true };
    }
    if (this.options.ledger.isLive(runId)) {
      this.stopLive(runId, request);
      return { found: true };
    }
    // Ended already, or not this node's (yet: the controller's mark stands for it then).
    return { found: await this.recorded(runId) };
  }

  /** Records the end of a run that never started, through the node's ledger, so the outbox sends it as any other. */
  private async endUnstarted(runId: string, work: RunWork | undefined, input: RunInput): Promise<void> {
    const { ledger } = this.options;
    const at = Date.now();
    this.logger.warn('run not started', { run_id: runId, input: input.type, reason: 'message' in input ? input.message : undefined });
    if (await this.recorded(runId)) return;
    ledger.createRun(unstartedSpec(runId, work, this.options.name, at));
    const next = step(initialState(at), input, at);
    ledger.append(runId, stateEvent(next.transition));
    ledger.append(runId, doneEvent(at, next.state.status as EndStatus, next.transition.reason ?? '', next.transition.message));
    // In the node's store before the work item is acknowledged.
    await ledger.flush().catch((err: unknown) => this.logger.error('the end of a run never started is not stored yet', { run_id: runId, error: errorMessage(err) }));
  }
}

/** Read through a function: the stop is set by a request handled while `run` awaits, which narrowing does not see. */
function stopAsked(starting: Starting): StopRequest | undefined {
  return starting.stop;
}

/** The record of a run the node never started: what the controller sent, as far as it could be read. */
function unstartedSpec(runId: string, work: RunWork | undefined, node: string, at: number): RunSpec {
  return {
    id: runId,
    backend: work?.backend ?? 'unknown',
    mode: work === undefined || work.mode === 'auto' ? 'stdio' : work.mode,
    prompt: work?.prompt ?? '',
    cwd: work?.cwd ?? '',
    created_by: work?.created_by ?? 'owner',
    policy: `node ${node}'s own (not started)`,
    limits: { ...work?.limits },
    schema_version: work?.schema_version ?? 'v2',
    parent: null,
    ...(work?.agent_session !== undefined ? { agent_session: work.agent_session } : {}),
    keep_alive: false,
    created_at: at,
  };
}
