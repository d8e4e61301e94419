/**
 * A node's ledger store: every batch is written to a store on the node first (its runs' views,
 * follow-ups and replays there), then each of its events is published on the run's subject for the
 * controller's ledger, one after another in order, each with its message id `<run>:<seq>`. The
 * RunLedger in front writes a batch the store refused again, ahead of what came since; written
 * again, the local store records nothing twice and JetStream stores a message id once within its
 * duplicate window, so a publish that failed half-way is finished, never doubled.
 */
import type { Writable } from 'node:stream';
import type { LedgerBatch, LedgerStore, PruneResult, RetentionRule, RunPage, RunQuery, RunRecord } from '../ledger/ledger-store.js';
import type { RunEvent } from '../ledger/run-events.js';
import type { AskRows, TeamRows } from '../ledger/index.js';
import type { PublishedEvent, RunEventMessage } from '../cluster/index.js';
import { eventMessage } from './run-wire.js';

/** What publishes an event (the cluster's EventPublisher). */
export interface EventOutlet {
  publish(event: RunEventMessage): Promise<PublishedEvent>;
}

export class PublishingLedgerStore implements LedgerStore {
  constructor(
    private readonly local: LedgerStore,
    private readonly outlet: EventOutlet,
  ) {}

  get asks(): AskRows | undefined {
    return this.local.asks;
  }

  get teams(): TeamRows | undefined {
    return this.local.teams;
  }

  /** Written here, then published in order; a publish that fails fails the write (and the ledger writes the batch again). */
  async write(batch: LedgerBatch): Promise<void> {
    await this.local.write(batch);
    for (const event of batch.events) await this.outlet.publish(eventMessage(event));
  }

  events(runId: string, afterSeq: number, limit: number, maxBytes?: number): Promise<RunEvent[]> {
    return this.local.events(runId, afterSeq, limit, maxBytes);
  }

  run(runId: string): Promise<RunRecord | undefined> {
    return this.local.run(runId);
  }

  runs(query: RunQuery): Promise<RunPage> {
    return this.local.runs(query);
  }

  unfinished(): Promise<RunRecord[]> {
    return this.local.unfinished();
  }

  prune(rule: RetentionRule, now: number): Promise<PruneResult> {
    return this.local.prune(rule, now);
  }

  exportJsonl(out: Writable, runIds?: readonly string[]): Promise<number> {
    return this.local.exportJsonl(out, runIds);
  }

  check(): Promise<string> {
    return this.local.check();
  }

  close(): Promise<void> {
    return this.local.close();
  }
}
