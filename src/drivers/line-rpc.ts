/**
 * JSON-RPC over JSON lines, both ways, as `codex app-server` speaks it on its stdio: one message
 * per line, without the `"jsonrpc"` member. Switchboard's requests wait for their answers; the
 * other side's requests (approvals) go to one handler whose result or error is written back; its
 * notifications go to another. A line that is not a JSON object is passed to `onGarbage`, never
 * thrown: a CLI's stray output must not break the session.
 */
import { asRecord } from '../output/entry.js';

/** An error answer from the other side: its code and message, as sent. */
export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
    this.name = 'RpcError';
  }
}

/** The request could not be answered because the connection ended first. */
export class RpcClosedError extends Error {
  constructor(method: string) {
    super(`the connection closed before ${method} was answered`);
    this.name = 'RpcClosedError';
  }
}

export interface IncomingRequest {
  id: string | number;
  method: string;
  params: unknown;
}

export interface LineRpcHandlers {
  /** The other side asks; the result is written back, a thrown RpcError as its error (anything else as -32603). */
  onRequest: (request: IncomingRequest) => Promise<unknown>;
  onNotification: (method: string, params: unknown) => void;
  onGarbage?: (line: string) => void;
}

/** JSON-RPC's code for a method this side does not serve. */
export const METHOD_NOT_FOUND = -32601;
const INTERNAL_ERROR = -32603;

interface Pending {
  method: string;
  resolve: (result: unknown) => void;
  reject: (error: Error) => void;
}

export class LineRpc {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private closed = false;

  constructor(
    /** Writes one line; false when the other side can no longer read. */
    private readonly write: (line: string) => boolean,
    private readonly handlers: LineRpcHandlers,
  ) {}

  request(method: string, params?: unknown): Promise<unknown> {
    if (this.closed) return Promise.reject(new RpcClosedError(method));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { method, resolve, reject });
      if (!this.write(JSON.stringify(params === undefined ? { method, id } : { method, id, params }))) {
        this.pending.delete(id);
        reject(new RpcClosedError(method));
      }
    });
  }

  notify(method: string, params?: unknown): boolean {
    if (this.closed) return false;
    return this.write(JSON.stringify(params === undefined ? { method } : { method, params }));
  }

  /** One line from the other side. */
  receive(line: string): void {
    if (line.trim() === '') return;
    let message: Record<string, unknown> | undefined;
    try {
      message = asRecord(JSON.parse(line));
    } catch {
      message = undefined;
    }
    if (!message) {
      this.handlers.onGarbage?.(line);
      return;
    }
    const { id, method } = message;
    const hasId = typeof id === 'number' || typeof id === 'string';
    if (typeof method === 'string') {
      if (hasId) void this.answer({ id, method, params: message.params });
      else this.handlers.onNotification(method, message.params);
      return;
    }
    if (typeof id !== 'number') {
      this.handlers.onGarbage?.(line);
      return;
    }
    const waiting = this.pending.get(id);
    if (!waiting) return;
    this.pending.delete(id);
    const error = asRecord(message.error);
    if (error) waiting.reject(new RpcError(typeof error.code === 'number' ? error.code : INTERNAL_ERROR, typeof error.message === 'string' ? error.message : 'error', error.data));
    else waiting.resolve(message.result);
  }

  /** The connection is gone: every request still waiting is rejected, and nothing more is sent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const [id, waiting] of this.pending) {
      this.pending.delete(id);
      waiting.reject(new RpcClosedError(waiting.method));
    }
  }

  private async answer(request: IncomingRequest): Promise<void> {
    let reply: Record<string, unknown>;
    try {
      reply = { id: request.id, result: await this.handlers.onRequest(request) };
    } catch (err) {
      const error = err instanceof RpcError ? { code: err.code, message: err.message } : { code: INTERNAL_ERROR, message: err instanceof Error ? err.message : String(err) };
      reply = { id: request.id, error };
    }
    if (!this.closed) this.write(JSON.stringify(reply));
  }
}
