/** One caller (one connection, whatever carries it) and its subscriptions to panes and session logs. */
import { randomBytes } from 'node:crypto';
import { SwitchboardError } from '../core/errors.js';
import type { Disposable } from '../core/disposable.js';
import type { SessionLog } from '../logs/index.js';
import type { CallerLike } from './context.js';
import type { NotificationSink } from './notification-sink.js';
import { LogSubscription } from './log-subscription.js';
import { NodeLogSubscription } from './node-log-subscription.js';
import { NodePaneSubscription } from './node-pane-subscription.js';
import { PaneSubscription, type PaneEventKind } from './pane-subscription.js';
import type { NodePaneEvent, NodePaneRef, RemotePanes } from './remote-panes.js';
import { RunSubscription, type RunFollow } from './run-subscription.js';
import type { Services } from './services.js';

export { OUTPUT_BACKLOG_LIMIT } from './notification-sink.js';

/** Subscriptions one caller may hold at once. */
const MAX_SUBSCRIPTIONS = 64;

type Held = PaneSubscription | NodePaneSubscription | LogSubscription | NodeLogSubscription | RunSubscription;

/** One caller's state (one connection): its subscriptions. Dispose it when the caller goes away. */
export class Caller implements CallerLike, Disposable {
  private readonly subscriptions = new Map<string, Held>();

  constructor(
    private readonly services: Pick<Services, 'panes' | 'logs'> & Partial<Pick<Services, 'nodePanes'>>,
    private readonly sink: NotificationSink,
  ) {}

  subscribe(options: { paneId?: string; events: readonly PaneEventKind[]; replay: boolean }): string {
    const id = this.newId();
    this.subscriptions.set(id, new PaneSubscription(id, this.services.panes, this.sink, new Set(options.events), options.paneId, options.replay, this.services.logs, this.services.nodePanes));
    return id;
  }

  /** Follows a pane on another host; resolves with the subscription's id once its node took it. */
  nodePaneSubscribe(ref: NodePaneRef, remote: RemotePanes, options: { events: readonly NodePaneEvent[]; replay: boolean }): Promise<string> {
    const id = this.newId();
    // An ended subscription (its pane or node gone) no longer counts against the connection's limit.
    const sub = new NodePaneSubscription(id, ref, this.sink, () => this.subscriptions.delete(id));
    return this.held(id, sub, () => sub.open(remote, options));
  }

  logSubscribe(log: SessionLog, options: { history: boolean }): string {
    const id = this.newId();
    // An ended subscription no longer counts against the connection's limit.
    this.subscriptions.set(id, new LogSubscription(id, log, this.sink, options.history, () => this.subscriptions.delete(id)));
    return id;
  }

  /** Follows a session's log on another host; resolves with the subscription's id once its node answered the first read. */
  nodeLogSubscribe(ref: NodePaneRef, remote: RemotePanes, options: { history: boolean }): Promise<string> {
    const id = this.newId();
    // An ended subscription (finished, or dropped) no longer counts against the connection's limit.
    const sub = new NodeLogSubscription(id, ref, this.sink, () => this.subscriptions.delete(id));
    return this.held(id, sub, () => sub.open(remote, options));
  }

  runSubscribe(runId: string, follow: RunFollow): Promise<string> {
    const id = this.newId();
    const sub = new RunSubscription(id, runId, this.sink, () => this.subscriptions.delete(id));
    return this.held(id, sub, () => sub.open(follow));
  }

  /** Holds `sub` under `id` while it opens (so it counts, and ends with the caller); one that does not open is let go. */
  private async held(id: string, sub: Held, open: () => Promise<void>): Promise<string> {
    this.subscriptions.set(id, sub);
    try {
      await open();
    } catch (err) {
      this.subscriptions.delete(id);
      sub.dispose();
      throw err;
    }
    return id;
  }

  unsubscribe(id: string): void {
    const sub = this.subscriptions.get(id);
    if (!sub) throw new SwitchboardError('INVALID_PARAMS', `no such subscription: ${id}`, { subscription: id });
    this.subscriptions.delete(id);
    sub.dispose();
  }

  dispose(): void {
    for (const sub of this.subscriptions.values()) sub.dispose();
    this.subscriptions.clear();
  }

  private newId(): string {
    if (this.subscriptions.size >= MAX_SUBSCRIPTIONS) {
      throw new SwitchboardError('LIMIT_EXCEEDED', `too many subscriptions on this connection (limit ${MAX_SUBSCRIPTIONS})`);
    }
    return `s${randomBytes(4).toString('hex')}`;
  }
}
