/**
 * The one way from a surface to an operation. Every surface names the operation by its JSON-RPC
 * method and hands over the caller's params and grant; here the params are checked by the method's
 * schema (protocol/methods), the grant by its scope (authorize), and the handler runs. The JSON-RPC
 * dispatcher calls `invoke` for each request; the HTTP API and the MCP server call an
 * `OperationsPort` (operations.ts), which is `invoke` with a caller that has no notifications to
 * receive. So a
 * method answers the same, with the same error codes and wording, whichever way it was reached;
 * only following a stream (a subscription, SSE) is each surface's own.
 */
import { SwitchboardError } from '../core/errors.js';
import { describeIssues, fastParamChecks, paramSchemas, type MethodName, type ParamsInput, type Result } from '../protocol/methods.js';
import { authorize, OWNER_GRANT, type Grant } from './authorize.js';
import type { CallerLike, OperationContext } from './context.js';

/** A method's implementation as a table holds it (the dispatcher's tests add their own). */
export type AnyHandler = (ctx: OperationContext, params: never) => unknown;

/** Methods that open a subscription: they need a caller that can receive notifications (JSON-RPC, the WebSocket). */
type SubscribingMethod = 'subscribe' | 'unsubscribe' | 'log_subscribe' | 'log_unsubscribe' | 'run_subscribe';

/** What an OperationsPort offers: every method but those that deliver notifications. */
export type PortMethod = Exclude<MethodName, SubscribingMethod>;

/** Who calls through a port: what their credentials allow, and whether they are still there. */
export interface OperationCaller {
  grant: Grant;
  /** Aborted when the caller goes away: a wait stops, a task the caller owns ends. */
  signal: AbortSignal;
}

/** An operation by its method name, as one caller: the adapter every surface but JSON-RPC's own uses. */
export interface OperationsPort<M extends PortMethod = PortMethod> {
  call<N extends M>(method: N, params: ParamsInput<N>, caller: OperationCaller): Promise<Result<N>>;
}

/**
 * The params of `method` as its handler takes them: checked and defaulted by the method's schema.
 * A method with no schema (one a test added) gets them as they are.
 */
export function checkedParams(method: string, params: unknown): unknown {
  if (!Object.hasOwn(paramSchemas, method)) return params;
  const fast = Object.hasOwn(fastParamChecks, method) ? fastParamChecks[method as MethodName]?.(params) : undefined;
  if (fast !== undefined) return fast;
  const parsed = paramSchemas[method as MethodName].safeParse(params);
  if (!parsed.success) throw new SwitchboardError('INVALID_PARAMS', `invalid params for ${method}: ${describeIssues(parsed.error)}`);
  return parsed.data;
}

/** Runs `method` from `table` in `ctx`: METHOD_NOT_FOUND, INVALID_PARAMS or FORBIDDEN before the handler, else what it returns or throws. */
export async function invoke(table: Partial<Record<string, AnyHandler>>, ctx: OperationContext, method: string, params: unknown): Promise<unknown> {
  const handler = Object.hasOwn(table, method) ? table[method] : undefined;
  if (!handler) throw new SwitchboardError('METHOD_NOT_FOUND', `method not found: ${method}`, { method });
  const checked = checkedParams(method, params);
  // Every surface comes through here: the scope is checked once, for all of them.
  authorize(ctx.grant ?? OWNER_GRANT, method, checked, ctx);
  return (await handler(ctx, checked as never)) ?? null;
}

/** A caller through a port has no notifications to receive, so it can hold no subscription. */
export const NO_NOTIFICATIONS: CallerLike = {
  subscribe: () => refuseSubscription('subscribe'),
  nodePaneSubscribe: () => refuseSubscription('subscribe'),
  logSubscribe: () => refuseSubscription('log_subscribe'),
  nodeLogSubscribe: () => refuseSubscription('log_subscribe'),
  runSubscribe: () => refuseSubscription('run_subscribe'),
  unsubscribe: () => refuseSubscription('unsubscribe'),
};

function refuseSubscription(method: string): never {
  throw new SwitchboardError('INVALID_REQUEST', `${method} needs a connection that receives notifications (JSON-RPC or the WebSocket); this surface follows streams its own way`, { method });
}
