/**
 * Seed 004's event stream (A2A-Lite) as every surface names it: `token`, `tool_call`,
 * `tool_result`, `patch`, `done` and `error`, in schema v2 (structured `data`) or v1 (flat), both
 * with the compat fields. The encoder is src/output/stream-events.ts.
 */

export const SCHEMA_VERSIONS = ['v1', 'v2'] as const;
export type SchemaVersion = (typeof SCHEMA_VERSIONS)[number];

export const STREAM_EVENT_TYPES = ['token', 'tool_call', 'tool_result', 'patch', 'done', 'error'] as const;
export type StreamEventType = (typeof STREAM_EVENT_TYPES)[number];

/** How a run or a turn ended. */
export const RUN_OUTCOMES = ['completed', 'failed', 'cancelled'] as const;
export type RunOutcome = (typeof RUN_OUTCOMES)[number];

export interface CompatFields {
  text: string;
  status: string;
  is_error: boolean;
}

interface EventBase {
  type: StreamEventType;
  run_id: string;
  seq: number;
  /** Milliseconds since the epoch. */
  ts: number;
}

export interface StreamEventV2 extends EventBase {
  schema_version: 'v2';
  data: Record<string, unknown>;
  compat: CompatFields;
}

export interface StreamEventV1 extends EventBase, CompatFields {
  schema_version: 'v1';
}

export type StreamEvent = StreamEventV1 | StreamEventV2;
