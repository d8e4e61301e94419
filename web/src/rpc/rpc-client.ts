/**
 * JSON-RPC 2.0 over the dashboard's `/ws` socket: one message per text frame, requests matched to
 * replies by id, notifications handed to listeners by method. The socket reconnects by itself;
 * subscriptions live on the server's side of one connection, so whoever needs them re-creates
 * them in `onOpen`.
 */
import { Emitter, type Unsubscribe } from './emitter.js';
import { ReconnectingSocket, type ConnectionStatus } from './reconnecting-socket.js';
import type { MethodName, Methods, NotificationName, Notifications } from './wire.js';

/** A JSON-RPC error from the server, or the connection failing under a request. */
export class RpcError extends Error {
  override readonly name = 'RpcError';
  constructor(
    message: string,
    /** The JSON-RPC numeric code; 0 when the request never got an answer. */
    readonly code: number,
    /** The stable string code every surface shares (`PANE_NOT_FOUND`, ...), or `NOT_CONNECTED`. */
    readonly dataCode: string,
  ) {
    super(message);
  }
}

interface Pending {
  resolve: (result: unknown) => void;
  reject: (error: RpcError) => void;
  timer: number;
}

/** Long enough for an agent pane to reach its idle prompt (the server waits up to 90 s by default). */
/**
 * A board watch waits up to its `wait_ms` (20 s from teams/use-team-board.ts); a restart opens an
 * agent's pane; a report reads every worktree's changes first.
 */
const SLOW_METHODS: Partial<Record<MethodName, number>> = { create_pane: 180_000, kill: 30_000, remove: 30_000, run_cancel: 30_000, run_interrupt: 30_000, team_run_get: 45_000, team_run_end: 30_000, team_run_restart: 180_000, team_run_report: 120_000 };
const DEFAULT_TIMEOUT_MS = 20_000;

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

export class RpcClient {
  private readonly socket: ReconnectingSocket;
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private readonly notified = new Map<string, Emitter<unknown>>();

  constructor(url: string) {
    this.socket = new ReconnectingSocket(url, 'blob');
    this.socket.onMessage((event) => {
      if (typeof event.data === 'string') this.receive(event.data);
    });
    this.socket.onClose(() => {
      this.failPending('the connection to the daemon was lost');
    });
  }

  get status(): ConnectionStatus {
    return this.socket.status;
  }

  onStatus(listener: (status: ConnectionStatus) => void): Unsubscribe {
    return this.socket.onStatus(listener);
  }

  /** After every (re)connect: the moment to (re)load state and (re)subscribe. */
  onOpen(listener: () => void): Unsubscribe {
    return this.socket.onOpen(listener);
  }

  retryNow(): void {
    this.socket.retryNow();
  }

  onNotification<N extends NotificationName>(method: N, listener: (params: Notifications[N]) => void): Unsubscribe {
    let emitter = this.notified.get(method);
    if (!emitter) {
      emitter = new Emitter<unknown>();
      this.notified.set(method, emitter);
    }
    // The server is the one source of these params; their shape is the contract in wire.ts.
    return emitter.on(listener as (params: unknown) => void);
  }

  /** Calls a method; rejects with an RpcError (the server's, or NOT_CONNECTED / TIMEOUT). */
  call<M extends MethodName>(method: M, params: Methods[M]['params']): Promise<Methods[M]['result']> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      if (!this.socket.isOpen) {
        reject(new RpcError('not connected to the daemon', 0, 'NOT_CONNECTED'));
        return;
      }
      const timeoutMs = SLOW_METHODS[method] ?? DEFAULT_TIMEOUT_MS;
      const timer = window.setTimeout(() => {
        this.pending.delete(id);
        reject(new RpcError(`${method} got no answer within ${Math.round(timeoutMs / 1000)} s`, 0, 'TIMEOUT'));
      }, timeoutMs);
      this.pending.set(id, { resolve: resolve as (result: unknown) => void, reject, timer });
      this.socket.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
    });
  }

  dispose(): void {
    this.socket.stop();
    this.failPending('the dashboard closed its connection');
  }

  private receive(text: string): void {
    let message: unknown;
    try {
      message = JSON.parse(text);
    } catch {
      return;
    }
    // The server may batch replies; each element is handled like a lone message.
    for (const item of Array.isArray(message) ? (message as unknown[]) : [message]) {
      if (isRecord(item)) this.handle(item);
    }
  }

  private handle(message: Record<string, unknown>): void {
    if (typeof message.method === 'string' && message.id === undefined) {
      this.notified.get(message.method)?.fire(message.params);
      return;
    }
    if (typeof message.id !== 'number') return;
    const pending = this.pending.get(message.id);
    if (!pending) return;
    this.pending.delete(message.id);
    window.clearTimeout(pending.timer);
    if (isRecord(message.error)) {
      const { code, message: text, data } = message.error;
      const dataCode = isRecord(data) && typeof data.code === 'string' ? data.code : 'UNKNOWN';
      pending.reject(new RpcError(typeof text === 'string' ? text : 'request failed', typeof code === 'number' ? code : 0, dataCode));
    } else {
      pending.resolve(message.result);
    }
  }

  private failPending(reason: string): void {
    for (const [id, pending] of this.pending) {
      window.clearTimeout(pending.timer);
      pending.reject(new RpcError(reason, 0, 'NOT_CONNECTED'));
      this.pending.delete(id);
    }
  }
}

/** What to show for a failure: the server's message, or the error's own. */
export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}
