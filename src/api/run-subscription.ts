/** One caller's subscription to a run of the agent bridge: its events as `run_event` notifications. */
import type { Disposable } from '../core/disposable.js';
import type { WireRunEvent } from '../runs/index.js';
import { OUTPUT_BACKLOG_LIMIT, type NotificationSink } from './notification-sink.js';

/** Opens the ledger's subscription: the events after the caller's point, then live, `onEnd` after `done`. */
export type RunFollow = (listener: (event: WireRunEvent) => void, options: { onEnd: () => void; onError: (err: Error) => void }) => Promise<Disposable>;

/**
 * Delivers a run's events in order. Nothing goes out before the reply to `run_subscribe` (the first
 * events wait one turn of the event loop), so a client always knows the subscription first. A
 * peer that leaves more than OUTPUT_BACKLOG_LIMIT unread is let go with `run_stream_end` (error)
 * naming the last event it was sent: it resumes after it, as the ledger keeps everything.
 */
export class RunSubscription implements Disposable {
  private inner: Disposable | undefined;
  private held: WireRunEvent[] | null = [];
  private heldEnd: { reason: 'ended' | 'error'; message?: string } | undefined;
  private lastSeq = 0;
  private ended = false;

  constructor(
    readonly id: string,
    private readonly runId: string,
    private readonly sink: NotificationSink,
    private readonly onEnded: () => void,
  ) {}

  async open(follow: RunFollow): Promise<void> {
    this.inner = await follow((event) => this.deliver(event), { onEnd: () => this.end('ended'), onError: (err) => this.end('error', err.message) });
    if (this.ended) this.inner.dispose();
    setImmediate(() => this.release());
  }

  dispose(): void {
    this.ended = true;
    this.held = null;
    this.inner?.dispose();
  }

  private release(): void {
    const held = this.held;
    this.held = null;
    for (const e of held ?? []) this.send(e);
    if (this.heldEnd) this.finish(this.heldEnd.reason, this.heldEnd.message);
  }

  private deliver(event: WireRunEvent): void {
    if (this.ended) return;
    if (this.held) this.held.push(event);
    else this.send(event);
  }

  private send(event: WireRunEvent): void {
    if (this.ended) return;
    if (this.sink.backlogBytes > OUTPUT_BACKLOG_LIMIT) {
      this.finish('error', `the client fell behind; run_subscribe again with after=${this.lastSeq} to resume`);
      return;
    }
    this.lastSeq = event.seq;
    this.sink.notify('run_event', { subscription: this.id, run_id: this.runId, event });
  }

  private end(reason: 'ended' | 'error', message?: string): void {
    if (this.held) this.heldEnd = { reason, ...(message !== undefined ? { message } : {}) };
    else this.finish(reason, message);
  }

  private finish(reason: 'ended' | 'error', message?: string): void {
    if (this.ended) return;
    this.ended = true;
    this.inner?.dispose();
    this.sink.notify('run_stream_end', { subscription: this.id, run_id: this.runId, reason, ...(message !== undefined ? { message } : {}) });
    this.onEnded();
  }
}
