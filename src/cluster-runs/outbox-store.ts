/**
 * A node's ledger store: its own store (`node-ledger.db` in its home), the ledger of record for
 * the node's runs, with every batch it wrote told to the outbox (event-outbox.ts), which sends the
 * events to the stream behind. Nothing here waits on the network: a write is done once the local
 * store has it, and every read is the local store's.
 */
import type { Writable } from 'node:stream';
import type { LedgerBatch, LedgerStore, PruneResult, RetentionRule, RunPage, RunQuery, RunRecord } from '../ledger/ledger-store.js';
import type { RunEvent } from '../ledger/run-events.js';
import type { AskRows, TeamRows } from '../ledger/index.js';
import type { EventOutbox } from './event-outbox.js';

export class OutboxLedgerStore implements LedgerStore {
  constructor(
    private readonly local: LedgerStore,
    private readonly outbox: EventOutbox,
  ) {}

  get asks(): AskRows | undefined {
    return this.local.asks;
  }

  get teams(): TeamRows | undefined {
    return this.local.teams;
  }

  /** Written here; the outbox is told and sends it later. */
  async write(batch: LedgerBatch): Promise<void> {
    await this.local.write(batch);
    this.outbox.written(batch);
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
