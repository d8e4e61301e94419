/**
 * One caller's subscription to panes: output (batched per pane), exit, screen frames and agent
 * states, for one pane or for every pane (new ones included).
 */
import { DisposableStore, toDisposable, type Disposable } from '../core/disposable.js';
import type { LogService } from '../logs/index.js';
import type { ExitInfo, Pane, PaneRegistry } from '../pane/index.js';
import { OUTPUT_BACKLOG_LIMIT, type NotificationSink } from './notification-sink.js';
import type { NodePanesSlot } from './remote-panes.js';
import { approvalInfo, inputModesInfo, stateNotification } from './to-wire.js';

export type PaneEventKind = 'output' | 'exit' | 'screen' | 'state';

/** Screen frames are sent at most this often. */
const FRAME_INTERVAL_MS = 16;

interface PaneWatch {
  pane: Pane;
  /** What watching this pane holds: its listeners and its frame timer. */
  disposables: DisposableStore;
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
export class PaneSubscription implements Disposable {
  private readonly watches = new Map<string, PaneWatch>();
  private readonly disposables = new DisposableStore();

  constructor(
    readonly id: string,
    private readonly registry: PaneRegistry,
    private readonly sink: NotificationSink,
    private readonly events: ReadonlySet<PaneEventKind>,
    paneId: string | undefined,
    replay: boolean,
    logs: LogService | undefined,
    /** A controller's nodes' panes: a new one is told as `pane_created` too, a program's end as `exit` and an agent's state as `state` (their output is not followed here). */
    nodePanes?: NodePanesSlot,
  ) {
    this.disposables.add(sink.onDrain(() => this.onDrain()));
    if (events.has('state') && logs) {
      this.disposables.add(
        logs.onPaneState(({ pane, change }) => {
          if (!this.watches.has(pane.id)) return;
          const log = logs.paneLog(pane.id);
          const approval = change.state === 'waiting_approval' ? approvalInfo(log?.approval ?? null, log?.approvalId ?? null) : null;
          this.sink.notify('state', stateNotification(this.id, pane.id, change, approval));
        }),
      );
    }
    // A removed pane is let go of by every subscription, so nothing keeps its history alive.
    this.disposables.add(registry.onPaneRemoved((pane) => this.unwatch(pane.id)));
    // Disposed first (newest first): every pane is let go of before the listeners above.
    this.disposables.add(toDisposable(() => {
      for (const id of [...this.watches.keys()]) this.unwatch(id);
    }));
    if (paneId !== undefined) {
      this.watch(registry.get(paneId), replay);
      return;
    }
    for (const pane of registry.list()) this.watch(pane, replay);
    this.disposables.add(
      registry.onPaneCreated((pane) => {
        this.sink.notify('pane_created', { subscription: this.id, pane_id: pane.id, title: pane.title });
        this.watch(pane, false);
      }),
    );
    if (nodePanes) {
      this.disposables.add(nodePanes.onPaneCreated((created) => this.sink.notify('pane_created', { subscription: this.id, ...created })));
      // A node's pane's exit, for a list of every pane (its output and screen are a subscription to that pane's).
      if (events.has('exit')) this.disposables.add(nodePanes.onPaneExited((exited) => this.sink.notify('exit', { subscription: this.id, ...exited })));
      if (events.has('state')) this.disposables.add(nodePanes.onPaneState((state) => this.sink.notify('state', { subscription: this.id, ...state })));
    }
  }

  dispose(): void {
    this.disposables.dispose();
  }

  /**
   * Sends every watched pane's screen again as a full frame, and its exit again if it has exited:
   * for a peer that lost some of them on the way (a controller following a node's pane over NATS).
   */
  repaint(): void {
    for (const w of this.watches.values()) {
      w.lastFrame = undefined;
      // At once, not on the frame timer: a screen before the exit, as a pane's own exit gives them.
      if (this.events.has('screen')) this.sendFrame(w);
      const exit = w.pane.exit;
      if (exit && this.events.has('exit')) this.notifyExit(w.pane.id, exit);
    }
  }

  private notifyExit(paneId: string, exit: ExitInfo): void {
    this.sink.notify('exit', { subscription: this.id, pane_id: paneId, exit_code: exit.exitCode, signal: exit.signal });
  }

  private watch(pane: Pane, replay: boolean): void {
    const w: PaneWatch = {
      pane,
      disposables: new DisposableStore(),
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
    w.disposables.add(toDisposable(() => clearTimeout(w.frameTimer)));
    if (this.events.has('output')) {
      if (replay) {
        // Captured now, in step with the screen: live output parsed after this moment follows it.
        const history = pane.readRawText();
        if (history.bytes > 0) this.queueOutput(w, history.text, history.offset, history.bytes);
      }
      w.disposables.add(pane.onOutput((out) => this.queueOutput(w, out.text, out.textOffset, out.textBytes)));
    }
    if (this.events.has('screen')) {
      w.disposables.add(pane.onRender(() => this.scheduleFrame(w)));
      this.scheduleFrame(w);
    }
    if (this.events.has('exit') || this.events.has('output') || this.events.has('screen') || this.events.has('state')) {
      w.disposables.add(
        pane.onExit((exit) => {
          this.flushOutput(w);
          if (this.events.has('screen')) this.sendFrame(w);
          if (this.events.has('exit')) {
            this.notifyExit(pane.id, exit);
          }
        }),
      );
    }
    if (!pane.alive && this.events.has('exit')) {
      // Subscribing to a pane that already exited: say so at once.
      const exit = pane.exit;
      setImmediate(() => {
        if (this.watches.get(pane.id) === w && exit) {
          this.notifyExit(pane.id, exit);
        }
      });
    }
  }

  private unwatch(paneId: string): void {
    const w = this.watches.get(paneId);
    if (!w) return;
    this.watches.delete(paneId);
    w.disposables.dispose();
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
      modes: inputModesInfo(modes),
      changed,
    });
  }
}
