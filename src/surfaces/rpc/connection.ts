import { setMaxListeners } from 'node:events';
import type { Socket } from 'node:net';
import { toDisposable } from '../../core/disposable.js';
import type { Logger } from '../../core/logger.js';
import type { LogLimiter } from '../../core/log-limiter.js';
import { Caller, type DaemonControl, type NotificationSink } from '../../api/index.js';
import type { PaneRegistry } from '../../pane/index.js';
import type { AgentCatalog } from '../../agents/index.js';
import type { LogService } from '../../logs/index.js';
import { LineFramer } from '../../protocol/framing.js';
import type { JsonRpcResponse } from '../../protocol/json-rpc.js';
import type { NotificationName, Notifications } from '../../protocol/methods.js';
import { errorResponse, type Dispatcher } from './dispatch.js';

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
  panes: PaneRegistry;
  agents: AgentCatalog;
  sessions: LogService;
  daemon: DaemonControl;
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

/** What a JSON-RPC peer needs of the transport under it (a stream of lines, or a WebSocket). */
export interface PeerTransport {
  /** Sends one message (serialized JSON, without a delimiter: the transport adds its own). */
  send(json: string): void;
  /** Bytes handed over that the client has not taken yet. */
  readonly unreadBytes: number;
  /** Stops reading the client's messages (backpressure), and starts again. */
  pause(): void;
  resume(): void;
  /** Closes: `graceful` lets replies already written reach the client first. */
  close(graceful: boolean): void;
  /** The client finished sending and has every reply: finish our side too. */
  end(): void;
}

/** One incoming unit: a message's bytes, one too large to take (counted, not kept), or one the transport refused (why). */
export type PeerInput = { kind: 'message'; data: Buffer } | { kind: 'oversize'; bytes: number } | { kind: 'refused'; reason: string };

type PauseReason = 'in-flight' | 'unread-replies';

export interface RpcPeerOptions {
  /** Already authenticated (the dashboard checked the browser at the upgrade): no timer, no small budget. */
  authenticated?: boolean;
  /** Rewrites each parsed message before dispatch (the dashboard adds the daemon's token). */
  prepare?: (message: unknown) => unknown;
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
export class RpcPeer {
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
  private closed = false;
  private authTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly transport: PeerTransport,
    private readonly deps: ConnectionDeps,
    private readonly options: RpcPeerOptions,
    private readonly onClosed: () => void,
  ) {
    this.authenticated = options.authenticated ?? false;
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
    this.caller = new Caller(deps.panes, sink, deps.sessions);
    if (!this.authenticated) {
      this.authTimer = setTimeout(() => {
        if (!this.authenticated) this.close('no authenticated request in time');
      }, deps.limits.unauthenticatedTimeoutMs);
    }
  }

  get isPaused(): boolean {
    return this.paused;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Messages from the client, in order. */
  receive(inputs: readonly PeerInput[]): void {
    if (this.closed) return;
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
    if (this.closed) return;
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

  /** The transport is gone. */
  cleanup(): void {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.authTimer);
    this.queue.length = 0;
    this.abort.abort();
    this.caller.dispose();
    this.drainListeners.clear();
    this.onClosed();
  }

  /** Handles queued messages while nothing asks to pause, then pauses or resumes reading to match. */
  private pump(): void {
    while (this.queue.length > 0 && this.pauseReasons.size === 0 && !this.closed) {
      const input = this.queue.shift() as PeerInput;
      if (input.kind === 'oversize') {
        this.send(errorResponse(null, 'INVALID_REQUEST', `invalid request: ${input.bytes} bytes exceeds the request size limit of ${this.deps.limits.maxRequestBytes} bytes`));
      } else if (input.kind === 'refused') {
        this.send(errorResponse(null, 'INVALID_REQUEST', `invalid request: ${input.reason}`));
      } else {
        this.handle(input.data);
      }
    }
    if (this.closed) return;
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
    if (this.options.prepare) message = this.options.prepare(message);
    // A batch holds as many requests as it has entries.
    const weight = Array.isArray(message) ? Math.max(1, message.length) : 1;
    this.inFlight += weight;
    if (this.inFlight >= this.deps.limits.maxInFlight) this.pauseReasons.add('in-flight');
    const ctx = { panes: this.deps.panes, agents: this.deps.agents, sessions: this.deps.sessions, daemon: this.deps.daemon, session: this.caller, signal: this.abort.signal };
    this.deps.dispatcher
      .handle(message, ctx, () => this.markAuthenticated())
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
    if (this.closed) return;
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

/**
 * One client over a byte stream (TCP, the local socket) speaking newline-delimited JSON-RPC: the
 * shared peer, plus line framing and the clock on a line left unfinished.
 */
export class RpcConnection {
  private readonly framer: LineFramer;
  private readonly peer: RpcPeer;
  private partialTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly socket: Socket,
    private readonly deps: ConnectionDeps,
    onClosed: () => void,
    onAuthenticated?: () => void,
  ) {
    this.framer = new LineFramer(deps.limits.maxRequestBytes);
    const transport: PeerTransport = {
      send: (json) => {
        if (!socket.destroyed) socket.write(`${json}\n`);
      },
      get unreadBytes() {
        return socket.writableLength;
      },
      pause: () => socket.pause(),
      resume: () => socket.resume(),
      close: (graceful) => {
        if (graceful) {
          socket.end();
          setTimeout(() => socket.destroy(), 1_000).unref();
        } else {
          socket.destroy();
        }
      },
      end: () => socket.end(),
    };
    this.peer = new RpcPeer(transport, deps, { onPumped: (paused) => this.armPartialTimer(paused), onAuthenticated }, () => {
      clearTimeout(this.partialTimer);
      onClosed();
    });
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => {
      if (this.peer.isClosed) return;
      this.peer.receive(this.framer.push(chunk).map((event) => (event.kind === 'oversize' ? event : { kind: 'message' as const, data: event.line })));
    });
    socket.on('drain', () => this.peer.drained());
    socket.on('end', () => this.peer.endOfInput());
    socket.on('error', (err) => this.peer.debug('connection error', { error: err.message }));
    socket.on('close', () => this.peer.cleanup());
  }

  get isClosed(): boolean {
    return this.peer.isClosed;
  }

  /** Closes the connection (see RpcPeer.close). */
  close(reason: string, graceful = false): void {
    this.peer.close(reason, graceful);
  }

  private armPartialTimer(paused: boolean): void {
    // A client cannot finish its line while we are not reading, so the clock only runs while we read.
    if (!this.framer.hasPartialLine || paused) {
      clearTimeout(this.partialTimer);
      this.partialTimer = undefined;
      return;
    }
    // The clock starts when a line starts and is not reset by more bytes of the same line.
    this.partialTimer ??= setTimeout(() => {
      if (this.framer.hasPartialLine && !this.peer.isPaused) this.close('request line not finished in time');
    }, this.deps.limits.partialLineTimeoutMs);
  }
}
