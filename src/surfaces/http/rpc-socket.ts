/**
 * JSON-RPC over a WebSocket, one message per text frame: the same methods, parameters, errors,
 * notifications and connection limits as the TCP surface (docs/rpc.md; the limits are the shared
 * peer's, rpc/connection.ts). The browser proved who it is when the socket opened (session cookie
 * and page key), so requests carry no token; the server adds the daemon's before dispatching.
 * Requests start in the order they arrive, and answer when done.
 */
import type { WebSocket } from 'ws';
import { RpcPeer, type ConnectionDeps, type PeerTransport } from '../rpc/connection.js';

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

export class RpcSocket {
  private readonly peer: RpcPeer;

  constructor(ws: WebSocket, deps: ConnectionDeps & { token: string }, onClosed: () => void) {
    const transport: PeerTransport = {
      send: (json) => {
        if (ws.readyState !== ws.OPEN) return;
        ws.send(json, () => this.peer.drained());
      },
      get unreadBytes() {
        return ws.bufferedAmount;
      },
      pause: () => ws.pause(),
      resume: () => ws.resume(),
      close: (graceful) => (graceful ? ws.close(1001, 'server shutting down') : ws.terminate()),
      end: () => ws.close(1000),
    };
    this.peer = new RpcPeer(transport, deps, { authenticated: true, prepare: (message) => withToken(message, deps.token) }, onClosed);
    ws.on('message', (data: Buffer, isBinary) => {
      this.peer.receive([isBinary ? { kind: 'refused', reason: 'send JSON-RPC as text frames' } : { kind: 'message', data }]);
    });
    ws.on('close', () => this.peer.cleanup());
    ws.on('error', () => this.peer.cleanup());
  }

  close(reason: string, graceful = false): void {
    this.peer.close(reason, graceful);
  }
}
