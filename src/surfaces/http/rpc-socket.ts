/**
 * JSON-RPC over a WebSocket, one message per text frame: the same methods, parameters, errors,
 * notifications and connection limits as the TCP surface (docs/rpc.md; the limits are the shared
 * peer's, rpc/peer.ts). The browser proved who it is when the socket opened (session cookie and
 * page key): its requests are the owner's and carry no token (rpc/authenticate.ts). Requests
 * start in the order they arrive, and answer when done.
 */
import type { WebSocket } from 'ws';
import type { MessageTransport, TransportReceiver } from '../../protocol/transport.js';
import { provenAtConnect } from '../rpc/authenticate.js';
import { RpcPeer, type ConnectionDeps } from '../rpc/peer.js';

/** A WebSocket as a message transport: text frames are messages, a binary frame is refused. */
class WebSocketTransport implements MessageTransport {
  private receiver: TransportReceiver | undefined;

  constructor(private readonly ws: WebSocket) {}

  start(receiver: TransportReceiver): void {
    this.receiver = receiver;
    this.ws.on('message', (data: Buffer, isBinary) => {
      receiver.receive([isBinary ? { kind: 'refused', reason: 'send JSON-RPC as text frames' } : { kind: 'message', data }]);
    });
    this.ws.on('close', () => receiver.closed());
    this.ws.on('error', (err) => receiver.closed(err));
  }

  send(json: string): void {
    if (this.ws.readyState !== this.ws.OPEN) return;
    this.ws.send(json, () => this.receiver?.drained());
  }

  get unreadBytes(): number {
    return this.ws.bufferedAmount;
  }

  pause(): void {
    this.ws.pause();
  }

  resume(): void {
    this.ws.resume();
  }

  close(graceful: boolean): void {
    if (graceful) this.ws.close(1001, 'server shutting down');
    else this.ws.terminate();
  }

  end(): void {
    this.ws.close(1000);
  }
}

export class RpcSocket {
  private readonly peer: RpcPeer;

  constructor(ws: WebSocket, deps: ConnectionDeps, onClosed: () => void) {
    this.peer = new RpcPeer(new WebSocketTransport(ws), deps, { authentication: provenAtConnect() }, onClosed);
  }

  close(reason: string, graceful = false): void {
    this.peer.close(reason, graceful);
  }
}
