/**
 * A run's events as the ledger keeps them and every surface streams them: seed 004's `token`,
 * `tool_call`, `tool_result`, `patch`, `done` and `error`, plus what the bridge itself records
 * (`state` changes, `input`s, policy `decision`s, `notice`s, and raw terminal `output` where the
 * user turned it on). One stored form (structured `data` and the `compat` fields), numbered per run
 * by the ledger; a reader gets it in schema v1 or v2 by `renderEvent`, so the live stream and a
 * replay from the ledger are the same function of the same records.
 */
import type { NormalizedEntry } from '../output/entry.js';
import { StreamEventEncoder, type CompatFields, type SchemaVersion } from '../output/stream-events.js';
import type { EndStatus, RunTransition } from './run-model.js';
import { RUN_EVENT_TYPES, type RecordedDecider, type RunEventType } from '../contract/index.js';

export { RUN_EVENT_TYPES, type RunEventType };

/** Events that are the agent's output: they count against a run's output limits. */
export const OUTPUT_EVENT_TYPES: ReadonlySet<RunEventType> = new Set(['token', 'tool_call', 'tool_result', 'patch', 'error', 'output']);

/** An event before the ledger numbered it. */
export interface NewRunEvent {
  type: RunEventType;
  /** Milliseconds since the epoch. */
  ts: number;
  data: Record<string, unknown>;
  compat: CompatFields;
}

/** An event as recorded: its run and its place in the run (1, 2, 3, … with no gap). */
export interface RunEvent extends NewRunEvent {
  run_id: string;
  seq: number;
}

/** An event on the wire, in the schema version the reader speaks (v1 flat, v2 with `data` and `compat`). */
export type WireRunEvent =
  | { schema_version: 'v2'; type: RunEventType; run_id: string; seq: number; ts: number; data: Record<string, unknown>; compat: CompatFields }
  | ({ schema_version: 'v1'; type: RunEventType; run_id: string; seq: number; ts: number } & CompatFields);

/** The event in schema `version`. */
export function renderEvent(event: RunEvent, version: SchemaVersion): WireRunEvent {
  const { type, run_id, seq, ts } = event;
  if (version === 'v2') return { schema_version: 'v2', type, run_id, seq, ts, data: event.data, compat: event.compat };
  return { schema_version: 'v1', type, run_id, seq, ts, text: event.compat.text, status: event.compat.status, is_error: event.compat.is_error };
}

/** A state change as an event. */
export function stateEvent(t: RunTransition): NewRunEvent {
  const failed = t.to === 'failed';
  return { type: 'state', ts: t.at, data: { from: t.from, to: t.to, reason: t.reason, message: t.message }, compat: { text: t.message, status: t.to, is_error: failed } };
}

/** What was given to the agent: the prompt, or an answer typed in. */
export function inputEvent(ts: number, kind: 'prompt' | 'answer', text: string): NewRunEvent {
  return { type: 'input', ts, data: { kind, text }, compat: { text, status: kind, is_error: false } };
}

/** Who or what decided something about the run, and by which rule. */
export interface DecisionRecord {
  /** What was judged: the run's admission (cwd, concurrency), or a tool call. */
  subject: Record<string, unknown>;
  decision: 'allow' | 'deny' | 'ask' | 'queue';
  /** The rule that made it, e.g. `sandbox.roots`, `approvals.rules[2]`, `blocklist`, `limits.concurrency`. */
  rule: string;
  reason: string;
  /** Who decided, in the broker's words: the policy (governance), a caller's callback, a person (answer_approval, the dashboard), or the CLI's own sandbox. */
  by: RecordedDecider;
}

export function decisionEvent(ts: number, d: DecisionRecord): NewRunEvent {
  return { type: 'decision', ts, data: { ...d }, compat: { text: d.reason, status: d.decision, is_error: d.decision === 'deny' } };
}

export function noticeEvent(ts: number, text: string): NewRunEvent {
  return { type: 'notice', ts, data: { text }, compat: { text, status: 'notice', is_error: false } };
}

/**
 * The agent CLI's own id of the conversation a run is in, as soon as the CLI says it: what a later
 * run resumes it by (RunSpec.agent_session), on this machine or another (a cluster node's run whose
 * node was lost). A notice, so every reader that knows notices shows it.
 */
export function agentSessionEvent(ts: number, backend: string, id: string): NewRunEvent {
  const text = `${backend}'s own conversation: ${id}`;
  return { type: 'notice', ts, data: { text, agent_session: id }, compat: { text, status: 'notice', is_error: false } };
}

/** The agent CLI's conversation id a run's event recorded (agentSessionEvent), or undefined. */
export function agentSessionIn(event: Pick<RunEvent, 'type' | 'data'>): string | undefined {
  const id = event.type === 'notice' ? event.data.agent_session : undefined;
  return typeof id === 'string' && id !== '' ? id : undefined;
}

/** Raw terminal output (recorded only where the user turned it on: seed 003's privacy rule). */
export function outputEvent(ts: number, text: string): NewRunEvent {
  return { type: 'output', ts, data: { text }, compat: { text, status: 'output', is_error: false } };
}

export function errorEvent(ts: number, message: string, code?: string): NewRunEvent {
  return { type: 'error', ts, data: { message, ...(code !== undefined ? { code } : {}) }, compat: { text: message, status: 'failed', is_error: true } };
}

export function patchEvent(ts: number, p: { id: string; path: string | null; summary: string; applied: boolean }): NewRunEvent {
  return { type: 'patch', ts, data: { ...p }, compat: { text: p.summary, status: p.applied ? 'applied' : 'failed', is_error: !p.applied } };
}

export function doneEvent(ts: number, outcome: EndStatus, reason: string, message: string): NewRunEvent {
  return { type: 'done', ts, data: { outcome, reason, message }, compat: { text: message, status: outcome, is_error: outcome === 'failed' } };
}

/**
 * Turns one run's normalized entries into events, the mapping of src/output/stream-events.ts,
 * plus one thing the bridge adds: a file-editing tool call whose result came back a success is
 * also a `patch` (Claude, Gemini and OpenCode report an edit as a tool call and its result; Codex
 * reports a finished change, which the mapping already makes a patch).
 */
export class EntryEventMapper {
  private readonly encoder: StreamEventEncoder;
  /** File-editing calls waiting for their result, by call id: the path they edit. */
  private readonly edits = new Map<string, string | null>();

  constructor(runId: string) {
    this.encoder = new StreamEventEncoder(runId, 'v2');
  }

  map(entry: NormalizedEntry): NewRunEvent[] {
    const out: NewRunEvent[] = [];
    for (const ev of this.encoder.fromEntry(entry)) {
      if (ev.schema_version !== 'v2') continue;
      out.push({ type: ev.type, ts: ev.ts, data: ev.data, compat: ev.compat });
      const id = typeof ev.data.id === 'string' ? ev.data.id : null;
      if (ev.type === 'tool_call' && entry.type === 'file_edit' && id !== null) this.edits.set(id, entry.metadata?.filePath ?? null);
      if (ev.type === 'tool_result' && id !== null && this.edits.has(id)) {
        const path = this.edits.get(id) ?? null;
        this.edits.delete(id);
        if (ev.data.is_error !== true) out.push(patchEvent(ev.ts, { id, path, summary: path === null ? 'file edited' : `edited ${path}`, applied: true }));
      }
    }
    return out;
  }
}
