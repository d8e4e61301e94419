import { setMaxListeners } from 'node:events';
import type { Socket } from 'node:net';
import { toDisposable } from '../../core/disposable.js';
import type { Logger } from '../../core/logger.js';
import { Session, type DaemonControl, type NotificationSink } from '../../api/index.js';
import type { PaneRegistry } from '../../pane/index.js';
import type { AgentCatalog } from '../../agents/index.js';
import type { SessionService } from '../../sessions/index.js';
import { LineFramer, type FrameEvent } from '../../protocol/framing.js';
import type { JsonRpcResponse } from '../../protocol/json-rpc.js';
import type { NotificationName, Notifications } from '../../protocol/methods.js';
import { errorResponse, type Dispatcher } from './dispatch.js';

/** Per-connection limits and timeouts. */
export interface ConnectionLimits {
  /** Largest request line, in bytes. */
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
  sessions: SessionService;
  daemon: DaemonControl;
  limits: ConnectionLimits;
  logger: Logger;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Unread replies above this pause reading the client's requests until it catches up. */
const READ_PAUSE_OUTBOUND = 256 * 1024;
/** A client that has not authenticated yet may leave at most this much unread before it is dropped. */
const UNAUTHENTICATED_OUTBOUND_LIMIT = 64 * 1024;

type PauseReason = 'in-flight' | 'unread-replies';

/**
 * One client connection speaking newline-delimited JSON-RPC. Every bad input gets its error and
 * leaves the connection (and every other one) working; only clients that stall, never read, or
 * never authenticate are disconnected.
 *
 * Backpressure: complete lines wait in a queue and are handled only while nothing asks to pause
 * (too many requests in flight, or replies the client has not read). While paused, the socket is
 * not read, so a client can never make the daemon buffer more than one read's worth of requests or
 * a bounded amount of replies.
 */
export class RpcConnection {
  private readonly framer: LineFramer;
  private readonly session: Session;
  private readonly abort = new AbortController();
  private readonly drainListeners = new Set<() => void>();
  private readonly queue: FrameEvent[] = [];
  private readonly pauseReasons = new Set<PauseReason>();
  private socketPaused = false;
  private inputEnded = false;
  private inFlight = 0;
  private authenticated = false;
  private closed = false;
  private authTimer: NodeJS.Timeout | undefined;
  private partialTimer: NodeJS.Timeout | undefined;
  private readonly onClosed: () => void;

  constructor(
    private readonly socket: Socket,
    private readonly deps: ConnectionDeps,
    onClosed: () => void,
  ) {
    this.onClosed = onClosed;
    this.framer = new LineFramer(deps.limits.maxRequestBytes);
    // Every pending request listens for the connection going away; the in-flight limit bounds them.
    setMaxListeners(0, this.abort.signal);
    const sink: NotificationSink = {
      notify: (method, params) => this.notify(method, params),
      get backlogBytes() {
        return socket.writableLength;
      },
      onDrain: (listener) => {
        this.drainListeners.add(listener);
        return toDisposable(() => this.drainListeners.delete(listener));
      },
    };
    this.session = new Session(deps.panes, sink, deps.sessions);
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.receive(chunk));
    socket.on('drain', () => {
      this.pauseReasons.delete('unread-replies');
      this.pump();
      for (const listener of [...this.drainListeners]) listener();
    });
    socket.on('end', () => {
      // The client finished sending (half-close): answer what is pending, then close our side.
      this.inputEnded = true;
      this.pump();
    });
    socket.on('error', (err) => deps.logger.debug('connection error', { error: err.message }));
    socket.on('close', () => this.cleanup());
    this.authTimer = setTimeout(() => {
      if (!this.authenticated) this.close('no authenticated request in time');
    }, deps.limits.unauthenticatedTimeoutMs);
  }

  /**
   * Closes the connection. `graceful` lets replies already written reach the client first (used
   * on shutdown); otherwise the socket is dropped at once (used against misbehaving clients).
   */
  close(reason: string, graceful = false): void {
    if (this.closed) return;
    this.deps.logger.debug('closing connection', { reason });
    if (graceful) {
      this.socket.end();
      setTimeout(() => this.socket.destroy(), 1_000).unref();
    } else {
      this.socket.destroy();
    }
    this.cleanup();
  }

  private receive(chunk: Buffer): void {
    if (this.closed) return;
    this.queue.push(...this.framer.push(chunk));
    this.pump();
  }

  /** Handles queued lines while nothing asks to pause, then pauses or resumes reading to match. */
  private pump(): void {
    while (this.queue.length > 0 && this.pauseReasons.size === 0 && !this.closed) {
      const event = this.queue.shift() as FrameEvent;
      if (event.kind === 'oversize') {
        this.send(errorResponse(null, 'INVALID_REQUEST', `invalid request: ${event.bytes} bytes exceeds the request size limit of ${this.deps.limits.maxRequestBytes} bytes`));
      } else {
        this.handleLine(event.line);
      }
    }
    if (this.closed) return;
    const pause = this.pauseReasons.size > 0 || this.queue.length > 0;
    if (pause && !this.socketPaused) this.socket.pause();
    if (!pause && this.socketPaused) this.socket.resume();
    this.socketPaused = pause;
    this.armPartialTimer();
    if (this.inputEnded && this.inFlight === 0 && this.queue.length === 0) this.socket.end();
  }

  private armPartialTimer(): void {
    // A client cannot finish its line while we are not reading, so the clock only runs while we read.
    if (!this.framer.hasPartialLine || this.socketPaused) {
      clearTimeout(this.partialTimer);
      this.partialTimer = undefined;
      return;
    }
    // The clock starts when a line starts and is not reset by more bytes of the same line.
    this.partialTimer ??= setTimeout(() => {
      if (this.framer.hasPartialLine && !this.socketPaused) this.close('request line not finished in time');
    }, this.deps.limits.partialLineTimeoutMs);
  }

  private handleLine(line: Buffer): void {
    if (line.every((byte) => byte === 0x20 || byte === 0x09)) return;
    let message: unknown;
    try {
      message = JSON.parse(utf8.decode(line));
    } catch (err) {
      const detail = err instanceof TypeError ? 'not valid UTF-8' : (err as Error).message;
      this.send(errorResponse(null, 'PARSE_ERROR', `parse error: ${detail}`));
      return;
    }
    // A batch holds as many requests as it has entries.
    const weight = Array.isArray(message) ? Math.max(1, message.length) : 1;
    this.inFlight += weight;
    if (this.inFlight >= this.deps.limits.maxInFlight) this.pauseReasons.add('in-flight');
    const ctx = { panes: this.deps.panes, agents: this.deps.agents, sessions: this.deps.sessions, daemon: this.deps.daemon, session: this.session, signal: this.abort.signal };
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
  }

  private notify<N extends NotificationName>(method: N, params: Notifications[N]): void {
    this.writeLine(JSON.stringify({ jsonrpc: '2.0', method, params }));
  }

  private send(reply: JsonRpcResponse | JsonRpcResponse[]): void {
    this.writeLine(JSON.stringify(reply));
  }

  private writeLine(json: string): void {
    if (this.closed || this.socket.destroyed) return;
    const unread = this.socket.writableLength;
    if (unread > this.deps.limits.maxOutboundBytes || (!this.authenticated && unread > UNAUTHENTICATED_OUTBOUND_LIMIT)) {
      this.close('client is not reading its responses');
      return;
    }
    this.socket.write(`${json}\n`);
    if (this.socket.writableLength > READ_PAUSE_OUTBOUND) this.pauseReasons.add('unread-replies');
  }

  private cleanup(): void {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.authTimer);
    clearTimeout(this.partialTimer);
    this.queue.length = 0;
    this.abort.abort();
    this.session.dispose();
    this.drainListeners.clear();
    this.onClosed();
  }
}
