/**
 * A small router for the HTTP API, and the one error shape every answer uses:
 * `{"error": {"code": "INVALID_PARAMS", "rpc_code": -32602, "type": "invalid_params", "message": …, "details": …}}`,
 * the same stable codes as JSON-RPC (src/core/errors.ts). In order, before any handler runs: the
 * Host must name this server on loopback (DNS rebinding), the caller must authenticate (a Bearer
 * token compared in constant time, or whatever step the server is given, which says what the caller
 * may do), the path must be known (404), the method one it takes (405, with Allow), and the caller's
 * grant must have the scope of the JSON-RPC method the route is the HTTP form of (403). Bodies are read up to a limit (413, and the
 * connection closed) and must be strict UTF-8 and JSON (400, PARSE_ERROR as on JSON-RPC). No CORS headers are ever sent, so no
 * other origin's page can read an answer. Every answer is written through surfaces/http/answer.ts (streamed, with backpressure).
 * A handler's SwitchboardError becomes its status; anything else is a bug: 500, logged.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { SwitchboardError, errorMessage, type ErrorCode } from '../../core/errors.js';
import { RPC_CODE_BY_ERROR } from '../../protocol/rpc-codes.js';
import type { MethodName } from '../../protocol/methods.js';
import type { Logger } from '../../core/logger.js';
import { requireScope, type Grant, type OperationCaller } from '../../api/index.js';
import { sendJson } from '../http/answer.js';
import { BodyTooLarge, bodyText, closeAfterAnswer, readBody } from '../http/body.js';
import type { z } from 'zod';
import { issueProblems } from '../../core/zod-issues.js';

export { sendJson };

/** Request bodies past this are refused with 413 (a prompt of a megabyte is already a large one). */
export const MAX_BODY_BYTES = 1024 * 1024;

const STATUS_BY_CODE: Partial<Record<ErrorCode, number>> = {
  PARSE_ERROR: 400,
  INVALID_REQUEST: 400,
  INVALID_PARAMS: 400,
  INVALID_TOKEN: 401,
  FORBIDDEN: 403,
  METHOD_NOT_FOUND: 404,
  RUN_NOT_FOUND: 404,
  ASK_NOT_FOUND: 404,
  SESSION_NOT_FOUND: 404,
  PANE_NOT_FOUND: 404,
  CONFLICT: 409,
  // The pane named has exited: the request clashes with its state, as CONFLICT does.
  PANE_EXITED: 409,
  // Sealed data that does not open with the key here: the state on disk, not the request, is at odds.
  KEY_MISMATCH: 409,
  LIMIT_EXCEEDED: 429,
  SHUTTING_DOWN: 503,
  // A node of the cluster that is not connected: the service behind this one is unavailable for now.
  NODE_UNREACHABLE: 503,
  TIMEOUT: 504,
  AGENT_ERROR: 502,
  SPAWN_FAILED: 502,
};

/** An error with an HTTP status of its own (405, 413), still in the one shape. */
export class HttpError extends SwitchboardError {
  constructor(
    readonly status: number,
    code: ErrorCode,
    message: string,
    details?: Record<string, unknown>,
  ) {
    super(code, message, details);
  }
}

export interface ApiContext {
  req: IncomingMessage;
  res: ServerResponse;
  url: URL;
  params: Readonly<Record<string, string>>;
  /** What the caller's credentials allow (the owner's for the daemon's token or the dashboard's login). */
  grant: Grant;
}

export type Handler = (ctx: ApiContext) => Promise<void>;

/**
 * The caller of one request as an operation sees it: its grant, and a signal for when it hangs up
 * before the answer (a wait stops; what the caller owns, such as an ask, goes on).
 */
export function operationCallerOf(ctx: ApiContext): OperationCaller {
  const gone = new AbortController();
  ctx.res.once('close', () => {
    if (!ctx.res.writableFinished) gone.abort();
  });
  return { grant: ctx.grant, signal: gone.signal };
}

interface Route {
  method: string;
  parts: string[];
  operation: MethodName | null;
  handler: Handler;
}

export interface RouterOptions {
  /** The Host values that name this server (checked on every request). */
  hosts: () => ReadonlySet<string>;
  /** True when the request's Origin (if any) is this server's own: a page of another site is refused. */
  origin: (req: IncomingMessage) => boolean;
  /** What the request's credentials allow (a Bearer token, a dashboard session…), or undefined: 401. */
  authenticate: (req: IncomingMessage) => Grant | undefined;
  logger: Logger;
}

export class Router {
  private readonly routes: Route[] = [];

  constructor(private readonly options: RouterOptions) {}

  /**
   * Adds a route; `:name` in the pattern is a path parameter. `operation` is the JSON-RPC method the
   * route is the HTTP form of: the caller needs its scope (protocol/scopes.ts). Null: any caller who
   * authenticated (the OpenAPI document).
   */
  add(method: string, pattern: string, operation: MethodName | null, handler: Handler): this {
    this.routes.push({ method, parts: pattern.split('/'), operation, handler });
    return this;
  }

  /** True when some route has this path (whatever its method). */
  knows(pathname: string): boolean {
    return this.routes.some((r) => matchParts(r.parts, pathname.split('/')) !== undefined);
  }

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    try {
      const host = req.headers.host?.toLowerCase();
      if (host === undefined || !this.options.hosts().has(host)) throw new HttpError(403, 'FORBIDDEN', 'the Host header does not name this server');
      if (!this.options.origin(req)) throw new HttpError(403, 'FORBIDDEN', 'requests from another origin are refused');
      const grant = this.options.authenticate(req);
      if (!grant) {
        res.setHeader('WWW-Authenticate', 'Bearer');
        throw new HttpError(401, 'INVALID_TOKEN', 'a Bearer token is required (Authorization: Bearer <token>)');
      }
      const url = new URL(req.url ?? '/', 'http://localhost');
      const segments = url.pathname.split('/');
      const matches = this.routes.map((r) => ({ r, params: matchParts(r.parts, segments) })).filter((m) => m.params !== undefined);
      if (matches.length === 0) throw new HttpError(404, 'METHOD_NOT_FOUND', `no such endpoint: ${url.pathname}`);
      const hit = matches.find((m) => m.r.method === req.method);
      if (!hit) {
        const allowed = [...new Set(matches.map((m) => m.r.method))];
        res.setHeader('Allow', allowed.join(', '));
        throw new HttpError(405, 'INVALID_REQUEST', `${req.method ?? '?'} is not allowed on ${url.pathname} (allowed: ${allowed.join(', ')})`);
      }
      if (hit.r.operation !== null) requireScope(grant, hit.r.operation);
      await hit.r.handler({ req, res, url, params: hit.params ?? {}, grant });
    } catch (err) {
      this.fail(res, err);
    }
  }

  /** Answers with the error shape (or, once an answer has begun, cuts it off: a half answer must not look whole). */
  fail(res: ServerResponse, err: unknown): void {
    if (!(err instanceof SwitchboardError)) this.options.logger.error('the HTTP API failed', { error: errorMessage(err) });
    if (res.headersSent) {
      if (!res.writableEnded) res.destroy();
      return;
    }
    // A body refused for its size was not read whole: this answer is the connection's last.
    if (err instanceof HttpError && err.status === 413) closeAfterAnswer(res);
    void sendError(res, err);
  }
}

function matchParts(pattern: readonly string[], segments: readonly string[]): Record<string, string> | undefined {
  if (pattern.length !== segments.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < pattern.length; i++) {
    const p = pattern[i] as string;
    const s = segments[i] as string;
    if (p.startsWith(':')) {
      if (s === '') return undefined;
      try {
        params[p.slice(1)] = decodeURIComponent(s);
      } catch {
        return undefined;
      }
    } else if (p !== s) return undefined;
  }
  return params;
}

/** The one error shape, with the status for its code. */
export function errorBody(err: unknown): { status: number; body: { error: { code: ErrorCode; rpc_code: number; type: string; message: string; details?: Record<string, unknown> } } } {
  const e = err instanceof SwitchboardError ? err : new SwitchboardError('INTERNAL_ERROR', 'internal error');
  const status = e instanceof HttpError ? e.status : (STATUS_BY_CODE[e.code] ?? 500);
  return { status, body: { error: { code: e.code, rpc_code: RPC_CODE_BY_ERROR[e.code], type: e.code.toLowerCase(), message: e.message, ...(e.details ? { details: { ...e.details } } : {}) } } };
}

async function sendError(res: ServerResponse, err: unknown): Promise<void> {
  const { status, body } = errorBody(err);
  await sendJson(res, status, body);
}

/** The request's body as JSON: 413 past the limit, 400 when it is not JSON (or there is none). */
export async function readJson(req: IncomingMessage, limit = MAX_BODY_BYTES): Promise<unknown> {
  const text = await readText(req, limit);
  if (text.trim() === '') throw new SwitchboardError('PARSE_ERROR', 'the body is empty: a JSON object was expected');
  return parseJson(text);
}

/** The body as JSON for a POST whose parameters are all optional: none at all is `{}`. */
export async function readOptionalJson(req: IncomingMessage, limit = MAX_BODY_BYTES): Promise<unknown> {
  const text = await readText(req, limit);
  return text.trim() === '' ? {} : parseJson(text);
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new SwitchboardError('PARSE_ERROR', `the body is not JSON: ${errorMessage(err)}`);
  }
}

async function readText(req: IncomingMessage, limit: number): Promise<string> {
  try {
    return bodyText(await readBody(req, limit));
  } catch (err) {
    if (!(err instanceof BodyTooLarge)) throw err;
    // What the client may still be sending is not read: the answer is the connection's last.
    throw new HttpError(413, 'LIMIT_EXCEEDED', err.message, { limit });
  }
}

/** Validates `value` with `schema`: INVALID_PARAMS naming every problem and where it is. */
export function validate<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const problems = issueProblems(parsed.error, 'field');
  throw new SwitchboardError('INVALID_PARAMS', `invalid ${what}: ${problems.join('; ')}`, { problems });
}

/** The query string as an object; a parameter given twice is an error. */
export function queryOf(url: URL): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of url.searchParams) {
    if (Object.hasOwn(out, key)) throw new SwitchboardError('INVALID_PARAMS', `the query parameter '${key}' is given more than once`);
    out[key] = value;
  }
  return out;
}
