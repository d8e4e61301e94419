/**
 * JSON-RPC over a WebSocket, one message per text frame: the same methods, parameters, errors and
 * notifications as the TCP surface (docs/rpc.md). The browser proved who it is when the socket
 * opened (session cookie), so requests carry no token; the server adds the daemon's before
 * dispatching. Requests start in the order they arrive, and answer when done.
 */
import { setMaxListeners } from 'node:events';
import type { WebSocket } from 'ws';
import { toDisposable, type Disposable } from '../../core/disposable.js';
import type { Logger } from '../../core/logger.js';
import { Session, type DaemonControl, type NotificationSink, type OperationContext } from '../../api/index.js';
import type { AgentCatalog } from '../../agents/index.js';
import type { PaneRegistry } from '../../pane/index.js';
import type { SessionService } from '../../sessions/index.js';
import type { NotificationName, Notifications } from '../../protocol/methods.js';
import { Dispatcher, errorResponse } from '../rpc/dispatch.js';

export interface RpcSocketDeps {
  dispatcher: Dispatcher;
  token: string;
  panes: PaneRegistry;
  agents: AgentCatalog;
  sessions: SessionService;
  daemon: DaemonControl;
  logger: Logger;
}

/** Adds the token to each request of a message (a request or a batch); leaves anything else as it is for the dispatcher to refuse. */
function withToken(message: unknown, token: string): unknown {
  const add = (m: unknown): unknown => {
    if (typeof m !== 'object' || m === null || Array.isArray(m)) return m;
    const params = (m as { params?: unknown }).params;
    if (params !== undefined && (typeof params !== 'object' || params === null || Array.isArray(params))) return m;
    return { ...m, params: { ...(params as Record<string, unknown> | undefined), token } };
  };
  return Array.isArray(message) ? message.map(add) : add(message);
}

export class RpcSocket implements NotificationSink {
  private pending = 0;
  private readonly drainListeners = new Set<() => void>();
  private readonly session: Session;
  private readonly abort = new AbortController();

  constructor(
    private readonly ws: WebSocket,
    private readonly deps: RpcSocketDeps,
  ) {
    this.session = new Session(deps.panes, this, deps.sessions);
    // Every request under way listens to this signal (wait_for, prompts): many at once is normal.
    setMaxListeners(0, this.abort.signal);
    ws.on('message', (data, isBinary) => this.receive(data as Buffer, isBinary));
    ws.on('close', () => this.cleanup());
    ws.on('error', () => this.cleanup());
  }

  notify<N extends NotificationName>(method: N, params: Notifications[N]): void {
    this.send({ jsonrpc: '2.0', method, params });
  }

  /** Bytes handed to the socket that have not gone out yet. */
  get backlogBytes(): number {
    return this.pending;
  }

  onDrain(listener: () => void): Disposable {
    this.drainListeners.add(listener);
    return toDisposable(() => this.drainListeners.delete(listener));
  }

  private receive(data: Buffer, isBinary: boolean): void {
    if (isBinary) {
      this.send(errorResponse(null, 'INVALID_REQUEST', 'invalid request: send JSON-RPC as text frames'));
      return;
    }
    let message: unknown;
    try {
      message = JSON.parse(data.toString('utf8'));
    } catch (err) {
      this.send(errorResponse(null, 'PARSE_ERROR', `parse error: ${(err as Error).message}`));
      return;
    }
    const ctx: OperationContext = { panes: this.deps.panes, agents: this.deps.agents, sessions: this.deps.sessions, daemon: this.deps.daemon, session: this.session, signal: this.abort.signal };
    this.deps.dispatcher
      .handle(withToken(message, this.deps.token), ctx, () => undefined)
      .then(({ reply }) => {
        if (reply !== undefined) this.send(reply);
      })
      .catch((err: unknown) => {
        this.deps.logger.error('dispatch failed', { error: String(err) });
        this.send(errorResponse(null, 'INTERNAL_ERROR', 'internal error'));
      });
  }

  private send(message: unknown): void {
    if (this.ws.readyState !== this.ws.OPEN) return;
    const text = JSON.stringify(message);
    this.pending += text.length;
    this.ws.send(text, () => {
      this.pending -= text.length;
      for (const listener of [...this.drainListeners]) listener();
    });
  }

  private cleanup(): void {
    this.abort.abort();
    this.session.dispose();
    this.drainListeners.clear();
  }
}
