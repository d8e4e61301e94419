import { setMaxListeners } from 'node:events';
import { toDisposable } from '../../core/disposable.js';
import type { Logger } from '../../core/logger.js';
import type { LogLimiter } from '../../core/log-limiter.js';
import { Caller, type NotificationSink, type Services } from '../../api/index.js';
import type { JsonRpcResponse } from '../../protocol/json-rpc.js';
import type { NotificationName, Notifications } from '../../protocol/methods.js';
import type { MessageTransport, TransportInput, TransportReceiver } from '../../protocol/transport.js';
import type { RequestAuthentication } from './authenticate.js';
import { errorResponse, type DispatchConnection, type Dispatcher } from './dispatch.js';

/**
 * Per-connection limits and timeouts, the same for every transport that carries JSON-RPC: TCP,
 * the local socket, and the dashboard's `/ws`.
 */
export interface ConnectionLimits {
  /** Largest request (a line, or a WebSocket frame), in bytes. */
  maxRequestBytes: number;
  /** Requests of one connection running at once; past this the connection stops reading until some finish. */
  maxInFlight: number;
  /** A connection that has not made one authenticated request by then is closed. */
  unauthenticatedTimeoutMs: number;
  /** A request line begun but not finished by then closes the connection (slow or stuck clients). */
  partialLineTimeoutMs: number;
  /** Bytes waiting for a client that does not read; past this the connection is closed. */
  maxOutboundBytes: number;
}

export const DEFAULT_CONNECTION_LIMITS: ConnectionLimits = {
  maxRequestBytes: 4 * 1024 * 1024,
  maxInFlight: 64,
  unauthenticatedTimeoutMs: 10_000,
  partialLineTimeoutMs: 30_000,
  maxOutboundBytes: 64 * 1024 * 1024,
};

export interface ConnectionDeps {
  dispatcher: Dispatcher;
  /** The one service object, built by the daemon. */
  services: Services;
  limits: ConnectionLimits;
  logger: Logger;
  /** Where what an unauthenticated client causes is logged, within bounds (a stranger's doing). */
  strangerLog: LogLimiter;
}

/** Unread replies above this pause reading the client's requests until it catches up. */
const READ_PAUSE_OUTBOUND = 256 * 1024;
/** A client that has not authenticated yet may leave at most this much unread before it is dropped. */
const UNAUTHENTICATED_OUTBOUND_LIMIT = 64 * 1024;

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Why a connection's pending requests stop: made once. `abort()` without a reason builds a new
 * DOMException, stack and all, for every connection that closes (about 6% of the daemon's work
 * for one `tmux` launcher run, which opens and closes one); it is the same AbortError either way.
 */
const CONNECTION_CLOSED = new DOMException('the connection closed', 'AbortError');

/** One incoming unit (the transport's). */
export type PeerInput = TransportInput;

type PauseReason = 'in-flight' | 'unread-replies';

export interface RpcPeerOptions {
  /** How this connection's requests prove who sends them (a token in each, or proven when it opened). */
  authentication: RequestAuthentication;
  /** Called after each pump with whether reading is paused (the line transport's partial-line clock). */
  onPumped?: (paused: boolean) => void;
  /** Called once, when the first good token arrives. */
  onAuthenticated?: () => void;
}

/**
 * One client speaking JSON-RPC, whatever carries it. Every bad input gets its error and leaves the
 * connection (and every other one) working; only clients that stall, never read, or never
 * authenticate are disconnected.
 *
 * Backpressure: complete messages wait in a queue and are handled only while nothing asks to pause
 * (too many requests in flight, or replies the client has not read). While paused, the transport is
 * not read, so a client can never make the daemon buffer more than one read's worth of requests or
 * a bounded amount of replies.
 */
export class RpcPeer implements TransportReceiver {
  private readonly caller: Caller;
  private readonly abort = new AbortController();
  private readonly drainListeners = new Set<() => void>();
  private readonly queue: PeerInput[] = [];
  private readonly pauseReasons = new Set<PauseReason>();
  private paused = false;
  private inputEnded = false;
  private ended = false;
  private inFlight = 0;
  private authenticated: boolean;
  private gone = false;
  private authTimer: NodeJS.Timeout | undefined;
  /** What the dispatcher gets with each message: the context every request runs in (but its grant), and the authentication. */
  private readonly connection: DispatchConnection;

  constructor(
    private readonly transport: MessageTransport,
    private readonly deps: ConnectionDeps,
    private readonly options: RpcPeerOptions,
    private readonly onClosed: () => void,
  ) {
    this.authenticated = options.authentication.atConnect;
    // Every pending request listens for the connection going away; the in-flight limit bounds them.
    setMaxListeners(0, this.abort.signal);
    const sink: NotificationSink = {
      notify: (method, params) => this.notify(method, params),
      get backlogBytes() {
        return transport.unreadBytes;
      },
      onDrain: (listener) => {
        this.drainListeners.add(listener);
        return toDisposable(() => this.drainListeners.delete(listener));
      },
    };
    this.caller = new Caller(deps.services, sink);
    const { panes, agents, agentPanes, logs, structuredRuns, tmux, asks, daemon, bridge, teamPresets, teamRuns, nodePanes } = deps.services;
    this.connection = {
      context: { panes, agents, agentPanes, logs, structuredRuns, tmux, asks, daemon, bridge, teamPresets, teamRuns, nodePanes, caller: this.caller, signal: this.abort.signal },
      authentication: options.authentication,
      onAuthenticated: () => this.markAuthenticated(),
    };
    if (!this.authenticated) {
      this.authTimer = setTimeout(() => {
        if (!this.authenticated) this.close('no authenticated request in time');
      }, deps.limits.unauthenticatedTimeoutMs);
    }
    transport.start(this);
  }

  get isPaused(): boolean {
    return this.paused;
  }

  get isClosed(): boolean {
    return this.gone;
  }

  /** Messages from the client, in order. */
  receive(inputs: readonly PeerInput[]): void {
    if (this.gone) return;
    this.queue.push(...inputs);
    this.pump();
  }

  /** The client finished sending (half-close): answer what is pending, then close our side. */
  endOfInput(): void {
    this.inputEnded = true;
    this.pump();
  }

  /** The transport took some of what was unread. */
  drained(): void {
    if (this.transport.unreadBytes <= READ_PAUSE_OUTBOUND) this.pauseReasons.delete('unread-replies');
    this.pump();
    for (const listener of [...this.drainListeners]) listener();
  }

  /**
   * Closes the connection. `graceful` lets replies already written reach the client first (used
   * on shutdown); otherwise it is dropped at once (used against misbehaving clients).
   */
  close(reason: string, graceful = false): void {
    if (this.gone) return;
    this.debug('closing connection', { reason });
    this.transport.close(graceful);
    this.cleanup();
  }

  get isAuthenticated(): boolean {
    return this.authenticated;
  }

  /** A debug line about this connection; a stranger's go through the bounded log. */
  debug(message: string, fields: Record<string, unknown>): void {
    if (this.authenticated) this.deps.logger.debug(message, fields);
    else this.deps.strangerLog.log('debug', message, fields);
  }

  /** The transport is gone (closed by either end, or failed). */
  closed(error?: Error): void {
    if (error && !this.gone) this.debug('connection error', { error: error.message });
    this.cleanup();
  }

  /** Lets go of everything this connection holds. */
  private cleanup(): void {
    if (this.gone) return;
    this.gone = true;
    clearTimeout(this.authTimer);
    this.queue.length = 0;
    this.abort.abort(CONNECTION_CLOSED);
    this.caller.dispose();
    this.drainListeners.clear();
    this.onClosed();
  }

  /** Handles queued messages while nothing asks to pause, then pauses or resumes reading to match. */
  private pump(): void {
    while (this.queue.length > 0 && this.pauseReasons.size === 0 && !this.gone) {
      const input = this.queue.shift() as PeerInput;
      if (input.kind === 'oversize') {
        this.send(errorResponse(null, 'INVALID_REQUEST', `invalid request: ${input.bytes} bytes exceeds the request size limit of ${this.deps.limits.maxRequestBytes} bytes`));
      } else if (input.kind === 'refused') {
        this.send(errorResponse(null, 'INVALID_REQUEST', `invalid request: ${input.reason}`));
      } else {
        this.handle(input.data);
      }
    }
    if (this.gone) return;
    const pause = this.pauseReasons.size > 0 || this.queue.length > 0;
    if (pause && !this.paused) this.transport.pause();
    if (!pause && this.paused) this.transport.resume();
    this.paused = pause;
    this.options.onPumped?.(pause);
    if (this.inputEnded && !this.ended && this.inFlight === 0 && this.queue.length === 0) {
      this.ended = true;
      this.transport.end();
    }
  }

  private handle(data: Buffer): void {
    if (data.every((byte) => byte === 0x20 || byte === 0x09)) return;
    let message: unknown;
    try {
      message = JSON.parse(utf8.decode(data));
    } catch (err) {
      const detail = err instanceof TypeError ? 'not valid UTF-8' : (err as Error).message;
      this.send(errorResponse(null, 'PARSE_ERROR', `parse error: ${detail}`));
      return;
    }
    // A batch holds as many requests as it has entries.
    const weight = Array.isArray(message) ? Math.max(1, message.length) : 1;
    this.inFlight += weight;
    if (this.inFlight >= this.deps.limits.maxInFlight) this.pauseReasons.add('in-flight');
    this.deps.dispatcher
      .handle(message, this.connection)
      .then(({ reply }) => {
        if (reply !== undefined) this.send(reply);
      })
      .catch((err: unknown) => {
        this.deps.logger.error('dispatch failed', { error: String(err) });
        this.send(errorResponse(null, 'INTERNAL_ERROR', 'internal error'));
      })
      .finally(() => {
        this.inFlight -= weight;
        if (this.inFlight < this.deps.limits.maxInFlight / 2) this.pauseReasons.delete('in-flight');
        this.pump();
      });
  }

  /** The token checked out (before the request ran): this client may stay connected. */
  private markAuthenticated(): void {
    if (this.authenticated) return;
    this.authenticated = true;
    clearTimeout(this.authTimer);
    this.options.onAuthenticated?.();
  }

  private notify<N extends NotificationName>(method: N, params: Notifications[N]): void {
    this.write(JSON.stringify({ jsonrpc: '2.0', method, params }));
  }

  private send(reply: JsonRpcResponse | JsonRpcResponse[]): void {
    this.write(JSON.stringify(reply));
  }

  private write(json: string): void {
    if (this.gone) return;
    if (this.overOutboundLimit()) {
      this.close('client is not reading its responses');
      return;
    }
    this.transport.send(json);
    // One reply can be large (a batch of get_text): past the limit, it is dropped with the
    // connection rather than held for a client that is not reading.
    if (this.overOutboundLimit()) {
      this.close('client is not reading its responses');
      return;
    }
    if (this.transport.unreadBytes > READ_PAUSE_OUTBOUND) this.pauseReasons.add('unread-replies');
  }

  private overOutboundLimit(): boolean {
    const unread = this.transport.unreadBytes;
    return unread > this.deps.limits.maxOutboundBytes || (!this.authenticated && unread > UNAUTHENTICATED_OUTBOUND_LIMIT);
  }
}

