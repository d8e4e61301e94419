/**
 * The request id an asker appends to its question, on a line of its own. Every transcript reader
 * finds the question by this line in the CLI's record of the user's prompt, and takes only what
 * follows that record as the reply, so two asks never read each other's answers, whatever else the
 * target was told in between.
 */
import { randomBytes } from 'node:crypto';
import { ASK_ID_SOURCE } from '../../contract/ask.js';

const ID_PATTERN = new RegExp(ASK_ID_SOURCE);
const MARKER = /\[switchboard ask ([0-9a-f]{10})\]/;
const MARKER_LINE = /\n?[ \t]*\[switchboard ask [0-9a-f]{10}\][ \t]*/g;

/** A fresh request id. */
export function newAskId(): string {
  return randomBytes(5).toString('hex');
}

/** True for a well-formed request id. */
export function isAskId(id: string): boolean {
  return ID_PATTERN.test(id);
}

/** The marker line for `id`. */
export function askMarker(id: string): string {
  return `[switchboard ask ${id}]`;
}

/** The question as typed into the target: the text, then the marker on a line of its own. */
export function markQuestion(question: string, id: string): string {
  return `${question.trimEnd()}\n${askMarker(id)}`;
}

/** The request id a prompt carries, or null. */
export function askIdIn(text: string): string | null {
  return MARKER.exec(text)?.[1] ?? null;
}

/** True when `text` (a user prompt as the CLI recorded it) carries `id`'s marker. */
export function carriesAsk(text: string, id: string): boolean {
  return text.includes(askMarker(id));
}

/** `text` without marker lines (a model may quote the marker back in its reply). */
export function withoutMarkers(text: string): string {
  return text.replace(MARKER_LINE, '').trim();
}
