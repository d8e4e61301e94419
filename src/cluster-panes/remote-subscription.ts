/**
 * A controller's subscription to a node's pane (api's NodePaneFollow): the node's notifications,
 * in numbered frames on the subscription's own subject, played in order. A frame that went
 * missing is made good as a local subscription makes good a slow peer: the screen is asked for
 * again as a full frame (with the exit, if the program ended), and output that went missing is
 * told by `overflow`, saying how many bytes and where the output resumes (before the next output,
 * or when the repaint's answer says the node sent more than came).
 */
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import { errorMessage, SwitchboardError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import { nodePaneId, type NodePaneEvent, type NodePaneFollow, type NodePaneListener, type NodePaneRef } from '../api/index.js';
import { paneOutputSubject, parseJson } from '../cluster/index.js';
import { NoticeFrameSchema, type NodeFollowedEvent, type NoticeFrame } from './pane-wire.js';
import { asFailure, HeldOnNode, type NodePaneClient } from './held.js';

/** Frames held while the subscribe call is out, at most (a replay can be large): past it they are dropped and made good by a repaint. */
const MAX_HELD_CHARS = 4 * 1024 * 1024;

/**
 * States: `opening` (subscribed, the subscribe call out: frames held, to be played once its answer
 * says where the output starts), `open`, `ended`.
 */
export class RemoteSubscription extends HeldOnNode implements NodePaneFollow {
  readonly paneId: string;
  readonly what = 'subscription';
  private state: 'opening' | 'open' | 'ended' = 'opening';
  /** The last frame played. */
  private seq = 0;
  /** Output went missing: the next output is preceded by `overflow`. */
  private outputLost = false;
  /** Where the output played so far ends in the pane's stream (for the bytes an `overflow` says were lost); the subscription's start before any. */
  private nextOffset = 0;
  private held: NoticeFrame[] = [];
  private heldChars = 0;
  /** Frames held while opening were dropped (too many): the last one's number, to pass over them once open. */
  private heldDroppedTo = 0;
  private exitTold = false;
  /** A repaint call is out; `repaintWanted`: one more is needed once it settles (or, after a failure, at the next renewal). */
  private repainting = false;
  private repaintWanted = false;
  private readonly subscription: Subscription;

  private constructor(
    private readonly ref: NodePaneRef,
    client: NodePaneClient,
    nc: NatsConnection,
    private readonly listener: NodePaneListener,
    private readonly logger: Logger,
    private readonly forget: () => void,
  ) {
    super(client);
    this.paneId = nodePaneId(ref);
    // Subscribed before the subscribe call goes out: no frame can come before the subscription.
    this.subscription = nc.subscribe(paneOutputSubject(ref.node, this.id), { callback: (err, message) => (err ? this.fail({ code: 'CONNECTION_FAILED', message: errorMessage(err) }) : this.frame(message.data)) });
  }

  /** Subscribes on the pane's node; rejects as the node refused (PANE_NOT_FOUND, LIMIT_EXCEEDED, NODE_UNREACHABLE…). */
  static async open(
    ref: NodePaneRef,
    options: { events: readonly NodePaneEvent[]; replay: boolean },
    parts: { client: NodePaneClient; nc: NatsConnection; listener: NodePaneListener; logger: Logger; forget: () => void },
  ): Promise<RemoteSubscription> {
    const subscription = new RemoteSubscription(ref, parts.client, parts.nc, parts.listener, parts.logger, parts.forget);
    try {
      const events = [...new Set(options.events.filter((e): e is NodeFollowedEvent => e !== 'state'))];
      const { offset } = await parts.client.call('subscribe', { pane_id: ref.pane, attachment: subscription.id, events, replay: options.replay });
      subscription.opened(offset);
    } catch (err) {
      subscription.end();
      // A call that timed out may have been taken: let go of it there too (a node that has none says nothing).
      parts.client.call('detach', { attachment: subscription.id }).catch(() => undefined);
      throw err;
    }
    return subscription;
  }

  /** The node took it; its output starts at `offset`: the frames held since are played, from there. */
  private opened(offset: number): void {
    if (this.state !== 'opening') return;
    this.state = 'open';
    this.nextOffset = offset;
    const held = this.held;
    this.held = [];
    this.heldChars = 0;
    if (this.heldDroppedTo > 0) {
      this.seq = this.heldDroppedTo;
      this.lost();
    }
    for (const frame of held) this.play(frame);
  }

  get node(): string {
    return this.ref.node;
  }

  get ended(): boolean {
    return this.state === 'ended';
  }

  /**
   * The screen again as a full frame. One call at a time; one asked for while a call is out goes
   * after it (the frame that call brings may itself have been dropped by the caller), and one
   * that failed is asked again at the next renewal.
   */
  repaint(): void {
    if (this.state === 'ended') return;
    this.repaintWanted = true;
    if (this.repainting) return;
    this.repaintWanted = false;
    this.repainting = true;
    this.client.call('repaint', { attachment: this.id }).then(
      ({ offset, seq }) => {
        this.repainting = false;
        // Frames the node sent before its answer came before it here: output it had sent that never
        // came is lost. Unless frames sent after the answer were played first (one read of the
        // connection hands them over before the answer's turn): a loss they showed is newer than the
        // answer knows, and the next output or repaint tells it.
        if (this.seq <= seq) this.outputLostBefore(offset);
        if (this.repaintWanted) this.repaint();
      },
      (err: unknown) => {
        this.repainting = false;
        if (err instanceof SwitchboardError && err.code === 'PANE_NOT_FOUND') this.fail(asFailure(err));
        else {
          this.repaintWanted = true;
          this.logger.debug('a node pane was not repainted; asking again at the next renewal', { pane_id: this.paneId, error: errorMessage(err) });
        }
      },
    );
  }

  protected keptSent(sent: number | undefined): void {
    if (this.state !== 'open') return;
    if (sent !== undefined && sent > this.seq) {
      // The last frames were lost, with nothing after them to show it (they left the node before this
      // answer, on the same connection): passed over, so the next frame is no gap that asks again.
      this.logger.debug('the last frames of a node pane subscription went missing; repainting', { pane_id: this.paneId, played: this.seq, sent });
      this.seq = sent;
      this.lost();
    } else if (this.repaintWanted && !this.repainting) this.repaint();
  }

  protected tellEnded(error: { code: string; message: string }): void {
    this.listener.ended(error);
  }

  protected end(): void {
    this.state = 'ended';
    this.held = [];
    this.subscription.unsubscribe();
    this.forget();
  }

  private lost(): void {
    this.outputLost = true;
    this.repaint();
  }

  /** Output went missing and the node's stream reached `offset`: an `overflow` says so, when bytes were in fact lost. */
  private outputLostBefore(offset: number): void {
    if (!this.outputLost) return;
    this.outputLost = false;
    if (offset > this.nextOffset) this.listener.notice({ method: 'overflow', params: { dropped_bytes: offset - this.nextOffset, resume_offset: offset } });
    this.nextOffset = Math.max(this.nextOffset, offset);
  }

  private frame(data: Uint8Array): void {
    if (this.state === 'ended') return;
    let frame: NoticeFrame;
    try {
      frame = NoticeFrameSchema.parse(parseJson(data));
    } catch {
      this.logger.warn('a node sent a pane subscription frame that is not one', { pane_id: this.paneId });
      return;
    }
    if (this.state === 'opening') this.hold(frame);
    else this.play(frame);
  }

  private hold(frame: NoticeFrame): void {
    // The end is kept whatever was dropped: nothing comes after it.
    if (this.heldDroppedTo > 0 && !frame.ended) {
      this.heldDroppedTo = frame.seq;
      return;
    }
    this.heldChars += frame.notice ? JSON.stringify(frame.notice.params).length : 0;
    if (this.heldChars <= MAX_HELD_CHARS || frame.ended) {
      this.held.push(frame);
      return;
    }
    this.heldDroppedTo = frame.seq;
    this.held = [];
    this.heldChars = 0;
  }

  private play(frame: NoticeFrame): void {
    if (this.state !== 'open') return;
    // NATS keeps one publisher's order on a subject: a lower number is a repeat, a higher one a gap.
    if (frame.seq <= this.seq) return;
    if (frame.seq !== this.seq + 1) {
      this.logger.debug('a node pane subscription frame went missing; repainting', { pane_id: this.paneId, expected: this.seq + 1, got: frame.seq });
      this.lost();
    }
    this.seq = frame.seq;
    if (frame.ended) {
      this.fail(frame.ended);
      return;
    }
    const notice = frame.notice;
    if (!notice) return;
    if (notice.method === 'output') {
      const { data, offset } = notice.params;
      this.outputLostBefore(offset);
      this.nextOffset = offset + Buffer.byteLength(data);
    } else if (notice.method === 'exit') {
      // A repaint tells the exit again: the caller hears it once.
      if (this.exitTold) return;
      this.exitTold = true;
    }
    this.listener.notice(notice);
  }
}
