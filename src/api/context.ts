import type { Disposable } from '../core/disposable.js';
import type { PaneRegistry } from '../pane/index.js';
import type { AgentCatalog } from '../agents/index.js';
import type { SessionLog, LogService } from '../logs/index.js';
import type { InfoResult, NotificationName, Notifications } from '../protocol/methods.js';
import type { Grant } from './authorize.js';

/** Where a session's notifications go (a socket, a WebSocket, an in-memory test double). */
export interface NotificationSink {
  notify<N extends NotificationName>(method: N, params: Notifications[N]): void;
  /** Bytes handed to the transport that the peer has not taken yet. */
  readonly backlogBytes: number;
  /** Runs `listener` each time the backlog drains. */
  onDrain(listener: () => void): Disposable;
}

/** What operations may ask of the daemon that hosts them. */
export interface DaemonControl {
  info(): InfoResult;
  /** Where the daemon keeps its private files (log exports go under it). */
  readonly home: string;
  /** The most disk the exports folder may hold, in bytes: an export past it is refused or cut off. */
  readonly exportsMaxBytes: number;
  /** A fresh one-time login URL for the dashboard; INVALID_PARAMS when it is off. */
  dashboardLoginUrl(): string;
  /** Shuts the daemon down after the current response is sent. */
  requestShutdown(): void;
}

/** Everything an operation needs besides its parameters. */
export interface OperationContext {
  panes: PaneRegistry;
  agents: AgentCatalog;
  daemon: DaemonControl;
  /** Every session's log, and the agent panes' trackers. */
  sessions: LogService;
  session: CallerLike;
  /** Aborted when the caller goes away (its connection closed). */
  signal: AbortSignal;
  /** What the caller's token allows (the dispatcher sets it; the owner's when absent, as in-process). */
  grant?: Grant;
}

/** The per-caller state an operation can touch: its subscriptions. */
export interface CallerLike {
  subscribe(options: { paneId?: string; events: readonly ('output' | 'exit' | 'screen' | 'state')[]; replay: boolean }): string;
  logSubscribe(log: SessionLog, options: { history: boolean }): string;
  unsubscribe(id: string): void;
}
