import net from 'node:net';
import { lstatSync, rmSync } from 'node:fs';
import { SwitchboardError } from '../../core/errors.js';
import { silentLogger, type Logger } from '../../core/logger.js';
import { LogLimiter } from '../../core/log-limiter.js';
import type { Authenticate, Grant, Services } from '../../api/index.js';
import { isFilesystemSocket, restrictSocket, socketInUse } from '../../platform/index.js';
import { RpcConnection, DEFAULT_CONNECTION_LIMITS, type ConnectionDeps, type ConnectionLimits } from './connection.js';
import { Dispatcher, errorResponse, type AnyHandler } from './dispatch.js';
import { tokenInEveryRequest, type RequestAuthentication } from './authenticate.js';
import { GrantBudget } from './grant-budget.js';

export interface RpcServerOptions {
  /** The one service object (the daemon builds it). */
  services: Services;
  /** The authenticate step: a request's token to the caller's grant (the daemon's tokens). */
  authenticate: Authenticate;
  logger?: Logger;
  limits?: Partial<ConnectionLimits>;
  /** Most connections at once, over all transports, of the owner and of callers not yet authenticated. */
  maxConnections?: number;
  /** Most connections one scoped token (one pane's programs) holds at once; they never count against the owner's. */
  maxConnectionsPerGrant?: number;
  /** The most the process at the other end of a connection may do (api/CallerOrigins), whatever token it shows. */
  originOf?: (socket: net.Socket) => Promise<Grant | undefined>;
  /** Most connections on each transport (TCP, the local socket) that have not authenticated yet; past it the oldest of them is dropped. */
  maxUnauthenticated?: number;
  maxBatch?: number;
  /** Extra or replacement method implementations (tests use this to inject failures). */
  handlers?: Partial<Record<string, AnyHandler>>;
  /** Checks every result against its method's schema (tests). */
  checkResults?: boolean;
}

/** Loopback addresses only: Switchboard never listens where another machine could reach it. */
export function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

function isLoopbackPeer(address: string): boolean {
  const plain = address.startsWith('::ffff:') ? address.slice(7) : address;
  return isLoopbackHost(plain);
}

/** Connections over all transports, by default. */
const DEFAULT_MAX_CONNECTIONS = 256;
/**
 * Connections on each transport that have not yet presented a token. Strangers fill this budget,
 * never the daemon's whole one, and never another transport's: the owner always gets in.
 */
const DEFAULT_MAX_UNAUTHENTICATED = 32;
/**
 * Connections of one scoped grant (the programs of one pane), and of all scoped grants together.
 * They have budgets of their own, so no pane's token can lock the owner out.
 */
export const DEFAULT_MAX_CONNECTIONS_PER_GRANT = 32;
const DEFAULT_MAX_SCOPED_CONNECTIONS = 128;

type Transport = 'tcp' | 'local';

function listen(server: net.Server, options: net.ListenOptions): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (err: Error): void => {
      server.off('listening', onListening);
      reject(err);
    };
    const onListening = (): void => {
      server.off('error', onError);
      resolve();
    };
    server.once('error', onError);
    server.once('listening', onListening);
    server.listen(options);
  });
}

function lstatOrUndefined(file: string): ReturnType<typeof lstatSync> | undefined {
  try {
    return lstatSync(file);
  } catch {
    return undefined;
  }
}

/**
 * The JSON-RPC server: newline-delimited JSON-RPC 2.0 over TCP on a loopback address and over a
 * local socket (a Unix socket, or a named pipe on Windows), with one token for both.
 */
export class RpcServer {
  private readonly servers: net.Server[] = [];
  private readonly connections = new Set<RpcConnection>();
  /** Each transport's connections that have not authenticated yet, oldest first. */
  private readonly unauthenticated: Record<Transport, Set<RpcConnection>> = { tcp: new Set(), local: new Set() };
  private readonly dispatcher: Dispatcher;
  private readonly limits: ConnectionLimits;
  private readonly logger: Logger;
  /** What strangers can make this server log, bounded. */
  private readonly strangerLog: LogLimiter;
  private readonly maxConnections: number;
  private readonly maxUnauthenticated: number;
  /** Seed 000: every request carries the token. */
  private readonly authentication: RequestAuthentication;
  private readonly deps: ConnectionDeps;
  private socketPath: string | undefined;
  private readonly authenticate: Authenticate;
  private readonly originOf: ((socket: net.Socket) => Promise<Grant | undefined>) | undefined;
  /** Authenticated connections of scoped grants, by grant (its pane). */
  private readonly scoped: GrantBudget<RpcConnection>;

  constructor(options: RpcServerOptions) {
    this.logger = options.logger ?? silentLogger;
    this.strangerLog = new LogLimiter(this.logger);
    this.limits = { ...DEFAULT_CONNECTION_LIMITS, ...options.limits };
    this.maxConnections = options.maxConnections ?? DEFAULT_MAX_CONNECTIONS;
    this.maxUnauthenticated = Math.min(this.maxConnections, options.maxUnauthenticated ?? DEFAULT_MAX_UNAUTHENTICATED);
    this.dispatcher = new Dispatcher({ logger: this.logger, maxBatch: options.maxBatch, handlers: options.handlers, checkResults: options.checkResults });
    this.authentication = tokenInEveryRequest(options.authenticate);
    this.authenticate = options.authenticate;
    this.originOf = options.originOf;
    this.scoped = new GrantBudget(options.maxConnectionsPerGrant ?? DEFAULT_MAX_CONNECTIONS_PER_GRANT, DEFAULT_MAX_SCOPED_CONNECTIONS);
    this.deps = { dispatcher: this.dispatcher, services: options.services, limits: this.limits, logger: this.logger, strangerLog: this.strangerLog };
  }

  get connectionCount(): number {
    return this.connections.size;
  }

  get requestSizeLimit(): number {
    return this.limits.maxRequestBytes;
  }

  get connectionLimit(): number {
    return this.maxConnections;
  }

  /**
   * Listens on `host:port`, trying the next ports when it is taken (`port` 0 lets the OS choose).
   * Resolves with the port actually used.
   */
  async listenTcp(host: string, port: number, tryNextPorts = 100): Promise<{ host: string; port: number }> {
    if (!isLoopbackHost(host)) {
      throw new SwitchboardError('INVALID_PARAMS', `refusing to listen on ${host}: only loopback addresses are allowed`);
    }
    const last = port === 0 ? 0 : Math.min(65535, port + tryNextPorts);
    for (let candidate = port; candidate <= last; candidate++) {
      const server = this.createServer('tcp');
      try {
        await listen(server, { host, port: candidate, exclusive: true });
      } catch (err) {
        server.close();
        if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE' && candidate < last) continue;
        throw err;
      }
      this.watchErrors(server);
      this.servers.push(server);
      const address = server.address() as net.AddressInfo;
      // A busy port is normal (another daemon, another program): said once, as information.
      if (candidate !== port) this.logger.info('port busy, using the next free one', { requested: port, port: address.port });
      return { host, port: address.port };
    }
    throw new SwitchboardError('CONNECTION_FAILED', `no free port from ${port} to ${last}`);
  }

  /** Listens on a Unix socket (mode 0600) or named pipe; refuses if another daemon answers there. */
  async listenLocal(socketPath: string): Promise<void> {
    const fsSocket = isFilesystemSocket(socketPath);
    const existing = fsSocket ? lstatOrUndefined(socketPath) : undefined;
    if (existing) {
      // Only a stale socket is ever removed: never a file that merely sits at that path.
      if (!existing.isSocket()) throw new SwitchboardError('CONNECTION_FAILED', `${socketPath} exists and is not a socket; remove it or choose another path`);
      if (await socketInUse(socketPath)) {
        throw new SwitchboardError('CONNECTION_FAILED', `another daemon is listening on ${socketPath}`);
      }
      rmSync(socketPath, { force: true });
    }
    const server = this.createServer('local');
    // Create the socket without group/other permissions from the start, then make sure of it.
    const previous = fsSocket ? process.umask(0o177) : undefined;
    try {
      await listen(server, { path: socketPath });
    } finally {
      if (previous !== undefined) process.umask(previous);
    }
    if (fsSocket) restrictSocket(socketPath);
    this.socketPath = fsSocket ? socketPath : undefined;
    this.watchErrors(server);
    this.servers.push(server);
  }

  /** Removes the socket file now (a daemon exiting at once, on a second signal). */
  removeSocketFile(): void {
    if (this.socketPath) rmSync(this.socketPath, { force: true });
  }

  /** Stops listening, closes every connection and removes the socket file. */
  async close(): Promise<void> {
    const closing = this.servers.splice(0).map((server) => new Promise<void>((resolve) => server.close(() => resolve())));
    for (const connection of [...this.connections]) connection.close('server shutting down', true);
    await Promise.all(closing);
    if (this.socketPath) rmSync(this.socketPath, { force: true });
    this.strangerLog.flush();
  }

  /**
   * How `socket`'s requests are authenticated: the token, held to what the connecting process may
   * do (originOf), and a scoped grant admitted within its connection budget.
   */
  private authenticationFor(socket: net.Socket, connection: () => RpcConnection): RequestAuthentication {
    if (!this.originOf) return this.authentication;
    const originOf = this.originOf;
    const origin = (): Promise<Grant | undefined> =>
      originOf(socket).catch((err: unknown) => {
        // Never expected (every lookup step catches its own errors): the narrowest grant, not the token's.
        this.strangerLog.log('error', 'could not tell which process is calling', { error: err instanceof Error ? err.message : String(err) });
        return { owner: false, scopes: new Set<never>() } satisfies Grant;
      });
    const byToken = tokenInEveryRequest(this.authenticate, origin);
    return {
      atConnect: false,
      authenticate: async (params) => {
        const credentials = await byToken.authenticate(params);
        if ('refused' in credentials) return credentials;
        const refusal = this.admit(connection(), credentials.grant);
        return refusal === undefined ? credentials : { refused: refusal, code: 'LIMIT_EXCEEDED' };
      },
    };
  }

  /** Counts a connection against its grant's budget the first time it authenticates; why not, when that budget is spent. */
  private admit(connection: RpcConnection, grant: Grant): string | undefined {
    // A connection that closed while its caller was looked up was released already: never count it.
    return connection.isClosed ? undefined : this.scoped.admit(connection, grant);
  }

  private createServer(transport: Transport): net.Server {
    // Half-open: a client may finish sending (shutdown(SHUT_WR), `nc -N`) and still get its replies.
    return net.createServer({ pauseOnConnect: false, allowHalfOpen: true }, (socket) => this.accept(socket, transport));
  }

  /** Errors of a listening server (failed accepts under a flood of connections, say), logged within bounds. */
  private watchErrors(server: net.Server): void {
    server.on('error', (err) => this.strangerLog.log('error', 'server error', { error: err.message }));
  }

  private accept(socket: net.Socket, transport: Transport): void {
    socket.on('error', () => undefined);
    if (transport === 'tcp') {
      const peer = socket.remoteAddress;
      // A connection reset before it was accepted has no address any more: nobody to refuse or log.
      if (peer === undefined) {
        socket.destroy();
        return;
      }
      if (!isLoopbackPeer(peer)) {
        this.strangerLog.log('warn', 'refused a non-loopback connection', { peer });
        socket.destroy();
        return;
      }
    }
    const strangers = this.unauthenticated[transport];
    if (strangers.size >= this.maxUnauthenticated) {
      // The oldest stranger goes: a client that authenticates at once (as the owner's do) is never it.
      const oldest = strangers.values().next().value;
      this.strangerLog.log('info', 'dropped the oldest unauthenticated connection to make room', { transport, limit: this.maxUnauthenticated });
      oldest?.close('too many unauthenticated connections');
    }
    // Scoped grants' connections have budgets of their own (admit): they never fill the owner's.
    if (this.connections.size - this.scoped.size >= this.maxConnections) {
      this.strangerLog.log('info', 'refused a connection over the limit', { transport, limit: this.maxConnections });
      const reply = errorResponse(null, 'LIMIT_EXCEEDED', `too many connections (limit ${this.maxConnections})`);
      // Say why, then let go of the descriptor whether or not the client reads or closes.
      socket.end(`${JSON.stringify(reply)}\n`, () => socket.destroy());
      setTimeout(() => socket.destroy(), 1_000).unref();
      return;
    }
    const connection: RpcConnection = new RpcConnection(
      socket,
      this.deps,
      this.authenticationFor(socket, () => connection),
      () => {
        this.connections.delete(connection);
        strangers.delete(connection);
        this.scoped.release(connection);
      },
      () => strangers.delete(connection),
    );
    this.connections.add(connection);
    if (!connection.isClosed) strangers.add(connection);
  }
}
