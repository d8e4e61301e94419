/**
 * A WebSocket that comes back: when it closes, a new one is opened after a backoff, until it is
 * stopped. Both of the dashboard's sockets (JSON-RPC and each pane's terminal) are one of these;
 * what to do after each (re)connect is their owners' business (`onOpen`).
 */
import { Backoff } from './backoff.js';
import { Emitter, type Unsubscribe } from './emitter.js';
import { socketProtocols } from './page-key.js';

export type ConnectionStatus =
  | { state: 'connecting' }
  | { state: 'open' }
  /** Closed; the next attempt starts at `retryAt` (ms since the epoch). */
  | { state: 'waiting'; retryAt: number }
  /** Stopped for good: disposed, or its owner said there is nothing more to read. */
  | { state: 'stopped' };

/** A connection that held this long was a real one: the next failure starts the backoff over. */
const STABLE_MS = 5_000;

export class ReconnectingSocket {
  private socket: WebSocket | undefined;
  private retryTimer: number | undefined;
  private openedAt = 0;
  private readonly backoff = new Backoff();
  private current: ConnectionStatus = { state: 'connecting' };
  private readonly statusChanged = new Emitter<ConnectionStatus>();
  private readonly opened = new Emitter<void>();
  private readonly closed = new Emitter<void>();
  private readonly received = new Emitter<MessageEvent>();
  private readonly retryWhenOnline = (): void => {
    this.retryNow();
  };

  constructor(
    private readonly url: string,
    private readonly binaryType: BinaryType = 'arraybuffer',
  ) {
    window.addEventListener('online', this.retryWhenOnline);
    this.connect();
  }

  get status(): ConnectionStatus {
    return this.current;
  }

  get isOpen(): boolean {
    return this.current.state === 'open';
  }

  onStatus(listener: (status: ConnectionStatus) => void): Unsubscribe {
    return this.statusChanged.on(listener);
  }

  /** After every successful (re)connect. */
  onOpen(listener: () => void): Unsubscribe {
    return this.opened.on(listener);
  }

  /** After every close of an open connection (before the retry is scheduled). */
  onClose(listener: () => void): Unsubscribe {
    return this.closed.on(listener);
  }

  onMessage(listener: (event: MessageEvent) => void): Unsubscribe {
    return this.received.on(listener);
  }

  /** Sends on the open connection; false (nothing sent) while there is none. */
  send(data: string | ArrayBufferView<ArrayBuffer> | ArrayBuffer): boolean {
    if (this.socket?.readyState !== WebSocket.OPEN) return false;
    this.socket.send(data);
    return true;
  }

  /** While waiting for a retry: try at once (a user clicked, the browser came back online). */
  retryNow(): void {
    if (this.current.state !== 'waiting') return;
    window.clearTimeout(this.retryTimer);
    this.connect();
  }

  /** Closes and never reconnects. */
  stop(): void {
    if (this.current.state === 'stopped') return;
    window.clearTimeout(this.retryTimer);
    window.removeEventListener('online', this.retryWhenOnline);
    const socket = this.socket;
    this.socket = undefined;
    this.setStatus({ state: 'stopped' });
    if (socket) {
      this.detach(socket);
      socket.close();
    }
  }

  private connect(): void {
    this.setStatus({ state: 'connecting' });
    const socket = new WebSocket(this.url, socketProtocols());
    socket.binaryType = this.binaryType;
    this.socket = socket;
    socket.onopen = () => {
      this.openedAt = Date.now();
      this.setStatus({ state: 'open' });
      this.opened.fire();
    };
    socket.onmessage = (event) => {
      this.received.fire(event);
    };
    // An error is always followed by close, which is where the retry is decided.
    socket.onclose = () => {
      const wasOpen = this.current.state === 'open';
      this.detach(socket);
      this.socket = undefined;
      if (wasOpen && Date.now() - this.openedAt >= STABLE_MS) this.backoff.reset();
      if (wasOpen) this.closed.fire();
      // A listener of `closed` may have stopped the socket for good.
      if (this.current.state === 'stopped') return;
      this.scheduleRetry();
    };
  }

  private scheduleRetry(): void {
    const delay = this.backoff.next();
    this.setStatus({ state: 'waiting', retryAt: Date.now() + delay });
    this.retryTimer = window.setTimeout(() => {
      this.connect();
    }, delay);
  }

  private detach(socket: WebSocket): void {
    socket.onopen = null;
    socket.onmessage = null;
    socket.onclose = null;
  }

  private setStatus(status: ConnectionStatus): void {
    this.current = status;
    this.statusChanged.fire(status);
  }
}
