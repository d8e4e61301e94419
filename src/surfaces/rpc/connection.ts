import type { Socket } from 'node:net';
import { toDisposable } from '../../core/disposable.js';
import type { Logger } from '../../core/logger.js';
import { Session, type DaemonControl, type NotificationSink } from '../../api/index.js';
import type { PaneRegistry } from '../../pane/index.js';
import { LineFramer } from '../../protocol/framing.js';
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
  daemon: DaemonControl;
  limits: ConnectionLimits;
  logger: Logger;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * One client connection speaking newline-delimited JSON-RPC. Every bad input gets its error and
 * leaves the connection (and every other one) working; only clients that stall, never read, or
 * never authenticate are disconnected.
 */
export class RpcConnection {
  private readonly framer: LineFramer;
  private readonly session: Session;
  private readonly abort = new AbortController();
  private readonly drainListeners = new Set<() => void>();
  private inFlight = 0;
  private paused = false;
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
    this.session = new Session(deps.panes, sink);
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.receive(chunk));
    socket.on('drain', () => {
      for (const listener of [...this.drainListeners]) listener();
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
    for (const event of this.framer.push(chunk)) {
      if (event.kind === 'oversize') {
        this.send(errorResponse(null, 'INVALID_REQUEST', `invalid request: ${event.bytes} bytes exceeds the request size limit of ${this.deps.limits.maxRequestBytes} bytes`));
        continue;
      }
      this.handleLine(event.line);
    }
    this.armPartialTimer();
  }

  private armPartialTimer(): void {
    if (!this.framer.hasPartialLine) {
      clearTimeout(this.partialTimer);
      this.partialTimer = undefined;
      return;
    }
    // The clock starts when a line starts and is not reset by more bytes of the same line.
    this.partialTimer ??= setTimeout(() => {
      if (this.framer.hasPartialLine) this.close('request line not finished in time');
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
    this.inFlight += 1;
    if (this.inFlight >= this.deps.limits.maxInFlight && !this.paused) {
      this.paused = true;
      this.socket.pause();
    }
    const ctx = { panes: this.deps.panes, daemon: this.deps.daemon, session: this.session, signal: this.abort.signal };
    this.deps.dispatcher
      .handle(message, ctx)
      .then(({ reply, authenticated }) => {
        if (authenticated && !this.authenticated) {
          this.authenticated = true;
          clearTimeout(this.authTimer);
        }
        if (reply !== undefined) this.send(reply);
      })
      .catch((err: unknown) => {
        this.deps.logger.error('dispatch failed', { error: String(err) });
        this.send(errorResponse(null, 'INTERNAL_ERROR', 'internal error'));
      })
      .finally(() => {
        this.inFlight -= 1;
        if (this.paused && this.inFlight < this.deps.limits.maxInFlight / 2 && !this.closed) {
          this.paused = false;
          this.socket.resume();
        }
      });
  }

  private notify<N extends NotificationName>(method: N, params: Notifications[N]): void {
    this.writeLine(JSON.stringify({ jsonrpc: '2.0', method, params }));
  }

  private send(reply: JsonRpcResponse | JsonRpcResponse[]): void {
    this.writeLine(JSON.stringify(reply));
  }

  private writeLine(json: string): void {
    if (this.closed || this.socket.destroyed) return;
    if (this.socket.writableLength > this.deps.limits.maxOutboundBytes) {
      this.close('client is not reading its responses');
      return;
    }
    this.socket.write(`${json}\n`);
  }

  private cleanup(): void {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.authTimer);
    clearTimeout(this.partialTimer);
    this.abort.abort();
    this.session.dispose();
    this.drainListeners.clear();
    this.onClosed();
  }
}
