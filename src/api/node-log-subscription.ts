/**
 * One caller's subscription to a session's log on another host (`<node>/<session>`, a node pane's
 * log): as a subscription to a log here, its history then each new message as `log_message`
 * batches, `log_finished` at its end, and `log_dropped` when it cannot go on, after which the
 * caller catches up with log_get_history (the dashboard subscribes again with history).
 *
 * The node is asked in long reads: each waits there (up to READ_WAIT_MS) for a message after the
 * last one delivered. So the node sends only what was asked for, nothing is lost between the hosts
 * (what did not come is asked for again), and a caller that reads slowly is asked for nothing more
 * until its backlog drains: the node's log, bounded as every log is, takes the strain, as it does
 * for a slow reader here.
 */
import { setTimeout as delay } from 'node:timers/promises';
import type { Disposable } from '../core/disposable.js';
import { errorMessage, isSwitchboardError } from '../core/errors.js';
import { OUTPUT_BACKLOG_LIMIT, type NotificationSink } from './notification-sink.js';
import { nodePaneId, type NodeLogPage, type NodePaneRef, type RemotePanes } from './remote-panes.js';

/** Messages one read asks for (a node answers fewer when they would not fit one NATS message). */
const READ_LIMIT = 1_000;
/** How long one read waits on the node for a message before it is asked again. */
const READ_WAIT_MS = 15_000;
/** Reads that fail in a row before the subscription is given up (one lost to a busy moment is not a lost node). */
const READ_FAILURES_TO_DROP = 3;
/** The pause after a failed read, and after one the node could not wait on (it held as many waits as it takes). */
const PAUSE_MS = 1_000;

/** States: `opening` (the first page is being read), `open` (reading on), `ended`. */
export class NodeLogSubscription implements Disposable {
  private state: 'opening' | 'open' | 'ended' = 'opening';
  /** The last message delivered (or passed over: a history that starts later than 1). */
  private last = 0;
  /** Aborted when it ends: the read waiting on the node is stopped there. */
  private readonly stop = new AbortController();
  private drainWait: Disposable | undefined;
  readonly sessionId: string;

  constructor(
    readonly id: string,
    private readonly ref: NodePaneRef,
    private readonly sink: NotificationSink,
    /** Called once it can deliver nothing more (dropped, or its session finished). */
    private readonly onEnded: () => void,
  ) {
    this.sessionId = nodePaneId(ref);
  }

  /** Reads the first page (the history, or where the log is now); rejects as the node refused (SESSION_NOT_FOUND, NODE_UNREACHABLE…). */
  async open(remote: RemotePanes, options: { history: boolean }): Promise<void> {
    const first = await remote.readLog(this.ref, { ...(options.history && { after_seq: 0 }), limit: READ_LIMIT, wait_ms: 0 }, this.stop.signal);
    if (this.state === 'ended') return;
    this.state = 'open';
    // A history the log no longer holds from its start begins where it does; none given: after the last message now.
    const start = first.messages[0];
    this.last = options.history && start !== undefined ? start.seq - 1 : first.last_seq;
    // Delivered after the reply that names the subscription, which goes out in this turn.
    setImmediate(() => void this.follow(remote, options.history ? first : undefined));
  }

  /** Asked again after each wait (a call, never narrowed): it may have ended meanwhile. */
  private isEnded(): boolean {
    return this.state === 'ended';
  }

  dispose(): void {
    if (this.state === 'ended') return;
    this.state = 'ended';
    this.stop.abort();
    this.drainWait?.dispose();
    this.drainWait = undefined;
  }

  private async follow(remote: RemotePanes, first: NodeLogPage | undefined): Promise<void> {
    let page = first;
    let failures = 0;
    while (!this.isEnded()) {
      if (page !== undefined && !this.take(page)) return;
      if (this.sink.backlogBytes > OUTPUT_BACKLOG_LIMIT) await this.drained();
      if (this.isEnded()) return;
      try {
        page = await remote.readLog(this.ref, { after_seq: this.last, limit: READ_LIMIT, wait_ms: READ_WAIT_MS }, this.stop.signal);
        failures = 0;
        if (!page.waited && page.messages.length === 0) await this.pause();
      } catch (err) {
        if (this.isEnded()) return;
        page = undefined;
        // Forgotten on the node: its pane was removed, which finishes a log first (what it held was read).
        if (isSwitchboardError(err) && err.code === 'SESSION_NOT_FOUND') {
          this.finish();
          return;
        }
        failures += 1;
        if (failures >= READ_FAILURES_TO_DROP) {
          this.drop(`node ${this.ref.node} did not answer: ${errorMessage(err)}`, this.last);
          return;
        }
        await this.pause();
      }
    }
  }

  /** Delivers a page; false when the subscription ended with it. */
  private take(page: NodeLogPage): boolean {
    const first = page.messages[0];
    // What comes next is no longer on the node (this reader fell behind its log's bounds): dropped, as a slow reader here is.
    if (first !== undefined ? first.seq > this.last + 1 : page.last_seq > this.last) {
      this.drop(`fell behind: node ${this.ref.node} no longer holds the messages after ${String(this.last)}`, page.last_seq);
      return false;
    }
    const last = page.messages[page.messages.length - 1];
    if (last !== undefined) {
      this.sink.notify('log_message', { subscription: this.id, session_id: this.sessionId, messages: page.messages });
      this.last = last.seq;
    }
    if (page.finished && this.last >= page.last_seq) {
      this.finish();
      return false;
    }
    return true;
  }

  private finish(): void {
    this.dispose();
    this.sink.notify('log_finished', { subscription: this.id, session_id: this.sessionId });
    this.onEnded();
  }

  private drop(reason: string, lastSeq: number): void {
    this.dispose();
    this.sink.notify('log_dropped', { subscription: this.id, session_id: this.sessionId, reason, last_seq: lastSeq });
    this.onEnded();
  }

  private drained(): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        this.stop.signal.removeEventListener('abort', done);
        this.drainWait?.dispose();
        this.drainWait = undefined;
        resolve();
      };
      this.drainWait = this.sink.onDrain(() => {
        if (this.sink.backlogBytes <= OUTPUT_BACKLOG_LIMIT / 2) done();
      });
      // Ended meanwhile: the loop sees it and stops.
      this.stop.signal.addEventListener('abort', done, { once: true });
    });
  }

  private async pause(): Promise<void> {
    await delay(PAUSE_MS, undefined, { signal: this.stop.signal }).catch(() => undefined);
  }
}
