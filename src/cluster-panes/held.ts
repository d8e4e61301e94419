/** What a controller holds on a node and renews (an attached terminal, a subscription), and how one fails. */
import { errorMessage, isSwitchboardError } from '../core/errors.js';

/** Renewals that fail in a row before what they renew is given up (one lost to a busy moment is not a lost node). */
export const KEEP_FAILURES_TO_END = 3;

export interface HeldByController {
  /** Its id on the node (the subject token of its frames). */
  readonly id: string;
  readonly node: string;
  /** The pane as the controller names it (`<node>/<pane>`). */
  readonly paneId: string;
  /** What it is, for a person reading why it ended. */
  readonly what: string;
  /** The node renewed it; `sent`, the number of the last frame it sent. */
  kept(sent: number | undefined): void;
  keepFailed(err: unknown): void;
  /** Ends it, telling whoever it serves why. */
  fail(error: { code: string; message: string }): void;
  dispose(): void;
}

export function asFailure(err: unknown): { code: string; message: string } {
  return isSwitchboardError(err) ? { code: err.code, message: err.message } : { code: 'INTERNAL_ERROR', message: errorMessage(err) };
}
