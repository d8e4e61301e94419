import { randomBytes } from 'node:crypto';
import type { Disposable } from '../core/disposable.js';
import { SwitchboardError } from '../core/errors.js';
import type { Pane, PaneRegistry } from '../pane/index.js';
import { approvalInfo, type SessionLog, type LogService } from '../logs/index.js';
import type { NotificationSink, CallerLike } from './context.js';

type EventKind = 'output' | 'exit' | 'screen' | 'state';

/** Above this many bytes waiting for the peer, output is dropped (and counted) instead of queued. */
export const OUTPUT_BACKLOG_LIMIT = 1024 * 1024;
/** Screen frames are sent at most this often. */
const FRAME_INTERVAL_MS = 16;
const MAX_SUBSCRIPTIONS = 64;

interface PaneWatch {
  pane: Pane;
  disposables: Disposable[];
  pendingText: string[];
  /** Stream offset of the first byte of the pending batch. */
  pendingOffset: number;
  flushScheduled: boolean;
  /** Bytes dropped since the peer fell behind, and where output resumes. */
  dropped: number;
  resumeOffset: number;
  lastFrame: string[] | undefined;
  lastFrameMeta: string;
  frameTimer: NodeJS.Timeout | undefined;
  lastFrameAt: number;
}

/**
 * One subscription: output (batched per pane), exit and screen-frame notifications for one pane or
 * for every pane. A slow peer never makes it queue without bound: past OUTPUT_BACKLOG_LIMIT output
 * is dropped and counted, and an `overflow` notice tells the peer once it catches up.
 */
class Subscription {
  private readonly watches = new Map<string, PaneWatch>();
  private readonly disposables: Disposable[] = [];
  private readonly drainSub: Disposable;

  constructor(
    readonly id: string,
    private readonly registry: PaneRegistry,
    private readonly sink: NotificationSink,
    private readonly events: ReadonlySet<EventKind>,
    paneId: string | undefined,
    replay: boolean,
    sessions: LogService | undefined,
  ) {
    this.drainSub = sink.onDrain(() => this.onDrain());
    if (events.has('state') && sessions) {
      this.disposables.push(
        sessions.onPaneState(({ pane, change }) => {
          if (!this.watches.has(pane.id)) return;
          const paneSession = sessions.paneSession(pane.id);
          const approval = change.state === 'waiting_approval' ? approvalInfo(paneSession?.approval ?? null, paneSession?.approvalId ?? null) : null;
          this.sink.notify('state', {
            subscription: this.id,
            pane_id: pane.id,
            state: change.state,
            previous: change.previous,
            at: change.at,
            approval,
            ...(change.question !== undefined ? { question: change.question } : {}),
            ...(change.error !== undefined ? { error: change.error } : {}),
          });
        }),
      );
    }
    // A removed pane is let go of by every subscription, so nothing keeps its history alive.
    this.disposables.push(registry.onPaneRemoved((pane) => this.unwatch(pane.id)));
    if (paneId !== undefined) {
      this.watch(registry.get(paneId), replay);
      return;
    }
    for (const pane of registry.list()) this.watch(pane, replay);
    this.disposables.push(
      registry.onPaneCreated((pane) => {
        this.sink.notify('pane_created', { subscription: this.id, pane_id: pane.id, title: pane.title });
        this.watch(pane, false);
      }),
    );
  }

  dispose(): void {
    for (const id of [...this.watches.keys()]) this.unwatch(id);
    for (const d of this.disposables.splice(0)) d.dispose();
    this.drainSub.dispose();
  }

  private watch(pane: Pane, replay: boolean): void {
    const w: PaneWatch = {
      pane,
      disposables: [],
      pendingText: [],
      pendingOffset: pane.outputBytes,
      flushScheduled: false,
      dropped: 0,
      resumeOffset: 0,
      lastFrame: undefined,
      lastFrameMeta: '',
      frameTimer: undefined,
      lastFrameAt: 0,
    };
    this.watches.set(pane.id, w);
    if (this.events.has('output')) {
      if (replay) {
        // Captured now, in step with the screen: live output parsed after this moment follows it.
        const history = pane.readRawText();
        if (history.bytes > 0) this.queueOutput(w, history.text, history.offset, history.bytes);
      }
      w.disposables.push(pane.onOutput((out) => this.queueOutput(w, out.text, out.textOffset, out.textBytes)));
    }
    if (this.events.has('screen')) {
      w.disposables.push(pane.onRender(() => this.scheduleFrame(w)));
      this.scheduleFrame(w);
    }
    if (this.events.has('exit') || this.events.has('output') || this.events.has('screen') || this.events.has('state')) {
      w.disposables.push(
        pane.onExit((exit) => {
          this.flushOutput(w);
          if (this.events.has('screen')) this.sendFrame(w);
          if (this.events.has('exit')) {
            this.sink.notify('exit', { subscription: this.id, pane_id: pane.id, exit_code: exit.exitCode, signal: exit.signal });
          }
        }),
      );
    }
    if (!pane.alive && this.events.has('exit')) {
      // Subscribing to a pane that already exited: say so at once.
      const exit = pane.exit;
      setImmediate(() => {
        if (this.watches.get(pane.id) === w && exit) {
          this.sink.notify('exit', { subscription: this.id, pane_id: pane.id, exit_code: exit.exitCode, signal: exit.signal });
        }
      });
    }
  }

  private unwatch(paneId: string): void {
    const w = this.watches.get(paneId);
    if (!w) return;
    this.watches.delete(paneId);
    clearTimeout(w.frameTimer);
    for (const d of w.disposables.splice(0)) d.dispose();
  }

  /** Queues output for the next batch; `bytes` is its length in the raw stream. */
  private queueOutput(w: PaneWatch, text: string, offset: number, bytes: number): void {
    if (w.dropped > 0 || this.sink.backlogBytes > OUTPUT_BACKLOG_LIMIT) {
      w.dropped += bytes;
      w.resumeOffset = offset + bytes;
      return;
    }
    if (w.pendingText.length === 0) w.pendingOffset = offset;
    w.pendingText.push(text);
    // Always flushed later, never from here: a subscription's first output (a replay) must go out
    // after the reply that names the subscription. A parse turn bounds what gathers meanwhile.
    if (!w.flushScheduled) {
      w.flushScheduled = true;
      setImmediate(() => this.flushOutput(w));
    }
  }

  private flushOutput(w: PaneWatch): void {
    w.flushScheduled = false;
    if (w.pendingText.length === 0 || this.watches.get(w.pane.id) !== w) return;
    const data = w.pendingText.join('');
    const offset = w.pendingOffset;
    w.pendingText = [];
    this.sink.notify('output', { subscription: this.id, pane_id: w.pane.id, data, offset });
  }

  private onDrain(): void {
    if (this.sink.backlogBytes > OUTPUT_BACKLOG_LIMIT / 2) return;
    for (const w of this.watches.values()) {
      if (w.dropped > 0) {
        this.sink.notify('overflow', { subscription: this.id, pane_id: w.pane.id, dropped_bytes: w.dropped, resume_offset: w.resumeOffset });
        w.dropped = 0;
      }
      if (this.events.has('screen')) this.scheduleFrame(w);
    }
  }

  private scheduleFrame(w: PaneWatch): void {
    if (w.frameTimer) return;
    const wait = Math.max(0, w.lastFrameAt + FRAME_INTERVAL_MS - performance.now());
    w.frameTimer = setTimeout(() => {
      w.frameTimer = undefined;
      this.sendFrame(w);
    }, wait);
  }

  private sendFrame(w: PaneWatch): void {
    if (this.watches.get(w.pane.id) !== w) return;
    // A frame is a picture of now: when the peer is behind, skip it; the next one (after the drain) diffs against what was sent.
    if (this.sink.backlogBytes > OUTPUT_BACKLOG_LIMIT) return;
    const snap = w.pane.snapshot({ ansi: true });
    const modes = w.pane.inputModes;
    const meta = JSON.stringify([snap.cols, snap.rows, snap.cursor, snap.altScreen, modes]);
    const full = w.lastFrame === undefined || w.lastFrame.length !== snap.lines.length;
    const changed: [number, string][] = [];
    snap.lines.forEach((line, i) => {
      if (full || w.lastFrame?.[i] !== line) changed.push([i, line]);
    });
    if (!full && changed.length === 0 && meta === w.lastFrameMeta) return;
    w.lastFrame = snap.lines;
    w.lastFrameMeta = meta;
    w.lastFrameAt = performance.now();
    this.sink.notify('screen', {
      subscription: this.id,
      pane_id: w.pane.id,
      full,
      cols: snap.cols,
      rows: snap.rows,
      cursor: snap.cursor,
      alt_screen: snap.altScreen,
      modes: {
        bracketed_paste: modes.bracketedPaste,
        application_cursor_keys: modes.applicationCursorKeys,
        mouse_tracking: modes.mouseTracking,
        send_focus: modes.sendFocus,
      },
      changed,
    });
  }
}

/**
 * One caller's subscription to a session's log: batches as `log_message` notifications. While the
 * peer's backlog is over the limit, the next batch waits for it to drain, and the log's own bounded
 * queue takes the strain (a subscriber that stays behind is dropped with `log_dropped`).
 */
class LogSubscription {
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

/** One caller's state (one connection): its subscriptions. Dispose it when the caller goes away. */
export class Caller implements CallerLike {
  private readonly subscriptions = new Map<string, Subscription | LogSubscription>();

  constructor(
    private readonly registry: PaneRegistry,
    private readonly sink: NotificationSink,
    private readonly sessions?: LogService,
  ) {}

  subscribe(options: { paneId?: string; events: readonly EventKind[]; replay: boolean }): string {
    const id = this.newId();
    this.subscriptions.set(id, new Subscription(id, this.registry, this.sink, new Set(options.events), options.paneId, options.replay, this.sessions));
    return id;
  }

  logSubscribe(log: SessionLog, options: { history: boolean }): string {
    const id = this.newId();
    // An ended subscription no longer counts against the connection's limit.
    this.subscriptions.set(id, new LogSubscription(id, log, this.sink, options.history, () => this.subscriptions.delete(id)));
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
