import type { Disposable } from '../core/disposable.js';
import type { NotificationName, Notifications } from '../protocol/methods.js';

/** Above this many bytes waiting for the peer, output is dropped (and counted) instead of queued. */
export const OUTPUT_BACKLOG_LIMIT = 1024 * 1024;

/** Where a caller's notifications go (a socket, a WebSocket, an in-memory test double). */
export interface NotificationSink {
  notify<N extends NotificationName>(method: N, params: Notifications[N]): void;
  /** Bytes handed to the transport that the peer has not taken yet. */
  readonly backlogBytes: number;
  /** Runs `listener` each time the backlog drains. */
  onDrain(listener: () => void): Disposable;
}
