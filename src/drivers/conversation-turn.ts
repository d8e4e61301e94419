/**
 * What the session drivers share about a turn: its entries and permission answers as they come, a
 * cancel flag, and one ending, however many things (the result line, the process exiting, a
 * cancel) race to end it; and the checks every driver makes of a conversation to resume.
 */
import { randomBytes } from 'node:crypto';
import { SwitchboardError } from '../core/errors.js';
import type { NormalizedEntry } from '../output/entry.js';
import type { MsgStore } from '../output/msg-store.js';
import type { EndStatus } from './capabilities.js';
import type { PermissionAnswer } from './permission.js';
import type { ConversationOptions, TurnResult } from './conversation.js';

/** The variable every process of a session carries, so that closing it finds them all. */
export const SESSION_MARKER = 'SWITCHBOARD_SESSION_ID';

/** A new session id (also the MsgStore's and the marker's value). */
export function newSessionId(): string {
  return `s${randomBytes(4).toString('hex')}`;
}

/**
 * What a CLI's conversation ids look like (Claude's and Codex's UUIDs, Gemini's too, OpenCode's
 * `ses_…`). Checked because the id goes on a command line (`claude --resume <id>`): one starting
 * with a dash would be read as an option.
 */
const RESUMABLE_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,199}$/;

/** The `resume` option, checked (INVALID_PARAMS for an id no CLI would have given), or undefined. */
export function resumeIdOf(options: ConversationOptions): string | undefined {
  const id = options.resume;
  if (id === undefined) return undefined;
  if (!RESUMABLE_ID.test(id)) throw new SwitchboardError('INVALID_PARAMS', `not a conversation id to resume: ${JSON.stringify(id.slice(0, 100))}`, { resume: id.slice(0, 100) });
  return id;
}

/** The error of a resume the CLI refused: the caller asked for that conversation, not a new one. */
export function resumeRefused(agent: string, message: string, resume: string, reason: string): SwitchboardError {
  return new SwitchboardError('AGENT_ERROR', message, { agent, resume, reason });
}

export class Turn {
  readonly entries: NormalizedEntry[] = [];
  readonly permissions: PermissionAnswer[] = [];
  readonly done: Promise<TurnResult>;
  /** Resolves when a cancel is asked, so that a question still open can be withdrawn. */
  readonly cancelled: Promise<undefined>;
  /** Someone asked to stop this turn (cancelTurn, the prompt's signal, close). */
  cancelRequested = false;
  /** Ends the process of an agent that does not stop a cancelled turn in time; cleared at the end. */
  cancelTimer: NodeJS.Timeout | undefined;
  private readonly started = performance.now();
  private result: TurnResult | undefined;
  private settle: ((result: TurnResult) => void) | undefined;
  private markCancelled: () => void = () => undefined;

  constructor() {
    this.done = new Promise((resolve) => {
      this.settle = resolve;
    });
    this.cancelled = new Promise((resolve) => {
      this.markCancelled = () => resolve(undefined);
    });
  }

  /** True once the turn has ended. */
  get over(): boolean {
    return this.result !== undefined;
  }

  /** Asks the turn to stop; false when that was asked already. */
  requestCancel(): boolean {
    if (this.cancelRequested) return false;
    this.cancelRequested = true;
    this.markCancelled();
    return true;
  }

  /** Ends the turn; the first ending is the result, whatever tries to end it later. */
  finish(status: EndStatus, stopReason: string | null): TurnResult {
    clearTimeout(this.cancelTimer);
    this.result ??= { status, entries: [...this.entries], permissions: [...this.permissions], stopReason, durationMs: Math.round(performance.now() - this.started) };
    this.settle?.(this.result);
    this.settle = undefined;
    return this.result;
  }
}

/** A turn that never started (its signal was aborted first). */
export function cancelledBeforeStart(): TurnResult {
  return { status: 'cancelled', entries: [], permissions: [], stopReason: 'cancelled before it started', durationMs: 0 };
}

/**
 * Where a conversation's entries go, for every driver: the session's log (until it is finished:
 * a closed session takes nothing more) and the turn under way, if any.
 */
export function recordEntries(log: MsgStore<NormalizedEntry>, turn: Turn | undefined, entries: readonly NormalizedEntry[]): void {
  for (const entry of entries) {
    if (!log.finished) log.push(entry);
    turn?.entries.push(entry);
  }
}
