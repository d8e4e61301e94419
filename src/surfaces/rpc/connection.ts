/**
 * One client over a byte stream (TCP, the local socket) speaking newline-delimited JSON-RPC: the
 * shared peer over a line transport, plus the clock on a line left unfinished.
 */
import type { Socket } from 'node:net';
import { LineTransport } from '../../protocol/line-transport.js';
import type { RequestAuthentication } from './authenticate.js';
import { RpcPeer, type ConnectionDeps } from './peer.js';

export { DEFAULT_CONNECTION_LIMITS, RpcPeer, type ConnectionDeps, type ConnectionLimits } from './peer.js';

export class RpcConnection {
  private readonly transport: LineTransport;
  private readonly peer: RpcPeer;
  private partialTimer: NodeJS.Timeout | undefined;

  constructor(
    socket: Socket,
    private readonly deps: ConnectionDeps,
    authentication: RequestAuthentication,
    onClosed: () => void,
    onAuthenticated?: () => void,
  ) {
    this.transport = new LineTransport(socket, { maxLineBytes: deps.limits.maxRequestBytes });
    this.peer = new RpcPeer(this.transport, deps, { authentication, onPumped: (paused) => this.armPartialTimer(paused), onAuthenticated }, () => {
      clearTimeout(this.partialTimer);
      onClosed();
    });
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
    if (!this.transport.hasPartialLine || paused) {
      clearTimeout(this.partialTimer);
      this.partialTimer = undefined;
      return;
    }
    // The clock starts when a line starts and is not reset by more bytes of the same line.
    this.partialTimer ??= setTimeout(() => {
      if (this.transport.hasPartialLine && !this.peer.isPaused) this.close('request line not finished in time');
    }, this.deps.limits.partialLineTimeoutMs);
  }
}
