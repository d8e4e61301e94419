/**
 * What every ledger store does the same way, whatever keeps the rows (SQLite, PostgreSQL): an
 * event's stored body and how it is read back, a run's record from its rows, where a batch moves
 * each run's status, a list's page and its cursor, and which ended runs retention removes. A store
 * only runs the statements; these decide, so both stores replay and list alike.
 */
import { incompleteUtf8Tail } from '../core/utf8.js';
import type { EndReason, RunSpec, RunStatus } from './run-model.js';
import { isEnded } from './run-model.js';
import type { RunEvent, RunEventType } from './run-events.js';
import { PROMPT_PREVIEW_BYTES, type RetentionRule, type RunPage, type RunRecord } from './ledger-store.js';

export const DEFAULT_LIST_LIMIT = 100;
export const MAX_LIST_LIMIT = 1_000;
/** What a listed run's JSON has besides its spec, preview and message (its status, times, counts), about. */
const LISTED_RUN_OVERHEAD_BYTES = 300;
/** What an event's JSON has besides its body (its run, number, time and type), about. */
export const EVENT_OVERHEAD_BYTES = 100;

/** The schema change both stores make for RunMove: a run's node, beside its status (null: its spec's). */
export const MOVED_TO_NODE = 'ALTER TABLE run_status ADD COLUMN node TEXT;';

/** A run's status row joined with its spec. */
export interface StatusRow {
  spec: string;
  status: string;
  reason: string | null;
  message: string;
  started_at: number | null;
  ended_at: number | null;
  last_seq: number;
  events: number;
  bytes: number;
  /** The node it was last moved to (RunMove), or null: its spec's. */
  node: string | null;
}

/** A run as a list reads it: the spec without its prompt, the prompt's first bytes and its size. */
export interface ListedRow extends StatusRow {
  prompt_head: Buffer | null;
  prompt_bytes: number | null;
}

export interface EventRow {
  run_id: string;
  seq: number;
  ts: number;
  type: string;
  body: string;
}

/** Where a run's status stands after a batch: accumulated in memory, written once per run per batch. */
export interface StatusDelta {
  status?: RunStatus;
  reason?: EndReason | null;
  message?: string;
  started_at?: number;
  ended_at?: number;
  last_seq: number;
  events: number;
  bytes: number;
}

/** An ended run as retention weighs it. */
export interface EndedRun {
  run_id: string;
  ended_at: number;
  events: number;
  bytes: number;
}

/** The body an event is stored with (its type, number and time are columns). */
export function eventBody(ev: RunEvent): string {
  return JSON.stringify({ data: ev.data, compat: ev.compat });
}

/** What a list shows of a spec: the spec without its prompt, the prompt's first bytes, its size (PostgreSQL keeps these with the run). */
export function listedParts(spec: RunSpec): { listedSpec: string; promptHead: Buffer; promptBytes: number } {
  const { prompt, ...rest } = spec;
  const bytes = Buffer.from(prompt, 'utf8');
  return { listedSpec: JSON.stringify(rest), promptHead: bytes.subarray(0, PROMPT_PREVIEW_BYTES), promptBytes: bytes.length };
}

/**
 * How each run's status moves with the events of a batch that were recorded (an event already in
 * the ledger, written again, moves nothing: `events` holds only the new ones).
 */
export function statusDeltas(events: readonly RunEvent[], bodies: ReadonlyMap<RunEvent, string>): Map<string, StatusDelta> {
  const deltas = new Map<string, StatusDelta>();
  for (const ev of events) {
    let d = deltas.get(ev.run_id);
    if (!d) deltas.set(ev.run_id, (d = { last_seq: 0, events: 0, bytes: 0 }));
    d.last_seq = Math.max(d.last_seq, ev.seq);
    d.events++;
    d.bytes += (bodies.get(ev) ?? eventBody(ev)).length;
    if (ev.type === 'state') {
      const to = ev.data.to as RunStatus;
      d.status = to;
      d.reason = (ev.data.reason as EndReason | null | undefined) ?? null;
      d.message = typeof ev.data.message === 'string' ? ev.data.message : '';
      if (to === 'running') d.started_at = ev.ts;
      if (isEnded(to)) d.ended_at = ev.ts;
    }
  }
  return deltas;
}

/** An event read back. */
export function toEvent(row: EventRow): RunEvent {
  const body = JSON.parse(row.body) as Pick<RunEvent, 'data' | 'compat'>;
  // Ledgers written before the deciders had one vocabulary say `governance` for the policy's own.
  const data = row.type === 'decision' && body.data.by === 'governance' ? { ...body.data, by: 'policy' } : body.data;
  return { run_id: row.run_id, seq: row.seq, ts: row.ts, type: row.type as RunEventType, data, compat: body.compat };
}

/** A page of events, stopped once it comes to about `maxBytes` of JSON (at least one event). */
export function eventPage(rows: Iterable<EventRow>, maxBytes: number | undefined): RunEvent[] {
  const page: RunEvent[] = [];
  let bytes = 0;
  for (const row of rows) {
    const size = row.body.length + EVENT_OVERHEAD_BYTES;
    if (maxBytes !== undefined && page.length > 0 && bytes + size > maxBytes) break;
    bytes += size;
    page.push(toEvent(row));
  }
  return page;
}

/**
 * A page of listed runs from rows newest first (`limit + 1` of them read at most): cut at `limit`,
 * or past `maxBytes` of JSON, but never between runs made in the same millisecond (see pageOf).
 */
export function listedPage(rows: Iterable<ListedRow>, limit: number, maxBytes: number): RunPage {
  const taken: RunRecord[] = [];
  let bytes = 0;
  let next: RunRecord | undefined;
  for (const row of rows) {
    const record = toListedRecord(row);
    const size = row.spec.length + (row.prompt_head?.length ?? 0) + row.message.length + LISTED_RUN_OVERHEAD_BYTES;
    // Past the budget, runs of the same millisecond as the whole page so far still come (see pageOf).
    const overBudget = taken.length > 0 && bytes + size > maxBytes && record.spec.created_at !== taken[0]?.spec.created_at;
    if (taken.length >= limit || overBudget) {
      next = record;
      break;
    }
    bytes += size;
    taken.push(record);
  }
  return pageOf(taken, next);
}

/**
 * The page and its cursor. `before` is a creation time, so a page cut between runs made in the same
 * millisecond would skip the rest of them: the page gives those back to the next one. A page that is
 * all one millisecond is not cut by bytes (listedPage); cut by its count (a thousand runs made in
 * one millisecond) the rest of that millisecond is skipped.
 */
function pageOf(taken: RunRecord[], next: RunRecord | undefined): RunPage {
  if (!next) return { runs: taken, next_before: null };
  const at = next.spec.created_at;
  const kept = taken.filter((r) => r.spec.created_at !== at);
  if (kept.length === 0) return { runs: taken, next_before: at };
  return { runs: kept, next_before: at + 1 };
}

/** A listed run: its spec with the prompt's preview, cut back to the last whole character. */
function toListedRecord(row: ListedRow): RunRecord {
  const head = row.prompt_head ?? Buffer.alloc(0);
  const prompt = head.subarray(0, head.length - incompleteUtf8Tail(head)).toString('utf8');
  const bytes = row.prompt_bytes ?? 0;
  return { ...toRecord(row, prompt), prompt_bytes: bytes, prompt_truncated: Buffer.byteLength(prompt) < bytes };
}

/** A run's record from its rows (with `promptPreview` in place of the prompt, for a list). */
export function toRecord(row: StatusRow, promptPreview?: string): RunRecord {
  const spec = JSON.parse(row.spec) as RunSpec;
  if (promptPreview !== undefined) spec.prompt = promptPreview;
  if (row.node !== null) spec.node = row.node;
  const promptBytes = Buffer.byteLength(spec.prompt);
  return {
    spec,
    prompt_bytes: promptBytes,
    prompt_truncated: false,
    status: row.status as RunStatus,
    reason: row.reason as EndReason | null,
    message: row.message,
    started_at: row.started_at,
    ended_at: row.ended_at,
    last_seq: row.last_seq,
    events: row.events,
    bytes: row.bytes,
  };
}

/**
 * The ended runs retention removes: those that ended before `now - maxAgeMs`, then the oldest
 * ended until the events (`totalBytes` of them, every run's) fit in `maxBytes`. `ended` is oldest
 * first; a run in flight is never in it, so never removed.
 */
export function doomedRuns(ended: readonly EndedRun[], totalBytes: number, rule: RetentionRule, now: number): Set<string> {
  const doomed = new Set<string>();
  if (rule.maxAgeMs !== undefined) for (const r of ended) if (r.ended_at < now - rule.maxAgeMs) doomed.add(r.run_id);
  if (rule.maxBytes !== undefined) {
    let total = totalBytes;
    for (const r of ended) if (doomed.has(r.run_id)) total -= r.bytes;
    for (const r of ended) {
      if (total <= rule.maxBytes) break;
      if (doomed.has(r.run_id)) continue;
      doomed.add(r.run_id);
      total -= r.bytes;
    }
  }
  return doomed;
}
