/**
 * What the session drivers share about a turn: its entries and permission answers as they come, a
 * cancel flag, and one ending, however many things (the result line, the process exiting, a
 * cancel) race to end it.
 */
import { randomBytes } from 'node:crypto';
import type { NormalizedEntry } from '../events/entry.js';
import type { RunStatus } from './headless-driver.js';
import type { PermissionAnswer } from './permission.js';
import type { TurnResult } from './session.js';

/** The variable every process of a session carries, so that closing it finds them all. */
export const SESSION_MARKER = 'SWITCHBOARD_SESSION_ID';

/** A new session id (also the MsgStore's and the marker's value). */
export function newSessionId(): string {
  return `s${randomBytes(4).toString('hex')}`;
}

export class Turn {
  readonly entries: NormalizedEntry[] = [];
  readonly permissions: PermissionAnswer[] = [];
  readonly done: Promise<TurnResult>;
  /** Someone asked to stop this turn (cancelTurn, the prompt's signal, close). */
  cancelRequested = false;
  private readonly started = performance.now();
  private settle: ((result: TurnResult) => void) | undefined;

  constructor() {
    this.done = new Promise((resolve) => {
      this.settle = resolve;
    });
  }

  /** True once the turn has ended. */
  get over(): boolean {
    return this.settle === undefined;
  }

  /** Ends the turn; later calls are ignored (the first ending wins). */
  finish(status: RunStatus, stopReason: string | null): void {
    const settle = this.settle;
    if (!settle) return;
    this.settle = undefined;
    settle({ status, entries: [...this.entries], permissions: [...this.permissions], stopReason, durationMs: Math.round(performance.now() - this.started) });
  }
}

/** A turn that never started (its signal was aborted first). */
export function cancelledBeforeStart(): TurnResult {
  return { status: 'cancelled', entries: [], permissions: [], stopReason: 'cancelled before it started', durationMs: 0 };
}
