/**
 * Seed 004's event stream (A2A-Lite), derived from normalized entries: `token`, `tool_call`,
 * `tool_result`, `patch`, `done` and `error`. Two schema versions: v2 carries structured `data`;
 * v1 is the flat form older clients read. Both carry the compat fields `text`, `status` and
 * `is_error` (v1 at the top level, v2 under `compat`), so a client that knows only those works
 * with either. The version is negotiated: the highest one both the client and the backend speak.
 */
import { SwitchboardError } from '../core/errors.js';
import type { NormalizedEntry } from './entry.js';
import { SCHEMA_VERSIONS, type CompatFields, type RunOutcome, type SchemaVersion, type StreamEvent, type StreamEventType } from '../contract/stream-events.js';

// The events' types are the shared vocabulary (src/contract/stream-events.ts); the encoder is here.
export { SCHEMA_VERSIONS, type SchemaVersion, type StreamEventType, type RunOutcome, type CompatFields, type StreamEventV1, type StreamEventV2, type StreamEvent } from '../contract/stream-events.js';

/**
 * The version to speak: the highest the client asked for that the backend has. No list from the
 * client means the backend's highest. Nothing in common is the client's error, and says so.
 */
export function negotiateSchema(requested: readonly string[] | undefined, supported: readonly SchemaVersion[] = SCHEMA_VERSIONS): SchemaVersion {
  const ranked = [...SCHEMA_VERSIONS].reverse();
  const pick = ranked.find((v) => supported.includes(v) && (requested === undefined || requested.length === 0 || requested.includes(v)));
  if (!pick) {
    throw new SwitchboardError('INVALID_PARAMS', `no common schema_version: asked for ${(requested ?? []).join(', ') || 'none'}, this backend speaks ${supported.join(', ')}`, { requested, supported });
  }
  return pick;
}

/** Turns a run's entries into events of one schema version, numbering them. */
export class StreamEventEncoder {
  private seq = 0;

  constructor(
    readonly runId: string,
    readonly version: SchemaVersion,
  ) {}

  /** The events one entry yields: none for what a client of the stream does not need (the user's own prompt, system notes, unreadable lines). */
  fromEntry(entry: NormalizedEntry): StreamEvent[] {
    const m = entry.metadata ?? {};
    const failed = m.status === 'failed';
    switch (entry.type) {
      case 'assistant_message':
        return [this.event('token', entry.timestamp, { text: entry.content }, { text: entry.content, status: 'streaming', is_error: false })];
      case 'command_run':
      case 'tool_use':
      case 'file_read':
        return [this.toolCall(entry)];
      case 'file_edit':
        // A call to an editing tool is a tool_call; a change reported done (Codex's file_change) is a patch.
        if (m.status === 'success' || m.status === 'failed') {
          return [this.event('patch', entry.timestamp, { id: m.toolCallId ?? entry.id, path: m.filePath ?? null, summary: entry.content, applied: !failed }, { text: entry.content, status: failed ? 'failed' : 'applied', is_error: failed })];
        }
        return [this.toolCall(entry)];
      case 'tool_result':
        return [
          this.event(
            'tool_result',
            entry.timestamp,
            { id: m.toolCallId ?? null, name: m.toolName ?? null, output: m.toolOutput ?? entry.content, exit_code: m.exitCode ?? null, is_error: failed },
            { text: m.toolOutput ?? entry.content, status: failed ? 'failed' : 'success', is_error: failed },
          ),
        ];
      case 'error':
        return [this.event('error', entry.timestamp, { message: entry.content }, { text: entry.content, status: 'failed', is_error: true })];
      case 'user_message':
      case 'system_message':
      case 'raw':
        return [];
    }
  }

  /** The run's last event. */
  done(outcome: RunOutcome, ts: number = Date.now(), message = ''): StreamEvent {
    return this.event('done', ts, { outcome, message }, { text: message, status: outcome, is_error: outcome === 'failed' });
  }

  private toolCall(entry: NormalizedEntry): StreamEvent {
    const m = entry.metadata ?? {};
    return this.event('tool_call', entry.timestamp, { id: m.toolCallId ?? entry.id, name: m.toolName ?? entry.type, kind: entry.type, input: m.toolInput ?? {}, path: m.filePath ?? null }, { text: entry.content, status: 'running', is_error: false });
  }

  private event(type: StreamEventType, ts: number, data: Record<string, unknown>, compat: CompatFields): StreamEvent {
    const base = { type, run_id: this.runId, seq: ++this.seq, ts };
    return this.version === 'v2' ? { schema_version: 'v2', ...base, data, compat } : { schema_version: 'v1', ...base, ...compat };
  }
}
