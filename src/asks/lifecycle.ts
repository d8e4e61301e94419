/**
 * One ask's life as an explicit state machine: queued → typing → waiting → done, or failed, timed
 * out or cancelled from any state before that. `stepAsk` is pure: the engine feeds it events and
 * keeps what it returns; an event a state does not take leaves the state as it was.
 */
import type { ErrorCode } from '../core/errors.js';

export const ASK_STATUSES = ['queued', 'typing', 'waiting', 'done', 'failed', 'timed_out', 'cancelled'] as const;
export type AskStatus = (typeof ASK_STATUSES)[number];
const FINAL_STATUSES: readonly AskStatus[] = ['done', 'failed', 'timed_out', 'cancelled'];

/** Where the reply was read. */
type ReplySource = 'transcript' | 'screen';

export interface AskLife {
  status: AskStatus;
  /** Milliseconds since the epoch. */
  createdAt: number;
  /** Typing began (the target was idle, and this ask first in its line). */
  startedAt: number | null;
  /** The target's CLI showed it took the question. */
  typedAt: number | null;
  endedAt: number | null;
  reply: string | null;
  replySource: ReplySource | null;
  /** The record (or screen) that ended the target's turn, and when the CLI wrote it. */
  endSignal: string | null;
  endRecordAt: number | null;
  /** The transcript file (or database) the reply came from. */
  transcript: string | null;
  error: { code: ErrorCode; message: string } | null;
}

export type AskEvent =
  | { type: 'start'; at: number }
  | { type: 'typed'; at: number }
  | { type: 'reply'; at: number; reply: string; source: ReplySource; endSignal: string | null; endRecordAt: number | null; transcript: string | null }
  | { type: 'fail'; at: number; code: ErrorCode; message: string }
  | { type: 'timeout'; at: number; message: string }
  | { type: 'cancel'; at: number };

/** A new ask, waiting in its target's line. */
export function newAskLife(at: number): AskLife {
  return { status: 'queued', createdAt: at, startedAt: null, typedAt: null, endedAt: null, reply: null, replySource: null, endSignal: null, endRecordAt: null, transcript: null, error: null };
}

export function isFinal(status: AskStatus): boolean {
  return FINAL_STATUSES.includes(status);
}

/** The state after `event`. */
export function stepAsk(life: AskLife, event: AskEvent): AskLife {
  if (isFinal(life.status)) return life;
  switch (event.type) {
    case 'start':
      return life.status === 'queued' ? { ...life, status: 'typing', startedAt: event.at } : life;
    case 'typed':
      return life.status === 'typing' ? { ...life, status: 'waiting', typedAt: event.at } : life;
    case 'reply':
      return life.status === 'waiting'
        ? { ...life, status: 'done', endedAt: event.at, reply: event.reply, replySource: event.source, endSignal: event.endSignal, endRecordAt: event.endRecordAt, transcript: event.transcript }
        : life;
    case 'fail':
      return { ...life, status: 'failed', endedAt: event.at, error: { code: event.code, message: event.message } };
    case 'timeout':
      return { ...life, status: 'timed_out', endedAt: event.at, error: { code: 'TIMEOUT', message: event.message } };
    case 'cancel':
      return { ...life, status: 'cancelled', endedAt: event.at };
  }
}

/**
 * Delivery of an async ask's outcome into the asker's pane: once, when the asker is idle.
 * `none` for asks whose caller waits (or has no pane to deliver to); `pending` from the ask's
 * creation until its outcome is being typed (the ask still under way, or the asker busy);
 * `delivering` while it is typed; then `delivered`, or `failed` (never typed again).
 */
export type DeliveryStatus = 'none' | 'pending' | 'delivering' | 'delivered' | 'failed';

export type DeliveryEvent = { type: 'begin' } | { type: 'delivered' } | { type: 'failed' };

export function stepDelivery(status: DeliveryStatus, event: DeliveryEvent): DeliveryStatus {
  switch (event.type) {
    case 'begin':
      return status === 'pending' ? 'delivering' : status;
    case 'delivered':
      return status === 'delivering' ? 'delivered' : status;
    case 'failed':
      return status === 'pending' || status === 'delivering' ? 'failed' : status;
  }
}
