/**
 * The agent bridge's runs (seed 004) as operations: the JSON-RPC methods `run_*`, and `RunsPort`,
 * what the HTTP API (`/api/v2/agent/*`, `/api/v2/chat/proxy`) uses of the run service. Both go
 * through here, so every surface has the same operations with the same errors.
 */
import type { Disposable } from '../core/disposable.js';
import { SwitchboardError } from '../core/errors.js';
import type { SchemaVersion } from '../contract/index.js';
import { renderEvent, type BackendInfo, type RunEvent, type RunService, type RunView, type SubmitRequest, type WireRunEvent } from '../runs/bridge/index.js';
import type { RunQuery } from '../runs/ledger/ledger-store.js';
import type { Handler } from './handler.js';
import type { Services } from './services.js';

export type { BackendInfo, RunEvent, RunView, SubmitRequest, WireRunEvent, RunQuery, SchemaVersion };

/** What the HTTP API needs of the run service. */
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
  return renderEvent(event, version);
}

/** The run service of these services; CONFLICT when the daemon runs without the bridge. */
export function runServiceOf(services: Pick<Services, 'bridge'>): RunService {
  const service = services.bridge.service;
  if (!service) throw new SwitchboardError('CONFLICT', `the agent bridge is off in this daemon: ${services.bridge.offReason}`);
  return service;
}

/** The run service as the HTTP API takes it, looked up on each call (so a bridge that is off answers CONFLICT, not a crash). */
export function bridgeRuns(services: Pick<Services, 'bridge'>): RunsPort {
  return {
    submit: (r) => runServiceOf(services).submit(r),
    get: (id) => runServiceOf(services).get(id),
    list: (q) => runServiceOf(services).list(q),
    cancel: (id) => runServiceOf(services).cancel(id),
    events: (id, after, limit) => runServiceOf(services).events(id, after, limit),
    subscribe: (id, after, listener, options) => runServiceOf(services).subscribe(id, after, listener, options),
    backends: () => runServiceOf(services).backends(),
    negotiate: (proposed) => runServiceOf(services).negotiate(proposed),
  };
}

type BridgeMethod = 'run_submit' | 'run_get' | 'run_list' | 'run_cancel' | 'run_events' | 'run_subscribe' | 'run_backends';

export const bridgeHandlers: { [M in BridgeMethod]: Handler<M> } = {
  async run_submit(ctx, p) {
    return { run: await runServiceOf(ctx).submit(p) };
  },

  async run_get(ctx, p) {
    return { run: await runServiceOf(ctx).get(p.run_id) };
  },

  async run_list(ctx, p) {
    return { runs: await runServiceOf(ctx).list({ status: p.status, backend: p.backend, limit: p.limit, before: p.before }) };
  },

  async run_cancel(ctx, p) {
    return { run: await runServiceOf(ctx).cancel(p.run_id) };
  },

  async run_events(ctx, p) {
    const runs = runServiceOf(ctx);
    const run = await runs.get(p.run_id);
    const version = p.schema_version === undefined ? run.schema_version : runs.negotiate(p.schema_version);
    const events = await runs.events(p.run_id, p.after ?? 0, p.limit ?? 1_000);
    return { run, schema_version: version, events: events.map((e) => renderWire(e, version)) };
  },

  async run_subscribe(ctx, p) {
    const runs = runServiceOf(ctx);
    const run = await runs.get(p.run_id);
    const version = p.schema_version === undefined ? run.schema_version : runs.negotiate(p.schema_version);
    const subscription = await ctx.caller.runSubscribe(p.run_id, (listener, options) => runs.subscribe(p.run_id, p.after ?? 0, (e) => listener(renderWire(e, version)), options));
    return { subscription, run_id: p.run_id, schema_version: version };
  },

  async run_backends(ctx) {
    const backends = await runServiceOf(ctx).backends();
    return { schema_versions: ['v1', 'v2'], backends: backends.map((b) => ({ ...b, capabilities: b.capabilities.map((c) => ({ ...c })), health: { ...b.health } })) };
  },
};
