/**
 * The dashboard's server on loopback: the built web app, a session's log export, JSON-RPC over a
 * WebSocket (`/ws`) and each pane's terminal over its own WebSocket (`/ws/pane/<id>`). Every
 * request passes the Host check; every upgrade the Origin check; everything but the login link
 * needs the session cookie, and every socket and API call its page key too (access.ts), or the
 * daemon's token as a Bearer header. Under `/api/v2/` it serves the HTTP API (surfaces/http-api:
 * the agent bridge's runs, asks) with the same checks, in that API's error shape; there a pane's
 * own token is taken too, held to its scopes as on JSON-RPC. Every answer is watched by the
 * server's AnswerGuard (answer.ts): too much left unread, or nothing read for the write timeout,
 * and the connection is dropped.
 */
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { createRequire } from 'node:module';
import type * as Ws from 'ws';
import type { WebSocket, WebSocketServer } from 'ws';
import type { Socket } from 'node:net';
import { silentLogger, type Logger } from '../../core/logger.js';
import { LogLimiter } from '../../core/log-limiter.js';
import { errorMessage, SwitchboardError } from '../../core/errors.js';
import { bridgeRuns, operationsPort, findPaneTerminal, narrowGrant, OWNER_GRANT, sessionExport, type Authenticate, type Grant, type Services } from '../../api/index.js';
import { createHttpApi, type HttpApi } from '../http-api/index.js';
import { Dispatcher, type AnyHandler } from '../rpc/dispatch.js';
import { DEFAULT_CONNECTION_LIMITS, type ConnectionDeps, type ConnectionLimits } from '../rpc/peer.js';
import { isLoopbackHost } from '../rpc/server.js';
import { RPC_CODE_BY_ERROR } from '../../protocol/rpc-codes.js';
import { allowedHosts, DashboardAccess, hostAllowed, originAllowed, SESSION_COOKIE } from './access.js';
import { MAX_INPUT_FRAME, PaneSocket } from './pane-socket.js';
import { RpcSocket } from './rpc-socket.js';
import { GrantBudget } from '../rpc/grant-budget.js';
import { defaultWebRoot, serveStatic } from './static-files.js';
import { AnswerGuard, DEFAULT_ANSWER_LIMITS, type AnswerLimits, type DropReason } from './answer.js';
import type { handleMcpHttp } from '../mcp/http.js';

/**
 * The MCP route's module, loaded at the first request to `/mcp`: the MCP SDK costs the daemon about
 * 25 MiB of resident memory, and most daemons never serve MCP over HTTP.
 */
let mcpModule: Promise<{ handleMcpHttp: typeof handleMcpHttp }> | undefined;
const loadMcp = (): Promise<{ handleMcpHttp: typeof handleMcpHttp }> => (mcpModule ??= import('../mcp/http.js'));

export interface DashboardServerOptions {
  /** The one service object (the daemon builds it). */
  services: Services;
  /** The authenticate step (the daemon's tokens): a Bearer header is accepted for the owner's token only. */
  authenticate: Authenticate;
  logger?: Logger;
  /** Where the built web app is (default: this package's dist/web). */
  webRoot?: string;
  /** The limits of JSON-RPC over `/ws`: the same as every other transport's by default. */
  limits?: Partial<ConnectionLimits>;
  handlers?: Partial<Record<string, AnyHandler>>;
  /** Checks every result against its method's schema (tests). */
  checkResults?: boolean;
  /** The bounds on what a client leaves unread of an answer (default DEFAULT_ANSWER_LIMITS). */
  answers?: Partial<AnswerLimits>;
  /** The most the process at the other end of a connection may do (api/CallerOrigins), whatever token it shows. */
  originOf?: (socket: Socket) => Promise<Grant | undefined>;
}

/** Open WebSockets at most, over every browser: a tab holds one for JSON-RPC and one per pane. */
const MAX_SOCKETS = 256;
/** Connections to the dashboard's port at once, whoever holds them: far below the daemon's descriptors. */
const MAX_HTTP_CONNECTIONS = 512;
/**
 * Connections that have not shown a login yet (cookie, page key, token or login code): a small
 * budget of their own, whose oldest member makes room for a new one, so strangers can never crowd
 * out the owner's browser.
 */
const MAX_UNAUTHENTICATED_HTTP = 32;
/** A connection that has not authenticated by then is closed. */
const HTTP_AUTH_DEADLINE_MS = 5_000;
/**
 * Connections one scoped token (one pane's programs) holds on this port, and all scoped tokens
 * together: budgets of their own, not counted against the port's, so the owner always gets in.
 */
export const MAX_HTTP_CONNECTIONS_PER_GRANT = 32;
const MAX_SCOPED_HTTP_CONNECTIONS = 128;
/** An idle keep-alive connection, and a request's headers, get this long. */
const HTTP_IDLE_MS = 5_000;
/** A whole request (GET only: headers and nothing else) must have arrived by then. */
const HTTP_REQUEST_MS = 10_000;

const SECURITY_HEADERS = {
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  // xterm.js sets inline styles; everything else comes from this origin.
  'content-security-policy': "default-src 'self'; connect-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
};

export class DashboardServer {
  private readonly server = http.createServer(
    { headersTimeout: HTTP_IDLE_MS, requestTimeout: HTTP_REQUEST_MS, keepAliveTimeout: HTTP_IDLE_MS, connectionsCheckingInterval: 1_000 },
    (req, res) => this.request(req, res),
  );
  /** Made at the first upgrade (see `sockets`). */
  private wss: WebSocketServer | undefined;
  private readonly access: DashboardAccess;
  private readonly dispatcher: Dispatcher;
  /** The agent bridge's HTTP API under /api/v2 (seed 004). */
  private readonly api: HttpApi;
  private readonly logger: Logger;
  /** What strangers can make this server log, bounded. */
  private readonly strangerLog: LogLimiter;
  private readonly limits: ConnectionLimits;
  /** Every answer's unread bound and write timeout. */
  private readonly answers: AnswerGuard;
  private readonly webRoot: string;
  /** Every connection to the port, and those not authenticated yet (oldest first) with their deadline. */
  private readonly connections = new Set<Socket>();
  private readonly unauthenticated = new Map<Socket, NodeJS.Timeout>();
  /** Where each connection's caller runs (CallerOrigins), settled before its first request is served. */
  private readonly origins = new WeakMap<Socket, { cap: Grant | undefined; settled: Promise<void> | undefined }>();
  /** Connections of scoped grants, by grant (its pane), counted once each. */
  private readonly scopedSockets = new GrantBudget<Socket>(MAX_HTTP_CONNECTIONS_PER_GRANT, MAX_SCOPED_HTTP_CONNECTIONS);
  private hosts = new Set<string>();
  address: { host: string; port: number } | undefined;

  constructor(private readonly options: DashboardServerOptions) {
    this.logger = options.logger ?? silentLogger;
    this.strangerLog = new LogLimiter(this.logger);
    this.limits = { ...DEFAULT_CONNECTION_LIMITS, ...options.limits };
    this.answers = new AnswerGuard({ ...DEFAULT_ANSWER_LIMITS, ...options.answers }, this.strangerLog);
    this.access = new DashboardAccess(options.authenticate);
    this.dispatcher = new Dispatcher({ logger: this.logger, handlers: options.handlers, checkResults: options.checkResults });
    this.webRoot = options.webRoot ?? defaultWebRoot();
    this.api = createHttpApi({
      runs: bridgeRuns(options.services),
      operations: operationsPort(options.services, this.dispatcher.handlers, this.logger),
      hosts: () => this.hosts,
      authenticate: (req) => {
        const grant = this.apiGrant(req);
        if (grant) this.admitGrant(req.socket, grant);
        return grant;
      },
      logger: this.logger,
    });
    this.server.on('connection', (socket: Socket) => this.admit(socket));
    this.server.on('upgrade', (req, socket, head) => this.upgrade(req, socket, head));
    this.server.on('clientError', (_err, socket) => socket.destroy());
  }

  /** Connections dropped for leaving too much of an answer unread, or reading none of it for the write timeout. */
  get answerDrops(): Readonly<Record<DropReason, number>> {
    return { ...this.answers.drops };
  }

  /** Connections to the dashboard's port now (HTTP and WebSocket), and those not authenticated yet. */
  get connectionCounts(): { all: number; unauthenticated: number } {
    return { all: this.connections.size, unauthenticated: this.unauthenticated.size };
  }

  /** A new connection: within the budgets, and on the clock until it shows a login. */
  private admit(socket: Socket): void {
    socket.on('error', () => socket.destroy());
    // Scoped grants' connections have budgets of their own (admitGrant): they never fill the owner's.
    if (this.connections.size - this.scopedSockets.size >= MAX_HTTP_CONNECTIONS) {
      this.strangerLog.log('info', 'dashboard: refused a connection over the limit', { limit: MAX_HTTP_CONNECTIONS });
      socket.destroy();
      return;
    }
    if (this.unauthenticated.size >= MAX_UNAUTHENTICATED_HTTP) {
      const oldest = this.unauthenticated.keys().next().value;
      this.strangerLog.log('info', 'dashboard: dropped the oldest unauthenticated connection to make room', { limit: MAX_UNAUTHENTICATED_HTTP });
      oldest?.destroy();
    }
    this.connections.add(socket);
    const deadline = setTimeout(() => {
      if (this.unauthenticated.has(socket)) socket.destroy();
    }, HTTP_AUTH_DEADLINE_MS);
    deadline.unref();
    this.unauthenticated.set(socket, deadline);
    socket.once('close', () => {
      this.connections.delete(socket);
      this.authenticated(socket);
      this.scopedSockets.release(socket);
    });
  }

  /** The most this connection's process may do (a program of a scoped pane), once known; undefined: no limit. */
  private capOf(socket: Socket): Grant | undefined {
    return this.origins.get(socket)?.cap;
  }

  /** Calls `serve` once the connection's origin is known (at once when it already is). */
  private afterOrigin(socket: Socket, serve: () => void): void {
    const settled = this.lookUpOrigin(socket);
    if (settled === undefined) serve();
    // A connection that went while its caller was looked up has nobody to answer.
    else
      void settled.then(() => {
        if (!socket.destroyed) serve();
      });
  }

  /**
   * Asks who is at the other end of `socket`, once, at its first request (an idle connection never
   * costs the daemon a look at /proc); resolves when known, undefined once it is.
   */
  private lookUpOrigin(socket: Socket): Promise<void> | undefined {
    const originOf = this.options.originOf;
    if (originOf === undefined) return undefined;
    const known = this.origins.get(socket);
    if (known) return known.settled;
    const origin: { cap: Grant | undefined; settled: Promise<void> | undefined } = { cap: undefined, settled: undefined };
    this.origins.set(socket, origin);
    origin.settled = originOf(socket).then(
      (cap) => {
        origin.cap = cap;
        origin.settled = undefined;
      },
      (err: unknown) => {
        // Never expected (every lookup step catches its own errors): the narrowest grant, not the token's.
        this.strangerLog.log('error', 'dashboard: could not tell which process is calling', { error: err instanceof Error ? err.message : String(err) });
        origin.cap = { owner: false, scopes: new Set() };
        origin.settled = undefined;
      },
    );
    return origin.settled;
  }

  /**
   * Counts a connection against its grant the first time it authenticates; throws LIMIT_EXCEEDED
   * when a scoped grant's budget is spent (the owner's never is).
   */
  private admitGrant(socket: Socket, grant: Grant): void {
    this.authenticated(socket);
    // A closed connection was released already: never count it.
    const refusal = socket.destroyed ? undefined : this.scopedSockets.admit(socket, grant);
    if (refusal === undefined) return;
    // Answered, then the connection goes: it holds no slot of anyone's.
    socket.once('drain', () => socket.destroy());
    setTimeout(() => socket.destroy(), 1_000).unref();
    throw new SwitchboardError('LIMIT_EXCEEDED', refusal);
  }

  /**
   * Who calls the HTTP API: a Bearer token, the owner's or a pane's own (whose scopes each route
   * checks, as JSON-RPC does: an agent asks as its pane), or the dashboard's login with its page key
   * (a page of the dashboard calling the API), which is the owner's.
   */
  private apiGrant(req: IncomingMessage): Grant | undefined {
    const auth = req.headers.authorization;
    const bearer = auth?.startsWith('Bearer ') ? this.options.authenticate(auth.slice('Bearer '.length)) : undefined;
    const grant = bearer ?? (this.access.allowed(req, true) ? OWNER_GRANT : undefined);
    // A program of a scoped pane gets no more than its pane, whatever token or login it shows.
    return grant === undefined ? undefined : narrowGrant(grant, this.capOf(req.socket));
  }

  /** The connection showed a login: it leaves the strangers' budget and their clock. */
  private authenticated(socket: Socket): void {
    clearTimeout(this.unauthenticated.get(socket));
    this.unauthenticated.delete(socket);
  }

  /** Listens on `host` (loopback only) and `port` (0: any free one; a taken one: the next free). */
  async listen(host: string, port: number): Promise<{ host: string; port: number }> {
    if (!isLoopbackHost(host)) throw new SwitchboardError('INVALID_PARAMS', `the dashboard listens on loopback only, not ${host}`);
    for (let attempt = 0; ; attempt++) {
      try {
        await new Promise<void>((resolve, reject) => {
          this.server.once('error', reject);
          this.server.listen(port === 0 ? 0 : port + attempt, host, () => {
            this.server.off('error', reject);
            resolve();
          });
        });
        break;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE' || port === 0 || attempt >= 20) throw err;
      }
    }
    const address = this.server.address();
    if (address === null || typeof address === 'string') throw new SwitchboardError('INTERNAL_ERROR', 'the dashboard server has no address');
    this.address = { host, port: address.port };
    this.hosts = allowedHosts(address.port);
    return this.address;
  }

  /** A fresh one-time login URL (good once, for ten minutes). */
  loginUrl(): string {
    if (!this.address) throw new SwitchboardError('INTERNAL_ERROR', 'the dashboard is not listening');
    const host = this.address.host.includes(':') ? `[${this.address.host}]` : this.address.host;
    return `http://${host}:${this.address.port}/login?code=${this.access.newLoginCode()}`;
  }

  /** Open WebSockets (JSON-RPC and pane terminals) of every browser. */
  get clientCount(): number {
    return this.wss?.clients.size ?? 0;
  }

  /** Ends every browser's sockets (they reconnect): after the daemon rotates what they may see, and in tests of reconnection. */
  disconnectClients(): void {
    for (const client of this.wss?.clients ?? []) client.terminate();
  }

  /**
   * The WebSocket server, made at the first upgrade: ws (with the https, tls and zlib modules it
   * requires) is loaded then, not in a daemon no browser has opened. A CommonJS package, so
   * synchronously.
   */
  private sockets(): WebSocketServer {
    if (this.wss) return this.wss;
    const { WebSocketServer: Server } = createRequire(import.meta.url)('ws') as typeof Ws;
    // The first subprotocol offered ('switchboard') is chosen; the key rides in the second.
    this.wss = new Server({ noServer: true, maxPayload: Math.max(this.limits.maxRequestBytes, MAX_INPUT_FRAME), handleProtocols: (offered) => (offered.has('switchboard') ? 'switchboard' : false) });
    return this.wss;
  }

  async close(): Promise<void> {
    this.strangerLog.flush();
    this.answers.close();
    for (const timer of this.unauthenticated.values()) clearTimeout(timer);
    for (const client of this.wss?.clients ?? []) client.terminate();
    this.wss?.close();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private request(req: IncomingMessage, res: ServerResponse): void {
    this.afterOrigin(req.socket, () => this.serve(req, res));
  }

  private serve(req: IncomingMessage, res: ServerResponse): void {
    this.answers.watch(res);
    try {
      this.route(req, res);
    } catch (err) {
      // A request this server cannot even read (a malformed URL or escape) is the client's mistake.
      this.strangerLog.log('debug', 'bad request', { error: (err as Error).message });
      if (!res.headersSent) this.refuse(res, 400, 'bad request');
      else res.destroy();
    }
  }

  private route(req: IncomingMessage, res: ServerResponse): void {
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) res.setHeader(name, value);
    // The agent bridge's API answers in its own error shape, after the same Host, Origin and login checks.
    if (this.api.handle(req, res)) return;
    if (!hostAllowed(req, this.hosts)) return this.refuse(res, 403, 'host not allowed');
    // A page on another site must not read or act through this one, even with the cookie.
    if (!originAllowed(req, this.hosts, false)) return this.refuse(res, 403, 'origin not allowed');
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname === '/mcp') return this.mcp(req, res);
    if (req.method !== 'GET' && req.method !== 'HEAD') return this.refuse(res, 405, 'method not allowed');
    if (url.pathname === '/login') return this.login(url, req, res);
    const apiCall = url.pathname.startsWith('/api/');
    // The page key travels in a header only: a URL ends up in history, logs and Referer headers.
    if (url.searchParams.has('key')) return this.refuse(res, 400, 'the page key goes in the x-switchboard-key header, never in the URL');
    // The dashboard is the owner's full control: never for a program of a scoped pane, whatever it shows.
    if (this.capOf(req.socket) !== undefined) return this.refuse(res, 403, 'the dashboard is not for programs in an agent pane');
    // The page itself needs the cookie only (it brings the key); what acts or reads data needs the key too.
    if (!this.access.allowed(req, apiCall)) return this.refuse(res, 401, 'not logged in: open the login link `switchboard dashboard` prints');
    this.authenticated(req.socket);
    if (url.pathname === '/api/check') {
      res.writeHead(204);
      res.end();
      return;
    }
    const exportMatch = /^\/api\/sessions\/([^/]+)\/export$/.exec(url.pathname);
    if (exportMatch?.[1] !== undefined) {
      void this.exportSession(decodeURIComponent(exportMatch[1]), res);
      return;
    }
    if (apiCall) return this.refuse(res, 404, 'no such endpoint');
    serveStatic(this.webRoot, url.pathname, res, req.method === 'HEAD');
  }

  /**
   * MCP's Streamable HTTP transport: a Bearer token, the owner's or an agent pane's own (an agent
   * asks as its pane), after the Host and Origin checks every request passes.
   */
  private mcp(req: IncomingMessage, res: ServerResponse): void {
    const auth = req.headers.authorization;
    const token = auth?.startsWith('Bearer ') ? this.options.authenticate(auth.slice('Bearer '.length)) : undefined;
    if (!token) {
      res.writeHead(401, { 'content-type': 'text/plain; charset=utf-8', 'www-authenticate': 'Bearer' });
      res.end('MCP needs the daemon\'s token (or a pane\'s) as a Bearer header\n');
      return;
    }
    const grant = narrowGrant(token, this.capOf(req.socket));
    try {
      this.admitGrant(req.socket, grant);
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      res.writeHead(429, { 'content-type': 'application/json', connection: 'close' });
      res.end(`${JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: RPC_CODE_BY_ERROR.LIMIT_EXCEEDED, message, data: { code: 'LIMIT_EXCEEDED' } } })}\n`);
      return;
    }
    void this.serveMcp(req, res, grant);
  }

  private async serveMcp(req: IncomingMessage, res: ServerResponse, grant: Grant): Promise<void> {
    let mcp: Awaited<ReturnType<typeof loadMcp>>;
    try {
      mcp = await loadMcp();
    } catch (err) {
      mcpModule = undefined;
      this.logger.error('the MCP server could not be loaded', { error: err instanceof Error ? err.message : String(err) });
      if (!res.headersSent) this.refuse(res, 500, 'the MCP server could not be loaded');
      return;
    }
    try {
      await mcp.handleMcpHttp(req, res, { dispatcher: this.dispatcher, services: this.options.services, grant, logger: this.logger });
    } catch (err) {
      this.logger.error('an MCP request failed', { error: err instanceof Error ? err.message : String(err) });
      if (!res.headersSent) this.refuse(res, 500, 'the MCP request failed');
      else res.end();
    }
  }

  private login(url: URL, req: IncomingMessage, res: ServerResponse): void {
    const login = this.access.redeem(url.searchParams.get('code'));
    if (login === undefined) return this.refuse(res, 401, 'this login link was used already or has expired: run `switchboard dashboard` for a new one');
    this.authenticated(req.socket);
    // The key travels in the fragment: the browser keeps it for the page and never sends it anywhere.
    res.writeHead(302, { location: `/#key=${login.key}`, 'set-cookie': `${SESSION_COOKIE}=${login.session}; HttpOnly; SameSite=Strict; Path=/` });
    res.end();
  }

  private async exportSession(sessionId: string, res: ServerResponse): Promise<void> {
    let write: Awaited<ReturnType<typeof sessionExport>>;
    try {
      write = await sessionExport(this.options.services, sessionId);
    } catch (err) {
      // A node's session its node could not be read for (gone, too slow): said before anything is sent.
      return this.refuse(res, 502, `the session's log could not be read: ${errorMessage(err)}`);
    }
    if (!write) return this.refuse(res, 404, `no such session: ${sessionId}`);
    res.writeHead(200, { 'content-type': 'application/x-ndjson; charset=utf-8', 'content-disposition': `attachment; filename="${sessionId.replace(/[^\w.-]/g, '_')}.jsonl"` });
    try {
      await write(res);
      res.end();
    } catch (err) {
      this.logger.warn('export failed', { session_id: sessionId, error: (err as Error).message });
      res.destroy();
    }
  }

  private refuse(res: ServerResponse, status: number, message: string): void {
    res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' });
    res.end(`${message}\n`);
  }

  private upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    // Node leaves an upgraded socket without an error listener: a reset must not become an uncaught error.
    socket.on('error', () => socket.destroy());
    this.afterOrigin(req.socket, () => this.serveUpgrade(req, socket, head));
  }

  private serveUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const reject = (status: number, message: string): void => {
      socket.end(`HTTP/1.1 ${status} ${http.STATUS_CODES[status] ?? ''}\r\ncontent-type: text/plain\r\nconnection: close\r\n\r\n${message}\n`);
    };
    try {
      if (!hostAllowed(req, this.hosts)) return reject(403, 'host not allowed');
      if (!originAllowed(req, this.hosts, true)) return reject(403, 'origin not allowed');
      // The dashboard's sockets are the owner's full control: never for a program of a scoped pane.
      if (this.capOf(req.socket) !== undefined) return reject(403, 'the dashboard is not for programs in an agent pane');
      if (!this.access.allowed(req, true)) return reject(401, 'not logged in');
      this.authenticated(req.socket);
      if (this.clientCount >= MAX_SOCKETS) return reject(503, 'too many dashboard connections');
      const url = new URL(req.url ?? '/', 'http://localhost');
      if (url.pathname === '/ws') {
        this.sockets().handleUpgrade(req, socket, head, (ws) => this.rpcSocket(ws));
        return;
      }
      const paneMatch = /^\/ws\/pane\/([^/]+)$/.exec(url.pathname);
      const terminal = paneMatch?.[1] !== undefined ? findPaneTerminal(this.options.services, decodeURIComponent(paneMatch[1])) : undefined;
      if (!terminal) return reject(404, 'no such pane');
      this.sockets().handleUpgrade(req, socket, head, (ws) => new PaneSocket(ws, terminal, this.logger));
    } catch (err) {
      this.strangerLog.log('debug', 'bad upgrade', { error: (err as Error).message });
      reject(400, 'bad request');
    }
  }

  private rpcSocket(ws: WebSocket): void {
    const deps: ConnectionDeps = { dispatcher: this.dispatcher, services: this.options.services, limits: this.limits, logger: this.logger, strangerLog: this.strangerLog };
    new RpcSocket(ws, deps, () => undefined);
  }
}
