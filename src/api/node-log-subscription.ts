/**
 * One caller's subscription to a session's log on another host (`<node>/<session>`, a node pane's
 * log): as a subscription to a log here, its history then each new message as `log_message`
 * batches, `log_finished` at its end, and `log_dropped` when it cannot go on, after which the
 * caller catches up with log_get_history (the dashboard subscribes again with history).
 *
 * The node is asked in long reads: each waits there (up to READ_WAIT_MS) for a message after the
 * last one delivered. So the node sends only what was asked for, a read lost between the hosts is
 * asked again from the same place, and a caller that reads slowly is asked for nothing more until
 * its backlog drains: the node's log, bounded as every log is, takes the strain, as it does for a
 * slow reader here, and one that falls past what it holds is dropped, as one here is.
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
/** What a node out of reach for a moment answers: read again; any other error ends the subscription at once. */
const TRANSIENT = new Set(['NODE_UNREACHABLE', 'TIMEOUT', 'CONNECTION_FAILED']);

/** States: `opening` (the first page is being read), `open` (reading on), `ended`. */
export class NodeLogSubscription implements Disposable {
  private state: 'opening' | 'open' | 'ended' = 'opening';
  /** The last message delivered (or passed over: a history that starts later than 1). */
  private last = 0;
  /** The log's last seq as the node last said it. */
  private known = 0;
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
    this.known = first.last_seq;
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
        const code = isSwitchboardError(err) ? err.code : 'INTERNAL_ERROR';
        // Forgotten on the node: its pane was removed (a run's, when the run ended), and what this
        // reader had not read yet of its end went with it.
        if (code === 'SESSION_NOT_FOUND') {
          this.drop(`the session was removed on node ${this.ref.node} before its end was read`);
          return;
        }
        // A node out of reach may be back in a moment; any other answer stays as it is.
        failures += 1;
        if (!TRANSIENT.has(code) || failures >= READ_FAILURES_TO_DROP) {
          this.drop(TRANSIENT.has(code) ? `node ${this.ref.node} did not answer: ${errorMessage(err)}` : `the log could not be read on: ${code}: ${errorMessage(err)}`);
          return;
        }
        await this.pause();
      }
    }
  }

  /** Delivers a page; false when the subscription ended with it. */
  private take(page: NodeLogPage): boolean {
    this.known = Math.max(this.known, page.last_seq);
    const first = page.messages.find((m) => m.seq > this.last);
    // What comes next is no longer on the node (this reader fell behind its log's bounds): dropped, as a slow reader here is.
    if (first !== undefined ? first.seq > this.last + 1 : page.last_seq > this.last) {
      this.drop(`fell behind: node ${this.ref.node} no longer holds the messages after ${String(this.last)}`);
      return false;
    }
    // Each message once, whatever a node answers.
    const fresh = page.messages.filter((m) => m.seq > this.last);
    const last = fresh[fresh.length - 1];
    if (last !== undefined) {
      this.sink.notify('log_message', { subscription: this.id, session_id: this.sessionId, messages: fresh });
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

  /** Ends it with `log_dropped`, whose last_seq is, as for a log here, the log's last as last seen. */
  private drop(reason: string): void {
    this.dispose();
    this.sink.notify('log_dropped', { subscription: this.id, session_id: this.sessionId, reason, last_seq: this.known });
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
