import { SwitchboardError } from '../../core/errors.js';
import type { Logger } from '../../core/logger.js';
import { handlers as defaultHandlers, invoke, type AnyHandler, type OperationContext } from '../../api/index.js';
import { describeIssues, paramSchemas, resultSchemas, type MethodName } from '../../protocol/methods.js';
import { errorResponse, isValidId, type JsonRpcId, type JsonRpcResponse } from '../../protocol/json-rpc.js';
import type { RequestAuthentication } from './authenticate.js';

export { errorResponse } from '../../protocol/json-rpc.js';

export type { AnyHandler } from '../../api/index.js';

export interface DispatcherOptions {
  logger: Logger;
  /** Most requests in one batch. */
  maxBatch?: number;
  /** The method implementations (tests may add to them). */
  handlers?: Partial<Record<string, AnyHandler>>;
  /** Checks every result against its method's schema (tests): a result that does not match is an INTERNAL_ERROR, logged. */
  checkResults?: boolean;
}

/** What one connection gives the dispatcher: the context its operations run in, and how its requests are authenticated. */
export interface DispatchConnection {
  /** Everything an operation needs but the grant, which each request's credentials give. */
  context: Omit<OperationContext, 'grant'>;
  authentication: RequestAuthentication;
  /** Called when a request's credentials check out (before it runs). */
  onAuthenticated?: () => void;
}

/** The outcome of one request: its response (undefined for a notification) and whether its credentials were good. */
interface Outcome {
  response: JsonRpcResponse | undefined;
  authenticated: boolean;
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Turns parsed JSON-RPC messages into responses: checks the envelope, the credentials (through the
 * connection's authentication), the method and the parameters, runs the handler and maps every
 * failure to a stable error. It holds no per-connection state; the connection passes its own in.
 */
export class Dispatcher {
  /** The operations table it calls (the default one and any a test added): other surfaces of the same server call the same. */
  readonly handlers: Partial<Record<string, AnyHandler>>;
  private readonly maxBatch: number;

  constructor(private readonly options: DispatcherOptions) {
    this.handlers = { ...(defaultHandlers as unknown as Record<string, AnyHandler>), ...options.handlers };
    this.maxBatch = options.maxBatch ?? 100;
  }

  /**
   * Handles one parsed message (a request, a notification or a batch). Resolves to what should be
   * written back (nothing for notifications) and whether any request in it carried good credentials.
   */
  async handle(message: unknown, connection: DispatchConnection): Promise<{ reply: JsonRpcResponse | JsonRpcResponse[] | undefined; authenticated: boolean }> {
    if (Array.isArray(message)) {
      if (message.length === 0) return { reply: errorResponse(null, 'INVALID_REQUEST', 'invalid request: empty batch'), authenticated: false };
      if (message.length > this.maxBatch) {
        return { reply: errorResponse(null, 'INVALID_REQUEST', `invalid request: batch of ${message.length} exceeds the limit of ${this.maxBatch}`), authenticated: false };
      }
      const outcomes = await Promise.all(message.map((m) => this.handleOne(m, connection)));
      const responses = outcomes.map((o) => o.response).filter((r): r is JsonRpcResponse => r !== undefined);
      return { reply: responses.length > 0 ? responses : undefined, authenticated: outcomes.some((o) => o.authenticated) };
    }
    const outcome = await this.handleOne(message, connection);
    return { reply: outcome.response, authenticated: outcome.authenticated };
  }

  private async handleOne(message: unknown, connection: DispatchConnection): Promise<Outcome> {
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
    const credentials = await connection.authentication.authenticate(params);
    if ('refused' in credentials) {
      return { response: reply(errorResponse(id, credentials.code ?? 'INVALID_TOKEN', credentials.refused)), authenticated: false };
    }
    // Known before the request runs, so a slow first request does not count as unauthenticated.
    connection.onAuthenticated?.();
    try {
      const ctx: OperationContext = { ...connection.context, grant: credentials.grant };
      // The one way to an operation (api/invoke.ts): the method, its params, the grant's scope, then the handler.
      const result = await invoke(this.handlers, ctx, method, credentials.params);
      if (this.options.checkResults && Object.hasOwn(paramSchemas, method)) this.checkResult(method as MethodName, result);
      return { response: reply({ jsonrpc: '2.0', id, result }), authenticated: true };
    } catch (err) {
      if (err instanceof SwitchboardError) {
        return { response: reply(errorResponse(id, err.code, err.message, err.details)), authenticated: true };
      }
      this.options.logger.error('internal error', { method, error: err instanceof Error ? (err.stack ?? err.message) : String(err) });
      return { response: reply(errorResponse(id, 'INTERNAL_ERROR', `internal error while running ${method}`)), authenticated: true };
    }
  }

  /** Throws when `result` is not what `method`'s schema says (a drift between an operation and the wire contract). */
  private checkResult(method: MethodName, result: unknown): void {
    const parsed = resultSchemas[method].safeParse(result);
    if (!parsed.success) throw new Error(`the result of ${method} does not match its schema: ${describeIssues(parsed.error)}`);
  }
}
