/**
 * The agent bridge's runs (seed 004) as operations: the methods `run_*`, which JSON-RPC, the HTTP
 * API (`/api/v2/agent/*`, `/api/v2/chat/proxy`) and the client library all call by name, so every
 * surface has the same operations with the same errors; and `RunsPort`, the run service as these
 * handlers use it (and as a surface follows a run's events as a stream).
 */
import type { Disposable } from '../core/disposable.js';
import { SwitchboardError } from '../core/errors.js';
import type { SchemaVersion } from '../contract/index.js';
import { OWNER_CALLER, renderEvent, type BackendInfo, type ClusterNodesView, type IdleConversationsView, type RunEvent, type RunView, type RunViewPage, type SubmitRequest, type WireRunEvent } from '../runs/index.js';
import type { EventPage, RunQuery } from '../ledger/ledger-store.js';
import { requireScope, type Grant } from './authorize.js';
import type { CallerLike } from './context.js';
import { checkedParams, NO_NOTIFICATIONS, type OperationsPort } from './invoke.js';
import type { Params, Result } from '../protocol/methods.js';
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
  throw new SwitchboardError('FORBIDDEN', `forbidden: ${what} was started by ${maker === OWNER_CALLER ? 'the owner' : `pane ${maker}`}; only its maker or the owner may steer or end it`, { maker });
}

/**
 * What the run operations need of the run service. The HTTP API served on its own (tests, the
 * bench, a library user) gives a RunService; the daemon's goes through its bridge (`bridgeRuns`).
 * Every call of a run method goes through the handlers below (`runOperations` when there are no
 * daemon services); a surface uses the port itself only to follow a run's events as a stream.
 */
export interface RunsPort {
  submit(request: SubmitRequest): Promise<RunView>;
  get(runId: string): Promise<RunView>;
  /** A page of runs, prompts as previews, bounded by count and bytes. */
  list(query: RunQuery): Promise<RunViewPage>;
  cancel(runId: string, caller: string): Promise<RunView>;
  /** Ends a run's turn, keeping its conversation where its CLI can. */
  interrupt(runId: string, caller: string): Promise<RunView>;
  /** A page of a run's events, bounded by count and bytes, with where the next starts. */
  events(runId: string, afterSeq: number, limit: number): Promise<EventPage>;
  subscribe(runId: string, afterSeq: number, listener: (event: RunEvent) => void, options: { onEnd?: () => void; onError?: (err: Error) => void }): Promise<Disposable>;
  backends(): Promise<BackendInfo[]>;
  /** The conversations kept open for follow-ups, over every backend. */
  idleConversations(): IdleConversationsView;
  /** The backends' names, without asking each for its health. */
  backendNames(): string[];
  /** The cluster's live nodes, where this is a controller. */
  nodes(): ClusterNodesView;
  negotiate(proposed: string | undefined): SchemaVersion;
}

/** An event in the schema version the reader speaks: v2 with `data` and `compat`, v1 flat. */
export function renderWire(event: RunEvent, version: SchemaVersion): WireRunEvent {
  return renderEvent(event, version);
}

/** Where the run methods find the run service: the daemon's bridge, which may be off. */
interface BridgeContext {
  bridge: { readonly service: RunsPort | undefined; readonly offReason: string };
  grant?: Grant | undefined;
  caller: CallerLike;
}

/** The run service of these services; CONFLICT when the daemon runs without the bridge. */
export function runServiceOf<S extends RunsPort>(services: { bridge: { readonly service: S | undefined; readonly offReason: string } }): S {
  const service = services.bridge.service;
  if (!service) throw new SwitchboardError('CONFLICT', `the agent bridge is off in this daemon: ${services.bridge.offReason}`);
  return service;
}

/** The daemon's run service as a port that answers CONFLICT while the bridge is off (its streams, for the HTTP API). */
export function bridgeRuns(services: Pick<Services, 'bridge'>): RunsPort {
  return {
    submit: (r) => runServiceOf(services).submit(r),
    get: (id) => runServiceOf(services).get(id),
    list: (q) => runServiceOf(services).list(q),
    cancel: (id, caller) => runServiceOf(services).cancel(id, caller),
    interrupt: (id, caller) => runServiceOf(services).interrupt(id, caller),
    events: (id, after, limit) => runServiceOf(services).events(id, after, limit),
    subscribe: (id, after, listener, options) => runServiceOf(services).subscribe(id, after, listener, options),
    backends: () => runServiceOf(services).backends(),
    idleConversations: () => runServiceOf(services).idleConversations(),
    backendNames: () => runServiceOf(services).backendNames(),
    nodes: () => runServiceOf(services).nodes(),
    negotiate: (proposed) => runServiceOf(services).negotiate(proposed),
  };
}

/** The run methods a port offers (following a run is a stream, each surface's own). */
export type RunOperation = Exclude<BridgeMethod, 'run_subscribe'>;

/**
 * The run methods over a run service alone, with no daemon around it (the HTTP API served on its
 * own): the same handlers, params checked by the same schemas (`checkedParams`, as `invoke` does),
 * and the grant's scope (`requireScope`: no run method has a pane-specific rule, which is all
 * `authorize` adds to it).
 */
export function runOperations(runs: RunsPort): OperationsPort<RunOperation> {
  const bridge = { service: runs, offReason: '' };
  return {
    async call(method, params, { grant }) {
      const checked = checkedParams(method, params);
      requireScope(grant, method);
      const handler = bridgeHandlers[method] as unknown as (ctx: BridgeContext, p: unknown) => Promise<unknown>;
      return (await handler({ bridge, grant, caller: NO_NOTIFICATIONS }, checked)) as never;
    },
  };
}

type BridgeMethod = 'run_submit' | 'run_get' | 'run_list' | 'run_cancel' | 'run_interrupt' | 'run_events' | 'run_subscribe' | 'run_backends' | 'run_nodes';

export const bridgeHandlers: { [M in BridgeMethod]: (ctx: BridgeContext, params: Params<M>) => Promise<Result<M>> } = {
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

  async run_interrupt(ctx, p) {
    return { run: await runServiceOf(ctx).interrupt(p.run_id, callerOf(ctx.grant)) };
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

  run_nodes(ctx) {
    return Promise.resolve(runServiceOf(ctx).nodes());
  },
};
