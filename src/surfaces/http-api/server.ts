/**
 * The agent bridge's HTTP API as one request handler, mounted on the daemon's dashboard server
 * under `/api/v2/` (surfaces/http/server.ts), or served on its own (`startHttpApiServer`, loopback
 * only: tests, the bench). Each route calls its JSON-RPC method through api/'s OperationsPort: the
 * daemon's whole table when given (the asks then too), else the run methods over `runs` alone; SSE
 * follows `runs`. Requests are authenticated by a step (by default: the daemon's token as a Bearer
 * header, compared in constant time, which is the owner's grant).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { silentLogger, type Logger } from '../../core/logger.js';
import { LogLimiter } from '../../core/log-limiter.js';
import { AnswerGuard, DEFAULT_ANSWER_LIMITS, type AnswerLimits } from '../http/answer.js';
import { tokenMatches } from '../../core/secrets.js';
import { allowedHosts, originAllowed } from '../http/access.js';
import { Router, sendJson } from './router.js';
import { addAgentRoutes, API_PREFIX } from './agent-routes.js';
import { addAskRoutes } from './ask-routes.js';
import { addTeamRoutes } from './team-routes.js';
import { addChatProxyRoutes } from './chat-proxy.js';
import { IdempotencyKeys } from './idempotency.js';
import { openApiDocument } from './openapi.js';
import { OWNER_GRANT, runOperations, type Grant, type OperationsPort, type RunsPort } from '../../api/index.js';

export interface HttpApiOptions {
  /** The run service the streams follow (and, without `operations`, the one the run routes call). */
  runs: RunsPort;
  /** The daemon's operations: the run routes call them, and the asks between agents (`/api/v2/asks`) and team runs (`/api/v2/teams`) exist; without them those paths are unknown (404). */
  operations?: OperationsPort;
  /** The daemon's token (checked as `Authorization: Bearer <token>`), unless `authenticate` is given. */
  token?: string;
  /** What a request's credentials allow (a dashboard session, a pane's scoped token…); overrides the token check. */
  authenticate?: (req: IncomingMessage) => Grant | undefined;
  /** The Host values that name the server (default: loopback names with the port it listens on). */
  hosts?: () => ReadonlySet<string>;
  logger?: Logger;
}

export interface HttpApi {
  /** Handles one request; true when the path is the API's (`/api/v2/…`), false to let another handler have it. */
  handle(req: IncomingMessage, res: ServerResponse): boolean;
}

/** The API as a handler. With neither a token nor an authenticate step nothing is allowed. */
export function createHttpApi(options: HttpApiOptions & { hosts: () => ReadonlySet<string> }): HttpApi {
  const token = options.token;
  const authenticate =
    options.authenticate ??
    ((req: IncomingMessage): Grant | undefined => {
      const auth = req.headers.authorization;
      return token !== undefined && auth?.startsWith('Bearer ') === true && tokenMatches(token, auth.slice('Bearer '.length)) ? OWNER_GRANT : undefined;
    });
  // The dashboard's own checks: Host names this server, and an Origin, when a browser sends one, is this server's.
  const router = new Router({ hosts: options.hosts, origin: (req) => originAllowed(req, options.hosts(), false), authenticate, logger: options.logger ?? silentLogger });
  // One set of keys for both ways of starting a run: a key used on both is a different request.
  const keys = new IdempotencyKeys();
  const ports = { ops: options.operations ?? runOperations(options.runs), runs: options.runs };
  addAgentRoutes(router, ports, keys);
  addChatProxyRoutes(router, ports, keys);
  if (options.operations) {
    addAskRoutes(router, options.operations);
    addTeamRoutes(router, options.operations);
  }
  // Built at the first request, not at start: turning every schema into JSON Schema takes about
  // 150 ms of the daemon's start and keeps the document in memory for a route most never call.
  let doc: ReturnType<typeof openApiDocument> | undefined;
  router.add('GET', `${API_PREFIX}/openapi.json`, null, async (ctx) => {
    doc ??= openApiDocument();
    await sendJson(ctx.res, 200, doc);
  });
  return {
    handle(req, res) {
      const path = (req.url ?? '/').split('?')[0] ?? '/';
      if (path !== API_PREFIX && !path.startsWith(`${API_PREFIX}/`)) return false;
      void router.handle(req, res);
      return true;
    },
  };
}

export interface HttpApiServer {
  url: string;
  port: number;
  server: Server;
  close(): Promise<void>;
}

/** Serves the API alone on 127.0.0.1 (tests, the bench, embedding without the dashboard). */
export async function startHttpApiServer(options: HttpApiOptions & { port?: number; answers?: Partial<AnswerLimits> }): Promise<HttpApiServer> {
  let port = 0;
  const api = createHttpApi({ ...options, hosts: options.hosts ?? (() => allowedHosts(port)) });
  const log = new LogLimiter(options.logger ?? silentLogger);
  const answers = new AnswerGuard({ ...DEFAULT_ANSWER_LIMITS, ...options.answers }, log);
  const server = createServer((req, res) => {
    answers.watch(res);
    if (!api.handle(req, res)) void sendJson(res, 404, { error: { code: 'METHOD_NOT_FOUND', rpc_code: -32601, type: 'method_not_found', message: `no such endpoint: ${(req.url ?? '/').split('?')[0] ?? '/'}` } });
  });
  // Short limits for strangers: headers must arrive quickly; streams stay open as long as they run.
  server.headersTimeout = 10_000;
  server.requestTimeout = 0;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        answers.close();
        log.flush();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
