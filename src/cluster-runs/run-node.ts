/**
 * A cluster node that runs a controller's runs (issue 26): it holds a lease saying what it is
 * (name, labels, the backends it has and their versions, free slots), joins (the controller lays
 * out its own work queue), pulls its runs one per free slot, wins each run's claim (the puller's
 * job) and runs it on its own RunService under the controller's id. The run's events go out through
 * the service's ledger, whose store publishes them (publishing-store.ts); a run the service would
 * not even record (a folder missing here, a backend it lacks) is ended by events published here.
 * A cancel comes by request and reply from the controller.
 */
import type { NatsConnection } from '@nats-io/transport-node';
import type { Disposable } from '../core/disposable.js';
import { errorMessage, isSwitchboardError, SwitchboardError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import { controllerControlClient, NodeLease, serveNodeControl, WorkPuller, type WorkItem } from '../cluster/index.js';
import { doneEvent, stateEvent, type RunEvent } from '../ledger/run-events.js';
import { initialState, step } from '../ledger/run-model.js';
import type { RunService } from '../runs/index.js';
import type { EventOutlet } from './publishing-store.js';
import { eventMessage, RunWorkSchema } from './run-wire.js';

/** Between tries to join while no controller answers. */
const JOIN_RETRY_MS = 1_000;

export interface RunNodeOptions {
  nc: NatsConnection;
  /** The node's run service; its ledger's store publishes (PublishingLedgerStore over `outlet`). */
  service: RunService;
  /** Where the events of a run the service did not record are published. */
  outlet: EventOutlet;
  name: string;
  labels?: readonly string[];
  /** Runs at once on this node. */
  slots: number;
  logger: Logger;
  pullExpiresMs?: number;
}

export class RunNode {
  /** Runs claimed and being submitted, with whether a cancel came meanwhile. */
  private readonly starting = new Map<string, { cancelled: boolean }>();
  private closed = false;
  private puller: WorkPuller | undefined;
  private serving: Disposable | undefined;

  private constructor(
    private readonly options: RunNodeOptions,
    readonly lease: NodeLease,
    private readonly logger: Logger,
  ) {}

  /**
   * Registers the node, answers the controller's requests, joins and starts pulling: resolves once
   * it pulls (it waits for a controller to answer the join). CONFLICT when a live node has the name.
   */
  static async start(options: RunNodeOptions): Promise<RunNode> {
    const logger = options.logger.child({ node: options.name });
    const backends = await options.service.backends();
    const clis = backends.filter((b) => b.health.ok).map((b) => ({ name: b.name, version: b.health.version ?? '' }));
    const lease = await NodeLease.register({ nc: options.nc, node: { name: options.name, labels: [...(options.labels ?? [])], clis, repos: [], slots: { total: options.slots, free: options.slots } }, logger });
    const node = new RunNode(options, lease, logger);
    try {
      node.serving = serveNodeControl(options.nc, options.name, { ping: () => Promise.resolve({ node: options.name, epoch: lease.record.epoch }), cancel: ({ run_id }) => node.cancel(run_id) }, logger);
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
      logger.info('node pulls its runs', { pool, slots: options.slots, backends: clis.map((c) => c.name) });
      return node;
    } catch (err) {
      await node.close();
      throw err;
    }
  }

  /** Stops pulling, lets the runs going end (the service's dispose cancels them), and leaves the cluster. */
  async close(): Promise<void> {
    this.closed = true;
    await this.puller?.stop();
    this.serving?.dispose();
    await this.lease.leave();
  }

  /** Resolves when no run of this node is going. */
  async idle(): Promise<void> {
    await this.puller?.idle();
  }

  /** Asks the controller to lay out this node's queue, again while none answers. */
  private async join(): Promise<string> {
    const client = controllerControlClient(this.options.nc);
    for (;;) {
      try {
        return (await client.call('join', { node: this.options.name })).pool;
      } catch (err) {
        if (this.closed || !isSwitchboardError(err) || !['NODE_UNREACHABLE', 'TIMEOUT'].includes(err.code)) throw err;
        this.logger.info('no controller answers yet; trying to join again', { error: err.message });
        await new Promise((resolve) => setTimeout(resolve, JOIN_RETRY_MS));
      }
    }
  }

  /** One run's life on this node: resolves once it has ended (the work item is acknowledged then). */
  private async run(item: WorkItem): Promise<void> {
    const runId = item.run_id;
    const work = RunWorkSchema.safeParse(item.payload);
    if (!work.success) {
      await this.endUnrecorded(runId, 'the work item does not say what to run');
      return;
    }
    const asked = { cancelled: false };
    this.starting.set(runId, asked);
    const { service } = this.options;
    try {
      const w = work.data;
      await service.submit({ run_id: runId, backend: w.backend, prompt: w.prompt, cwd: w.cwd, mode: w.mode, schema_version: w.schema_version, limits: w.limits, keep_alive: false, caller: w.created_by });
    } catch (err) {
      // Refused by the policy: recorded (failed) and published by the ledger. Anything else was not recorded.
      if (!(isSwitchboardError(err, 'FORBIDDEN') && err.details?.run_id === runId)) await this.endUnrecorded(runId, `node ${this.options.name} could not start the run: ${errorMessage(err)}`);
      return;
    } finally {
      this.starting.delete(runId);
    }
    if (asked.cancelled) await service.cancel(runId);
    await new Promise<void>((resolve, reject) => {
      void service.subscribe(runId, 0, () => undefined, { onEnd: resolve, onError: reject }).catch(reject);
    });
  }

  /** Ends run `runId`, or one being started (it is cancelled once it is): found false when neither. */
  private async cancel(runId: string): Promise<{ found: boolean }> {
    const starting = this.starting.get(runId);
    if (starting) {
      starting.cancelled = true;
      return { found: true };
    }
    try {
      await this.options.service.cancel(runId);
      return { found: true };
    } catch (err) {
      if (isSwitchboardError(err, 'RUN_NOT_FOUND')) return { found: false };
      throw err;
    }
  }

  /** A run the service did not record: its end published here, as its first events (queued, then failed). */
  private async endUnrecorded(runId: string, message: string): Promise<void> {
    this.logger.warn('run not started', { run_id: runId, reason: message });
    const at = Date.now();
    const next = step(initialState(at), { type: 'fail', reason: 'spawn_failed', message }, at);
    const events: RunEvent[] = [stateEvent(next.transition), doneEvent(at, 'failed', 'spawn_failed', message)].map((e, i) => ({ ...e, run_id: runId, seq: i + 1 }));
    try {
      for (const event of events) await this.options.outlet.publish(eventMessage(event));
    } catch (err) {
      throw new SwitchboardError('CONNECTION_FAILED', `the end of run ${runId} could not be published: ${errorMessage(err)}`, { run_id: runId }, { cause: err });
    }
  }
}
