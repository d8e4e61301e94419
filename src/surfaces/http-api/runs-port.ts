/**
 * What the HTTP API needs of the run service, as an interface: the API layer's Services object
 * provides it (phase 2); the tests give it the RunService itself. The types come from the runs
 * layer for now and move to `contract/` with the re-layout.
 */
import type { Disposable } from '../../core/disposable.js';
import type { SchemaVersion } from '../../output/stream-events.js';
import type { BackendInfo, RunView, SubmitRequest } from '../../runs/bridge/run-service.js';
import type { RunEvent, WireRunEvent } from '../../runs/bridge/run-events.js';
import type { RunQuery } from '../../runs/ledger/ledger-store.js';

export type { BackendInfo, RunView, SubmitRequest, RunEvent, WireRunEvent, RunQuery, SchemaVersion };

export interface RunsPort {
  submit(request: SubmitRequest): Promise<RunView>;
  get(runId: string): Promise<RunView>;
  list(query: RunQuery): Promise<RunView[]>;
  cancel(runId: string): Promise<RunView>;
  events(runId: string, afterSeq: number, limit: number): Promise<RunEvent[]>;
  subscribe(runId: string, afterSeq: number, listener: (event: RunEvent) => void, options: { onEnd?: () => void; onError?: (err: Error) => void }): Promise<Disposable>;
  backends(): Promise<BackendInfo[]>;
  negotiate(proposed: string | undefined): SchemaVersion;
}

/** An event in the schema version the reader speaks: v2 with `data` and `compat`, v1 flat. */
export function renderWire(event: RunEvent, version: SchemaVersion): WireRunEvent {
  const { type, run_id, seq, ts } = event;
  if (version === 'v2') return { schema_version: 'v2', type, run_id, seq, ts, data: event.data, compat: event.compat };
  return { schema_version: 'v1', type, run_id, seq, ts, text: event.compat.text, status: event.compat.status, is_error: event.compat.is_error };
}
