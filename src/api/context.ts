import type { Disposable } from '../core/disposable.js';
import type { SessionLog } from '../logs/index.js';
import type { NotificationName, Notifications } from '../protocol/methods.js';
import type { Grant } from './authorize.js';
import type { Services } from './services.js';

/** Where a caller's notifications go (a socket, a WebSocket, an in-memory test double). */
export interface NotificationSink {
  notify<N extends NotificationName>(method: N, params: Notifications[N]): void;
  /** Bytes handed to the transport that the peer has not taken yet. */
  readonly backlogBytes: number;
  /** Runs `listener` each time the backlog drains. */
  onDrain(listener: () => void): Disposable;
}

/** Everything an operation needs besides its parameters: the services, and who calls. */
export interface OperationContext extends Services {
  /** The caller's own state: its subscriptions. */
  caller: CallerLike;
  /** Aborted when the caller goes away (its connection closed). */
  signal: AbortSignal;
  /** What the caller's credentials allow (the transport's authenticate step; the owner's when absent, as in-process). */
  grant?: Grant;
}

/** The per-caller state an operation can touch: its subscriptions. */
export interface CallerLike {
  subscribe(options: { paneId?: string; events: readonly ('output' | 'exit' | 'screen' | 'state')[]; replay: boolean }): string;
  logSubscribe(log: SessionLog, options: { history: boolean }): string;
  unsubscribe(id: string): void;
}
