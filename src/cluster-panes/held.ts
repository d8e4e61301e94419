/**
 * What a controller holds on a node and renews (an attached terminal, a subscription): its id
 * there, its renewals, and its three ways to end: told by the node (or given up), disposed by its
 * caller (the node told to let go), and ended by its own state machine.
 */
import { randomBytes } from 'node:crypto';
import { errorMessage, isSwitchboardError } from '../core/errors.js';
import type { ControlClient } from '../cluster/index.js';
import type { NODE_PANE_OPS } from './pane-wire.js';

/** Renewals that fail in a row before what they renew is given up (one lost to a busy moment is not a lost node). */
const KEEP_FAILURES_TO_END = 3;

export type NodePaneClient = ControlClient<typeof NODE_PANE_OPS>;

export abstract class HeldOnNode {
  /** Its id on the node: the subject token of its frames, made up here (random), so its frames go to this controller only. */
  readonly id = randomBytes(12).toString('hex');
  /** The pane as the controller names it (`<node>/<pane>`). */
  abstract readonly paneId: string;
  /** What it is, for a person reading why it ended. */
  abstract readonly what: string;
  abstract readonly node: string;
  private keepFailures = 0;

  protected constructor(protected readonly client: NodePaneClient) {}

  /** The node renewed it; `sent`, the number of the last frame it sent (past the last one played, the last frames were lost). */
  kept(sent: number | undefined): void {
    this.keepFailures = 0;
    this.keptSent(sent);
  }

  keepFailed(err: unknown): void {
    this.keepFailures += 1;
    if (this.keepFailures >= KEEP_FAILURES_TO_END) this.fail(asFailure(err));
  }

  /** Ends it, telling whoever it serves why. */
  fail(error: { code: string; message: string }): void {
    if (this.ended) return;
    this.end();
    this.tellEnded(error);
  }

  /** Ends it at its caller's word: the node is told to let go. */
  dispose(): void {
    if (this.ended) return;
    this.end();
    this.client.call('detach', { attachment: this.id }).catch(() => undefined);
  }

  abstract get ended(): boolean;
  /** A renewal's word on the frames sent, for what it holds to check against those played. */
  protected abstract keptSent(sent: number | undefined): void;
  /** Its state machine's end: nothing more is played, its frames' subscription is gone, and its owner forgets it. */
  protected abstract end(): void;
  protected abstract tellEnded(error: { code: string; message: string }): void;
}

export function asFailure(err: unknown): { code: string; message: string } {
  return isSwitchboardError(err) ? { code: err.code, message: err.message } : { code: 'INTERNAL_ERROR', message: errorMessage(err) };
}
