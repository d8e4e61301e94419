/**
 * A controller's subscription to one of this node's panes: the same PaneSubscription a daemon
 * gives its own callers, with a sink that sends each notification in a numbered frame on the
 * subscription's subject. A notification too large for one NATS message goes in parts that mean
 * the same: output in consecutive pieces (each with its own offset), a screen frame as its first
 * rows (full, when it was) and then the other rows as changes.
 */
import type { Disposable } from '../core/disposable.js';
import { PaneSubscription, type NodePaneEvent, type NotificationSink, type PaneContext } from '../api/index.js';
import type { Notifications } from '../protocol/methods.js';
import type { NoticeFrame } from './pane-wire.js';


type Notice = NonNullable<NoticeFrame['notice']>;

export class NodeSubscription implements Disposable {
  private seq = 0;
  private state: 'open' | 'ended' = 'open';
  private readonly subscription: PaneSubscription;
  /** Output characters per frame: JSON escapes a control character in 6 bytes, so a piece of this many stays under the frame limit. */
  private readonly pieceChars: number;
  /** Where the output sent so far ends in the pane's stream (its first output's start until then). */
  private outputEnd: number;
  lastKept: number;

  constructor(
    /** The pane's id here. */
    readonly paneId: string,
    private readonly subject: string,
    private readonly publish: (subject: string, frame: NoticeFrame) => void,
    panes: PaneContext['panes'],
    options: { events: readonly NodePaneEvent[]; replay: boolean },
    /** The most one frame's JSON may hold. */
    private readonly frameLimit: number,
    now: number,
  ) {
    this.lastKept = now;
    const sink: NotificationSink = {
      notify: (method, params) => this.notify(method, params),
      // NATS takes what is published and drops for a subscriber that falls behind: the controller
      // sees the gap in the numbers and asks for a repaint.
      backlogBytes: 0,
      onDrain: () => ({ dispose: () => undefined }),
    };
    // Looked up first: PANE_NOT_FOUND before the subscription holds any listener. Its id is the controller's to name.
    const pane = panes.get(paneId);
    this.outputEnd = options.replay ? pane.historyStart : pane.outputBytes;
    this.pieceChars = Math.max(1024, Math.floor(frameLimit / 8));
    this.subscription = new PaneSubscription('node', panes, sink, new Set(options.events), paneId, options.replay, undefined);
  }

  /** The number of the last frame sent. */
  get sent(): number {
    return this.seq;
  }

  /** Where the output sent so far ends (before any: where the first starts). */
  get outputOffset(): number {
    return this.outputEnd;
  }

  get ended(): boolean {
    return this.state === 'ended';
  }

  repaint(): void {
    if (this.state === 'open') this.subscription.repaint();
  }

  /** Ends it, telling the controller why when it did not ask for it. */
  end(why?: { code: string; message: string }): void {
    if (this.state === 'ended') return;
    this.state = 'ended';
    this.subscription.dispose();
    if (why) this.send({ ended: why });
  }

  dispose(): void {
    this.end();
  }

  private notify(method: keyof Notifications, params: unknown): void {
    if (this.state === 'ended') return;
    if (method === 'output') {
      const { data, offset } = params as Notifications['output'];
      let at = 0;
      let byteOffset = offset;
      while (at < data.length) {
        let end = Math.min(data.length, at + this.pieceChars);
        // Never half of a surrogate pair in a piece.
        if (end < data.length && isHighSurrogate(data.charCodeAt(end - 1))) end -= 1;
        const piece = data.slice(at, end);
        this.send({ notice: { method: 'output', params: { data: piece, offset: byteOffset } } });
        // The stream's offsets count its bytes; the next piece's is this one's UTF-8 length on (exact for UTF-8 output).
        byteOffset += Buffer.byteLength(piece);
        at = end;
      }
      this.outputEnd = byteOffset;
    } else if (method === 'exit') {
      const { exit_code, signal } = params as Notifications['exit'];
      this.send({ notice: { method: 'exit', params: { exit_code, signal } } });
    } else if (method === 'screen') {
      const { subscription: _s, pane_id: _p, ...frame } = params as Notifications['screen'];
      for (const part of screenParts(frame, this.frameLimit)) this.send({ notice: { method: 'screen', params: part } });
    }
    // Nothing else is asked of a node's pane (no states, no new panes: one pane, and no agent log here).
  }

  private send(frame: Omit<NoticeFrame, 'seq'>): void {
    this.seq += 1;
    this.publish(this.subject, { seq: this.seq, ...frame });
  }
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

type ScreenFrame = Extract<Notice, { method: 'screen' }>['params'];

/** A screen frame in parts no larger than `limit` each: the first as the frame was (full or not), the rest as changes to it. */
function screenParts(frame: ScreenFrame, limit: number): ScreenFrame[] {
  if (Buffer.byteLength(JSON.stringify(frame)) <= limit) return [frame];
  const parts: ScreenFrame[] = [];
  let rows: [number, string][] = [];
  let size = 0;
  for (const row of frame.changed) {
    const rowSize = Buffer.byteLength(JSON.stringify(row)) + 1;
    if (rows.length > 0 && size + rowSize > limit / 2) {
      parts.push({ ...frame, full: parts.length === 0 ? frame.full : false, changed: rows });
      rows = [];
      size = 0;
    }
    rows.push(row);
    size += rowSize;
  }
  parts.push({ ...frame, full: parts.length === 0 ? frame.full : false, changed: rows });
  return parts;
}
