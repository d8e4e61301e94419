/**
 * A session's log, live, for one view: subscribes with history on every (re)connect and after
 * being dropped for falling behind, and keeps only messages past the last seq seen, so a
 * reconnect loses nothing and shows nothing twice.
 */
import type { Unsubscribe } from '../rpc/emitter.js';
import { errorMessage, RpcError, type RpcClient } from '../rpc/rpc-client.js';
import type { LogMessage } from '../rpc/wire.js';
import { LogModel, type LogItem } from './log-model.js';

export interface FeedSnapshot {
  items: readonly LogItem[];
  hidden: number;
  finished: boolean;
}

export class SessionFeed {
  private readonly model = new LogModel();
  private lastSeq = 0;
  private finished = false;
  private subscription: string | undefined;
  private snapshot: FeedSnapshot = { items: [], hidden: 0, finished: false };
  private readonly listeners = new Set<() => void>();
  private readonly undo: Unsubscribe[];
  private disposed = false;

  constructor(
    private readonly rpc: RpcClient,
    private readonly sessionId: string,
    private readonly report: (message: string) => void,
  ) {
    this.undo = [
      rpc.onOpen(() => void this.start()),
      // Matched by session, not subscription id: batches can arrive before the subscribe reply.
      rpc.onNotification('log_message', (batch) => {
        if (batch.session_id === sessionId) this.receive(batch.messages);
      }),
      rpc.onNotification('log_finished', (end) => {
        if (end.session_id !== sessionId) return;
        this.finished = true;
        this.publish();
      }),
      rpc.onNotification('log_dropped', (drop) => {
        if (drop.session_id === sessionId && drop.subscription === this.subscription) void this.start();
      }),
    ];
    if (rpc.status.state === 'open') void this.start();
  }

  readonly subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  };

  readonly getSnapshot = (): FeedSnapshot => this.snapshot;

  dispose(): void {
    this.disposed = true;
    for (const u of this.undo) u();
    const subscription = this.subscription;
    this.subscription = undefined;
    // The connection may be gone already; then so is the subscription.
    if (subscription !== undefined && this.rpc.status.state === 'open') this.rpc.call('log_unsubscribe', { subscription }).catch(() => undefined);
  }

  private async start(): Promise<void> {
    try {
      const { subscription } = await this.rpc.call('log_subscribe', { session_id: this.sessionId, history: true });
      if (this.disposed) {
        await this.rpc.call('log_unsubscribe', { subscription });
        return;
      }
      this.subscription = subscription;
    } catch (error) {
      if (error instanceof RpcError && error.dataCode === 'NOT_CONNECTED') return;
      this.report(`Could not read the log of ${this.sessionId}: ${errorMessage(error)}`);
    }
  }

  private receive(messages: readonly LogMessage[]): void {
    const fresh = messages.filter((m) => m.seq > this.lastSeq);
    if (fresh.length === 0) return;
    this.lastSeq = fresh[fresh.length - 1]?.seq ?? this.lastSeq;
    this.model.push(fresh);
    this.publish();
  }

  private publish(): void {
    this.snapshot = { items: this.model.items, hidden: this.model.hidden, finished: this.finished };
    for (const listener of [...this.listeners]) listener();
  }
}
