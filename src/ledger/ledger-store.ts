/**
 * The run ledger's storage, behind one small interface: SQLite on one machine (`sqlite-store.ts`),
 * PostgreSQL for a ledger beyond it (`postgres-store.ts`). Asynchronous, so a store over the network fits;
 * the ledger in front of it (`run-ledger.ts`) numbers events and batches writes, so a store only
 * ever sees whole batches in order.
 */
import type { Writable } from 'node:stream';
import type { EndReason, RunSpec, RunStatus } from './run-model.js';
import type { RunEvent } from './run-events.js';
import type { AskRows } from './ask-rows.js';
import type { TeamRows } from './team-rows.js';

/** A run as the ledger knows it: what it is, and where its events have got to. */
export interface RunRecord {
  /** In a list, `spec.prompt` is only its first PROMPT_PREVIEW_BYTES (`prompt_truncated`). */
  spec: RunSpec;
  /** The whole prompt's size in UTF-8 bytes. */
  prompt_bytes: number;
  /** True when `spec.prompt` is a preview, cut short of the whole prompt. */
  prompt_truncated: boolean;
  status: RunStatus;
  reason: EndReason | null;
  message: string;
  started_at: number | null;
  ended_at: number | null;
  /** The highest sequence number recorded (0: none yet). */
  last_seq: number;
  /** Events recorded and their size (JSON bytes), for retention by size. */
  events: number;
  bytes: number;
}

/**
 * A run sent to another node than the one it was recorded for, before any node had it: a run that
 * waited on the controller for a slot goes to the node that had one first. The spec stays as it
 * was written (runs are append-only); the record reads `spec.node` as the last move says.
 */
export interface RunMove {
  run_id: string;
  node: string;
}

/** One write: new runs first, then their moves, then events (any runs, each run's in sequence order). */
export interface LedgerBatch {
  runs: readonly RunSpec[];
  /** In the order they were made: the last one of a run stands. */
  moves?: readonly RunMove[];
  events: readonly RunEvent[];
}

export interface RunQuery {
  status?: RunStatus | undefined;
  backend?: string | undefined;
  /** Newest first; at most this many (default 100). */
  limit?: number | undefined;
  /** Only runs created before this time (ms since the epoch): the next page. */
  before?: number | undefined;
  /** Stop the page once its runs come to about this many bytes of JSON (at least one run is given). */
  maxBytes?: number | undefined;
}

/** A page of runs, newest first, and where the next one starts (`before`), or null at the end. */
export interface RunPage {
  runs: RunRecord[];
  next_before: number | null;
}

/** A page of a run's events, and the `after` of the next page, or null when none is recorded yet past it. */
export interface EventPage {
  events: RunEvent[];
  next_after: number | null;
}

/** How much of a prompt a list shows. */
export const PROMPT_PREVIEW_BYTES = 1024;

/**
 * What retention keeps: runs that ended longer ago than `maxAgeMs` go, then the oldest ended runs
 * until the events fit in `maxBytes`. Runs in flight are never removed. Asks between agents go by
 * age only (`maxBytes` counts run events), and never before they have ended.
 */
export interface RetentionRule {
  maxAgeMs?: number | undefined;
  maxBytes?: number | undefined;
}

export interface PruneResult {
  runs: number;
  events: number;
  bytes: number;
  /** Asks between agents removed. */
  asks: number;
  /** Team runs removed (with their records). */
  teamRuns: number;
}

export interface LedgerStore {
  /**
   * The asks between agents, when the store keeps them (both stores do, beside the runs). Its calls
   * take effect in the order they are made, so the ask engine records each change without waiting.
   */
  readonly asks?: AskRows;
  /** Team runs and their records, when the store keeps them (both stores do); in call order, as the asks are. */
  readonly teams?: TeamRows;
  /** Writes a batch atomically: all of it or none; a batch written again records nothing twice. */
  write(batch: LedgerBatch): Promise<void>;
  /** A run's events with seq > `afterSeq`, in order, at most `limit` (and, given `maxBytes`, about that many bytes of JSON, at least one). */
  events(runId: string, afterSeq: number, limit: number, maxBytes?: number): Promise<RunEvent[]>;
  run(runId: string): Promise<RunRecord | undefined>;
  /** Runs newest first, each prompt as a preview (read in the query, never whole). */
  runs(query: RunQuery): Promise<RunPage>;
  /** Runs not yet ended (queued, running, streaming): in flight when a service stopped. */
  unfinished(): Promise<RunRecord[]>;
  prune(rule: RetentionRule, now: number): Promise<PruneResult>;
  /** Every run (or those named) as JSON lines: a `run` line, then its `event` lines. Resolves with the lines written. */
  exportJsonl(out: Writable, runIds?: readonly string[]): Promise<number>;
  /** The store's own consistency check ('ok' when sound). */
  check(): Promise<string>;
  close(): Promise<void>;
}
