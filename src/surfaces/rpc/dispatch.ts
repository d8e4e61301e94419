import { SwitchboardError, RPC_CODE_BY_ERROR, type ErrorCode } from '../../core/errors.js';
import type { Logger } from '../../core/logger.js';
import { handlers as defaultHandlers, type OperationContext } from '../../api/index.js';
import { describeIssues, paramSchemas, type MethodName } from '../../protocol/methods.js';
import { isValidId, type JsonRpcId, type JsonRpcResponse } from '../../protocol/json-rpc.js';
import { authorize } from '../../api/authorize.js';
import { TokenRegistry } from './auth.js';

export interface DispatcherOptions {
  /** The daemon's tokens (or just the owner's). */
  token: string | TokenRegistry;
  logger: Logger;
  /** Most requests in one batch. */
  maxBatch?: number;
  /** The method implementations (tests may add to them). */
  handlers?: Partial<Record<string, (ctx: OperationContext, params: never) => unknown>>;
}

/** The outcome of one request: its response (undefined for a notification) and whether the token was good. */
interface Outcome {
  response: JsonRpcResponse | undefined;
  authenticated: boolean;
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Builds the error response for `code`; `data.code` carries the stable string code. */
export function errorResponse(id: JsonRpcId, code: ErrorCode, message: string, details?: Readonly<Record<string, unknown>>): JsonRpcResponse {
  return { jsonrpc: '2.0', id, error: { code: RPC_CODE_BY_ERROR[code], message, data: { code, ...details } } };
}

/**
 * Turns parsed JSON-RPC messages into responses: checks the envelope, the token (constant time),
 * the method and the parameters, runs the handler and maps every failure to a stable error.
 * It holds no per-connection state; the connection passes its context in.
 */
export class Dispatcher {
  private readonly handlers: Partial<Record<string, (ctx: OperationContext, params: never) => unknown>>;
  private readonly maxBatch: number;
  private readonly tokens: TokenRegistry;

  constructor(private readonly options: DispatcherOptions) {
    this.tokens = typeof options.token === 'string' ? new TokenRegistry(options.token) : options.token;
    this.handlers = { ...(defaultHandlers as unknown as Record<string, (ctx: OperationContext, params: never) => unknown>), ...options.handlers };
    this.maxBatch = options.maxBatch ?? 100;
  }

  /**
   * Handles one parsed message (a request, a notification or a batch). Resolves to what should be
   * written back (nothing for notifications) and whether any request in it carried the right token.
   */
  async handle(
    message: unknown,
    ctx: OperationContext,
    onAuthenticated?: () => void,
  ): Promise<{ reply: JsonRpcResponse | JsonRpcResponse[] | undefined; authenticated: boolean }> {
    if (Array.isArray(message)) {
      if (message.length === 0) return { reply: errorResponse(null, 'INVALID_REQUEST', 'invalid request: empty batch'), authenticated: false };
      if (message.length > this.maxBatch) {
        return { reply: errorResponse(null, 'INVALID_REQUEST', `invalid request: batch of ${message.length} exceeds the limit of ${this.maxBatch}`), authenticated: false };
      }
      const outcomes = await Promise.all(message.map((m) => this.handleOne(m, ctx, onAuthenticated)));
      const responses = outcomes.map((o) => o.response).filter((r): r is JsonRpcResponse => r !== undefined);
      return { reply: responses.length > 0 ? responses : undefined, authenticated: outcomes.some((o) => o.authenticated) };
    }
    const outcome = await this.handleOne(message, ctx, onAuthenticated);
    return { reply: outcome.response, authenticated: outcome.authenticated };
  }

  private async handleOne(message: unknown, ctx: OperationContext, onAuthenticated?: () => void): Promise<Outcome> {
    if (!isPlainObject(message)) {
      return { response: errorResponse(null, 'INVALID_REQUEST', 'invalid request: expected a JSON-RPC request object'), authenticated: false };
    }
    const hasId = Object.hasOwn(message, 'id');
    const rawId = message.id;
    if (hasId && !isValidId(rawId)) {
      return { response: errorResponse(null, 'INVALID_REQUEST', 'invalid request: id must be a string, a number or null'), authenticated: false };
    }
    const id: JsonRpcId = hasId ? (rawId as JsonRpcId) : null;
    const isNotification = !hasId;
    const reply = (response: JsonRpcResponse): JsonRpcResponse | undefined => (isNotification ? undefined : response);

    if (message.jsonrpc !== '2.0') {
      return { response: reply(errorResponse(id, 'INVALID_REQUEST', 'invalid request: jsonrpc must be "2.0"')), authenticated: false };
    }
    const method = message.method;
    if (typeof method !== 'string' || method === '') {
      return { response: reply(errorResponse(id, 'INVALID_REQUEST', 'invalid request: method must be a non-empty string')), authenticated: false };
    }
    const params = message.params ?? {};
    if (!isPlainObject(params)) {
      return { response: reply(errorResponse(id, 'INVALID_PARAMS', 'invalid params: params must be an object (named parameters, with the token)')), authenticated: false };
    }
    const { token, ...rest } = params;
    if (token === undefined) {
      return { response: reply(errorResponse(id, 'INVALID_TOKEN', 'invalid token: params.token is missing')), authenticated: false };
    }
    const grant = this.tokens.resolve(token);
    if (!grant) {
      return { response: reply(errorResponse(id, 'INVALID_TOKEN', 'invalid token')), authenticated: false };
    }
    // Known before the request runs, so a slow first request does not count as unauthenticated.
    onAuthenticated?.();
    const handler = Object.hasOwn(this.handlers, method) ? this.handlers[method] : undefined;
    if (!handler) {
      return { response: reply(errorResponse(id, 'METHOD_NOT_FOUND', `method not found: ${method}`, { method })), authenticated: true };
    }
    let validated: unknown = rest;
    if (Object.hasOwn(paramSchemas, method)) {
      const parsed = paramSchemas[method as MethodName].safeParse(rest);
      if (!parsed.success) {
        return { response: reply(errorResponse(id, 'INVALID_PARAMS', `invalid params for ${method}: ${describeIssues(parsed.error)}`)), authenticated: true };
      }
      validated = parsed.data;
    }
    try {
      const callerCtx = { ...ctx, grant };
      // Every surface comes through here: the scope is checked once, for all of them.
      authorize(grant, method, validated, callerCtx);
      const result = await handler(callerCtx, validated as never);
      return { response: reply({ jsonrpc: '2.0', id, result: result ?? null }), authenticated: true };
    } catch (err) {
      if (err instanceof SwitchboardError) {
        return { response: reply(errorResponse(id, err.code, err.message, err.details)), authenticated: true };
      }
      this.options.logger.error('internal error', { method, error: err instanceof Error ? (err.stack ?? err.message) : String(err) });
      return { response: reply(errorResponse(id, 'INTERNAL_ERROR', `internal error while running ${method}`)), authenticated: true };
    }
  }
}
