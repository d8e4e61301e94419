/**
 * The agent bridge's runs (seed 004) as operations: the JSON-RPC methods `run_*`, and `RunsPort`,
 * what the HTTP API (`/api/v2/agent/*`, `/api/v2/chat/proxy`) uses of the run service. Both go
 * through here, so every surface has the same operations with the same errors.
 */
import type { Disposable } from '../core/disposable.js';
import { SwitchboardError } from '../core/errors.js';
import type { SchemaVersion } from '../contract/index.js';
import { OWNER_CALLER, renderEvent, type BackendInfo, type IdleConversationsView, type RunEvent, type RunService, type RunView, type RunViewPage, type SubmitRequest, type WireRunEvent } from '../runs/index.js';
import type { EventPage, RunQuery } from '../ledger/ledger-store.js';
import type { Grant } from './authorize.js';
import type { Handler } from './handler.js';
import type { Services } from './services.js';

export type { RunEvent, RunView, WireRunEvent, SchemaVersion };

/**
 * Who a caller is, as runs and asks record their maker: `owner` for the owner's grant (or none: in
 * process), else the pane whose token it is. Only the maker or the owner may cancel.
 */
export function callerOf(grant: Grant | undefined): string {
  if (!grant || grant.owner) return OWNER_CALLER;
  return grant.paneId ?? 'scoped-token';
}

/**
 * Throws FORBIDDEN unless `grant` may end what `maker` started (`what`, for the message): the owner
 * ends anything, a scoped token only what it started itself. Undefined `maker`: started in process
 * (the owner's), or already gone (the method then answers as it would).
 */
export function requireMaker(grant: Grant | undefined, maker: string | undefined, what: string): void {
  const caller = callerOf(grant);
  if (caller === OWNER_CALLER || maker === undefined || maker === caller) return;
  throw new SwitchboardError('FORBIDDEN', `forbidden: ${what} was started by ${maker === OWNER_CALLER ? 'the owner' : `pane ${maker}`}; only its maker or the owner may end it`, { maker });
}

/** What the HTTP API needs of the run service (`caller`: see callerOf). */
export interface RunsPort {
  submit(request: SubmitRequest): Promise<RunView>;
  get(runId: string): Promise<RunView>;
  /** A page of runs, prompts as previews, bounded by count and bytes. */
  list(query: RunQuery): Promise<RunViewPage>;
  cancel(runId: string, caller: string): Promise<RunView>;
  /** A page of a run's events, bounded by count and bytes, with where the next starts. */
  events(runId: string, afterSeq: number, limit: number): Promise<EventPage>;
  subscribe(runId: string, afterSeq: number, listener: (event: RunEvent) => void, options: { onEnd?: () => void; onError?: (err: Error) => void }): Promise<Disposable>;
  backends(): Promise<BackendInfo[]>;
  /** The conversations kept open for follow-ups, over every backend. */
  idleConversations(): IdleConversationsView;
  /** The backends' names, without asking each for its health. */
  backendNames(): string[];
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
    cancel: (id, caller) => runServiceOf(services).cancel(id, caller),
    events: (id, after, limit) => runServiceOf(services).events(id, after, limit),
    subscribe: (id, after, listener, options) => runServiceOf(services).subscribe(id, after, listener, options),
    backends: () => runServiceOf(services).backends(),
    idleConversations: () => runServiceOf(services).idleConversations(),
    backendNames: () => runServiceOf(services).backendNames(),
    negotiate: (proposed) => runServiceOf(services).negotiate(proposed),
  };
}

type BridgeMethod = 'run_submit' | 'run_get' | 'run_list' | 'run_cancel' | 'run_events' | 'run_subscribe' | 'run_backends';

export const bridgeHandlers: { [M in BridgeMethod]: Handler<M> } = {
  async run_submit(ctx, p) {
    return { run: await runServiceOf(ctx).submit({ ...p, caller: callerOf(ctx.grant) }) };
  },

  async run_get(ctx, p) {
    return { run: await runServiceOf(ctx).get(p.run_id) };
  },

  async run_list(ctx, p) {
    return runServiceOf(ctx).list({ status: p.status, backend: p.backend, limit: p.limit, before: p.before });
  },

  async run_cancel(ctx, p) {
    return { run: await runServiceOf(ctx).cancel(p.run_id, callerOf(ctx.grant)) };
  },

  async run_events(ctx, p) {
    const runs = runServiceOf(ctx);
    const run = await runs.get(p.run_id);
    const version = p.schema_version === undefined ? run.schema_version : runs.negotiate(p.schema_version);
    const page = await runs.events(p.run_id, p.after ?? 0, p.limit ?? 1_000);
    return { run, schema_version: version, events: page.events.map((e) => renderWire(e, version)), next_after: page.next_after };
  },

  async run_subscribe(ctx, p) {
    const runs = runServiceOf(ctx);
    const run = await runs.get(p.run_id);
    const version = p.schema_version === undefined ? run.schema_version : runs.negotiate(p.schema_version);
    const subscription = await ctx.caller.runSubscribe(p.run_id, (listener, options) => runs.subscribe(p.run_id, p.after ?? 0, (e) => listener(renderWire(e, version)), options));
    return { subscription, run_id: p.run_id, schema_version: version };
  },

  async run_backends(ctx) {
    const service = runServiceOf(ctx);
    const backends = await service.backends();
    return { schema_versions: ['v1', 'v2'], backends: backends.map((b) => ({ ...b, capabilities: b.capabilities.map((c) => ({ ...c })), health: { ...b.health } })), idle: service.idleConversations() };
  },
};
