/**
 * Dispatch, the controller side: a run to start is one work item on `sb.work.<pool>`, which one
 * node of the pool pulls (work-puller.ts). The pool's consumer delivers each item once
 * (max_deliver 1) and never again behind the user's back; a run whose node vanished is the
 * controller's to abandon, and abandoning claims the run (run-claims.ts), so a node that wakes
 * late can never start it.
 */
import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { errorMessage } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import { isNotFound } from './nats-errors.js';
import { RunClaims, type ClaimOutcome, type MarkedStop, type RunClaim } from './run-claims.js';
import { checkName, poolConsumer, WORK_STREAM, workSubject } from './topology.js';

/** A work item as it travels: the run, its pool, and what the node needs to start it. */
export const WorkItemSchema = z.object({
  run_id: z.string().min(1),
  pool: z.string().min(1),
  /** What to run, as the controller and the node agree on it (the cluster does not look inside). */
  payload: z.unknown(),
  /** When the controller dispatched it, ms since the epoch. */
  dispatched_at: z.number(),
});

export type WorkItem = z.infer<typeof WorkItemSchema>;

/** Where a dispatched item sits in SB_WORK, and whether it was there already (a retried dispatch). */
/** How far a pool's consumer has handed out the work stream (WorkDispatcher.consumerPosition). */
export interface ConsumerPosition {
  /** The stream sequence of the last item the consumer handed to a pull (0: none yet). */
  deliveredSeq: number;
  ackWaitMs: number;
}

export interface Dispatched {
  readonly streamSeq: number;
  readonly duplicate: boolean;
}

export class WorkDispatcher {
  /** The controller process, so an abandon whose answer was lost is known for its own. */
  private readonly instance = randomUUID();

  private constructor(
    private readonly js: JetStreamClient,
    private readonly jsm: JetStreamManager,
    private readonly claims: RunClaims,
    private readonly logger: Logger,
  ) {}

  static async open(nc: NatsConnection, logger: Logger): Promise<WorkDispatcher> {
    return new WorkDispatcher(jetstream(nc), await jetstreamManager(nc), await RunClaims.open(nc, 'fence'), logger.child({ component: 'work-dispatcher' }));
  }

  /**
   * Puts a run on its pool's queue. The run id is the message id, so dispatching the same run
   * again within the stream's duplicate window stores it once.
   */
  async dispatch(item: { run_id: string; pool: string; payload: unknown }): Promise<Dispatched> {
    checkName('run id', item.run_id);
    const message: WorkItem = { run_id: item.run_id, pool: item.pool, payload: item.payload, dispatched_at: Date.now() };
    const ack = await this.js.publish(workSubject(item.pool), JSON.stringify(message), { msgID: item.run_id });
    return { streamSeq: ack.seq, duplicate: ack.duplicate };
  }

  /**
   * Claims run `runId` for the controller, so no node can start it from now on. Won, or lost to
   * the node that holds it (which may be running it). With the item's `streamSeq`, an item won
   * back is also removed from the queue, where a node that died holding it left it.
   */
  async abandon(pool: string, runId: string, streamSeq?: number): Promise<ClaimOutcome> {
    const claim: RunClaim = { holder: 'controller', role: 'controller', instance: this.instance, at: Date.now() };
    const outcome = await this.claims.claim(pool, runId, claim);
    if (outcome.won && streamSeq !== undefined) {
      try {
        await this.jsm.streams.deleteMessage(WORK_STREAM, streamSeq);
      } catch (err) {
        // Already gone: acknowledged, or aged out.
        this.logger.debug('the abandoned work item was not in the queue', { run_id: runId, stream_seq: streamSeq, error: errorMessage(err) });
      }
    }
    return outcome;
  }

  /**
   * True while the item at `streamSeq` is still in SB_WORK (waiting, or in a node's hands); false
   * once it is gone: acknowledged, refused by a node (terminated), removed, or aged out.
   */
  async isQueued(streamSeq: number): Promise<boolean> {
    try {
      return (await this.jsm.streams.getMessage(WORK_STREAM, { seq: streamSeq })) !== null;
    } catch (err) {
      if (isNotFound(err)) return false;
      throw err;
    }
  }

  /**
   * Where pool `pool`'s consumer has read the work stream to (`deliveredSeq`), and its ack wait,
   * past which an item delivered and never heartbeated is counted undelivered (with max_deliver 1,
   * never handed again). The consumer reads in stream order, so an item of its own pool at or below
   * that position has been handed to a pull. The position also moves past other pools' items (a
   * pull that finds nothing moves it to the stream's end), so it says nothing of those.
   */
  async consumerPosition(pool: string): Promise<ConsumerPosition> {
    const info = await this.jsm.consumers.info(WORK_STREAM, poolConsumer(pool));
    return { deliveredSeq: info.delivered.stream_seq, ackWaitMs: (info.config.ack_wait ?? 30e9) / 1e6 };
  }

  /** Marks run `runId` to be stopped, `how`, for whichever node holds or wins its claim (run-claims.ts). */
  markStopped(runId: string, how: MarkedStop): Promise<void> {
    return this.claims.markStopped(runId, how);
  }

  /** Who holds run `runId`'s claim (sent to `pool`'s queue): the node that started it, the controller, or nobody yet. */
  claimOf(pool: string, runId: string): Promise<RunClaim | undefined> {
    return this.claims.holderOf(pool, runId);
  }
}
