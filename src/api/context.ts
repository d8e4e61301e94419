import type { SessionLog } from '../logs/index.js';
import type { Grant } from './authorize.js';
import type { Services } from './services.js';
import type { RunFollow } from './run-subscription.js';
import type { NodePaneEvent, NodePaneRef, RemotePanes } from './remote-panes.js';

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
  /** Follows a pane on another host (output, exit, screen, state); resolves with the subscription's id once its node took it. */
  nodePaneSubscribe(ref: NodePaneRef, remote: RemotePanes, options: { events: readonly NodePaneEvent[]; replay: boolean }): Promise<string>;
  logSubscribe(log: SessionLog, options: { history: boolean }): string;
  /** Follows a session's log on another host; resolves with the subscription's id once its first page was read. */
  nodeLogSubscribe(ref: NodePaneRef, remote: RemotePanes, options: { history: boolean }): Promise<string>;
  /** Follows a run of the agent bridge as `run_event` notifications; resolves with the subscription's id. */
  runSubscribe(runId: string, follow: RunFollow): Promise<string>;
  unsubscribe(id: string): void;
}
