/**
 * A controller's subscription to a node's pane (api's NodePaneFollow): the node's notifications,
 * in numbered frames on the subscription's own subject, played in order. A frame that went
 * missing is made good as a local subscription makes good a slow peer: the screen is asked for
 * again as a full frame (with the exit, if the program ended), and the output after the gap is
 * preceded by `overflow`, saying where the output resumes.
 */
import { randomBytes } from 'node:crypto';
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import { errorMessage, SwitchboardError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import { nodePaneId, type NodePaneEvent, type NodePaneFollow, type NodePaneListener, type NodePaneRef } from '../api/index.js';
import { ControlClient, paneOutputSubject, parseJson } from '../cluster/index.js';
import { NoticeFrameSchema, type NODE_PANE_OPS, type NoticeFrame } from './pane-wire.js';
import { asFailure, KEEP_FAILURES_TO_END, type HeldByController } from './held.js';

/** States: `opening` (subscribed, the subscribe call out: frames are played as they come, the caller holds them), `open`, `ended`. */
export class RemoteSubscription implements NodePaneFollow, HeldByController {
  readonly id = randomBytes(12).toString('hex');
  readonly paneId: string;
  readonly what = 'subscription';
  private state: 'opening' | 'open' | 'ended' = 'opening';
  /** The last frame played. */
  private seq = 0;
  /** Output went missing: the next output is preceded by `overflow`. */
  private outputLost = false;
  /** Where the output played so far ends in the pane's stream (for the bytes an `overflow` says were lost). */
  private nextOffset: number | undefined;
  private exitTold = false;
  private repainting = false;
  private keepFailures = 0;
  private readonly subscription: Subscription;

  private constructor(
    private readonly ref: NodePaneRef,
    private readonly client: ControlClient<typeof NODE_PANE_OPS>,
    nc: NatsConnection,
    private readonly listener: NodePaneListener,
    private readonly logger: Logger,
    private readonly forget: () => void,
  ) {
    this.paneId = nodePaneId(ref);
    // Subscribed before the subscribe call goes out: no frame can come before the subscription.
    this.subscription = nc.subscribe(paneOutputSubject(ref.node, this.id), { callback: (err, message) => (err ? this.fail({ code: 'CONNECTION_FAILED', message: errorMessage(err) }) : this.frame(message.data)) });
  }

  /** Subscribes on the pane's node; rejects as the node refused (PANE_NOT_FOUND, LIMIT_EXCEEDED, NODE_UNREACHABLE…). */
  static async open(
    ref: NodePaneRef,
    options: { events: readonly NodePaneEvent[]; replay: boolean },
    parts: { client: ControlClient<typeof NODE_PANE_OPS>; nc: NatsConnection; listener: NodePaneListener; logger: Logger; forget: () => void },
  ): Promise<RemoteSubscription> {
    const subscription = new RemoteSubscription(ref, parts.client, parts.nc, parts.listener, parts.logger, parts.forget);
    try {
      await parts.client.call('subscribe', { pane_id: ref.pane, attachment: subscription.id, events: [...options.events], replay: options.replay });
    } catch (err) {
      subscription.end();
      throw err;
    }
    if (subscription.state === 'opening') subscription.state = 'open';
    return subscription;
  }

  get node(): string {
    return this.ref.node;
  }

  get ended(): boolean {
    return this.state === 'ended';
  }

  /** The screen again as a full frame (one request at a time: one out answers for the next). */
  repaint(): void {
    if (this.state === 'ended' || this.repainting) return;
    this.repainting = true;
    this.client.call('repaint', { attachment: this.id }).then(
      () => {
        this.repainting = false;
      },
      (err: unknown) => {
        this.repainting = false;
        if (err instanceof SwitchboardError && err.code === 'PANE_NOT_FOUND') this.fail(asFailure(err));
        else this.logger.debug('a node pane was not repainted', { pane_id: this.paneId, error: errorMessage(err) });
      },
    );
  }

  kept(sent: number | undefined): void {
    this.keepFailures = 0;
    if (this.state === 'open' && sent !== undefined && sent > this.seq) {
      // The last frames were lost, with nothing after them to show it.
      this.logger.debug('the last frames of a node pane subscription went missing; repainting', { pane_id: this.paneId, played: this.seq, sent });
      this.lost();
    }
  }

  keepFailed(err: unknown): void {
    this.keepFailures += 1;
    if (this.keepFailures >= KEEP_FAILURES_TO_END) this.fail(asFailure(err));
  }

  /** Ends it, telling the caller why. */
  fail(error: { code: string; message: string }): void {
    if (this.state === 'ended') return;
    this.end();
    this.listener.ended(error);
  }

  dispose(): void {
    if (this.state === 'ended') return;
    this.end();
    this.client.call('detach', { attachment: this.id }).catch(() => undefined);
  }

  private end(): void {
    this.state = 'ended';
    this.subscription.unsubscribe();
    this.forget();
  }

  private lost(): void {
    this.outputLost = true;
    this.repaint();
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
      if (this.outputLost) {
        this.outputLost = false;
        this.listener.notice({ method: 'overflow', params: { dropped_bytes: Math.max(0, offset - (this.nextOffset ?? offset)), resume_offset: offset } });
      }
      this.nextOffset = offset + Buffer.byteLength(data);
    } else if (notice.method === 'exit') {
      // A repaint tells the exit again: the caller hears it once.
      if (this.exitTold) return;
      this.exitTold = true;
    }
    this.listener.notice(notice);
  }
}
