/**
 * One caller's subscription to a pane on another host (`<node>/<pane>`): what the node's pane
 * tells (output, exit, screen frames) goes to the caller under the caller's names for the
 * subscription and the pane, with the same rules a subscription to a pane here keeps: nothing
 * before the reply that names the subscription, and a peer that reads too slowly loses output
 * (counted, and told by `overflow`), never the daemon's memory.
 */
import type { Disposable } from '../core/disposable.js';
import { OUTPUT_BACKLOG_LIMIT, type NotificationSink } from './notification-sink.js';
import { nodePaneId, type NodePaneEvent, type NodePaneFollow, type NodePaneNotice, type NodePaneRef, type RemotePanes } from './remote-panes.js';

/**
 * States: `opening` (the node has not taken it yet: notices held), `holding` (taken; notices held
 * one turn more, so the reply goes first), `open`, `ended`.
 */
export class NodePaneSubscription implements Disposable {
  private state: 'opening' | 'holding' | 'open' | 'ended' = 'opening';
  private follow: NodePaneFollow | undefined;
  private held: NodePaneNotice[] = [];
  private heldEnd: { code: string; message: string } | undefined;
  private readonly paneId: string;
  /** Output dropped for a slow peer since it fell behind, and where output resumes. */
  private dropped = 0;
  private resumeOffset = 0;
  /** A screen frame was dropped for a slow peer: the node sends a full one once the peer caught up. */
  private frameDropped = false;
  private readonly drain: Disposable;
  private states: Disposable | undefined;

  constructor(
    readonly id: string,
    private readonly ref: NodePaneRef,
    private readonly sink: NotificationSink,
    private readonly onEnded: () => void,
  ) {
    this.paneId = nodePaneId(ref);
    this.drain = sink.onDrain(() => this.onDrain());
  }

  async open(remote: RemotePanes, options: { events: readonly NodePaneEvent[]; replay: boolean }): Promise<void> {
    // An agent's states come from the node's word to every controller, this pane's picked out.
    if (options.events.includes('state')) {
      this.states = remote.onPaneState(({ pane_id, ...params }) => {
        if (pane_id === this.paneId) this.deliver({ method: 'state', params });
      });
    }
    const follow = await remote.subscribe(this.ref, { ...options, events: options.events.filter((e) => e !== 'state') }, { notice: (notice) => this.deliver(notice), ended: (error) => this.end(error) });
    if (this.state === 'ended') {
      follow.dispose();
      return;
    }
    this.follow = follow;
    this.state = 'holding';
    setImmediate(() => this.release());
  }

  dispose(): void {
    if (this.state === 'ended') return;
    this.state = 'ended';
    this.held = [];
    this.drain.dispose();
    this.states?.dispose();
    this.follow?.dispose();
  }

  private release(): void {
    if (this.state !== 'holding') return;
    this.state = 'open';
    const held = this.held;
    this.held = [];
    for (const notice of held) this.send(notice);
    if (this.heldEnd) this.end(this.heldEnd);
  }

  private deliver(notice: NodePaneNotice): void {
    if (this.state === 'ended') return;
    if (this.state === 'open') this.send(notice);
    else this.held.push(notice);
  }

  private send(notice: NodePaneNotice): void {
    const base = { subscription: this.id, pane_id: this.paneId };
    switch (notice.method) {
      case 'output': {
        const { data, offset } = notice.params;
        if (this.dropped > 0 || this.sink.backlogBytes > OUTPUT_BACKLOG_LIMIT) {
          this.dropped += Buffer.byteLength(data);
          this.resumeOffset = offset + Buffer.byteLength(data);
          return;
        }
        this.sink.notify('output', { ...base, ...notice.params });
        return;
      }
      case 'screen':
        // A frame holds only the rows that changed since the last one: one dropped here would leave
        // the peer's picture wrong, so the node is asked for a full one when the peer catches up.
        if (this.frameDropped || this.sink.backlogBytes > OUTPUT_BACKLOG_LIMIT) {
          this.frameDropped = true;
          return;
        }
        this.sink.notify('screen', { ...base, ...notice.params });
        return;
      case 'exit':
        this.sink.notify('exit', { ...base, ...notice.params });
        return;
      case 'state':
        this.sink.notify('state', { ...base, ...notice.params });
        return;
      case 'overflow':
        // Lost between the hosts while output is being dropped for this slow peer: one overflow, said once it catches up.
        if (this.dropped > 0) {
          this.dropped += notice.params.dropped_bytes;
          this.resumeOffset = notice.params.resume_offset;
          return;
        }
        this.sink.notify('overflow', { ...base, ...notice.params });
    }
  }

  private onDrain(): void {
    if (this.state !== 'open' || this.sink.backlogBytes > OUTPUT_BACKLOG_LIMIT / 2) return;
    if (this.dropped > 0) {
      this.sink.notify('overflow', { subscription: this.id, pane_id: this.paneId, dropped_bytes: this.dropped, resume_offset: this.resumeOffset });
      this.dropped = 0;
    }
    if (this.frameDropped) {
      this.frameDropped = false;
      this.follow?.repaint();
    }
  }

  /** The node's side ended: the caller is told, and the subscription is gone. */
  private end(error: { code: string; message: string }): void {
    if (this.state === 'ended') return;
    if (this.state !== 'open') {
      // Told after the reply and what was held, in order.
      this.heldEnd = error;
      return;
    }
    this.dispose();
    this.sink.notify('subscription_ended', { subscription: this.id, pane_id: this.paneId, ...error });
    this.onEnded();
  }
}
