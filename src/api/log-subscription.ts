/** One caller's subscription to a session's log: seed 001's logStream, as notifications. */
import type { Disposable } from '../core/disposable.js';
import type { SessionLog } from '../logs/index.js';
import type { NotificationSink } from './notification-sink.js';
import { OUTPUT_BACKLOG_LIMIT } from './notification-sink.js';

/**
 * One caller's subscription to a session's log: batches as `log_message` notifications. While the
 * peer's backlog is over the limit, the next batch waits for it to drain, and the log's own bounded
 * queue takes the strain (a subscriber that stays behind is dropped with `log_dropped`).
 */
export class LogSubscription implements Disposable {
  private readonly stop: () => void;
  private waiting: { resolve: () => void; drain: Disposable } | undefined;
  private disposed = false;

  constructor(
    readonly id: string,
    log: SessionLog,
    private readonly sink: NotificationSink,
    history: boolean,
    /** Called once the subscription can deliver nothing more (dropped, or its session finished). */
    onEnded: () => void,
  ) {
    const session_id = log.id;
    this.stop = log.store.subscribe(
      async (batch) => {
        if (this.disposed) return;
        this.sink.notify('log_message', { subscription: id, session_id, messages: batch });
        if (this.sink.backlogBytes > OUTPUT_BACKLOG_LIMIT) await this.drained();
      },
      {
        history,
        onDropped: (reason) => {
          this.sink.notify('log_dropped', { subscription: id, session_id, reason, last_seq: log.store.stats().lastSeq });
          onEnded();
        },
        onFinished: () => {
          this.sink.notify('log_finished', { subscription: id, session_id });
          onEnded();
        },
      },
    );
  }

  dispose(): void {
    this.disposed = true;
    this.stop();
    this.release();
  }

  private drained(): Promise<void> {
    return new Promise((resolve) => {
      const drain = this.sink.onDrain(() => {
        if (this.sink.backlogBytes <= OUTPUT_BACKLOG_LIMIT / 2) this.release();
      });
      this.waiting = { resolve, drain };
    });
  }

  private release(): void {
    const waiting = this.waiting;
    this.waiting = undefined;
    waiting?.drain.dispose();
    waiting?.resolve();
  }
}

