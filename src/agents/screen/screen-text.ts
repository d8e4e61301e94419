/**
 * Reading an agent's screen for what a turn needs beyond its state: the reply marks drawn since a
 * prompt went in (and below its echo), and the whole of an error message around the row where it
 * was seen.
 */
import { lowestMatchOf } from './detect.js';
import { isRule, withoutSidePanel } from './structure.js';
import type { Screens } from '../profiles/schema.js';

/** Box sides and bars a CLI draws around a message. */
const FRAME = /^[\s┃│▌▐|]+|[\s┃│▌▐|]+$/g;

/** Rows that mark a reply (its first row, or the row after it), by the profile's patterns. */
export function countReplies(screens: Screens, lines: readonly string[]): number {
  const patterns = [...screens.reply, ...screens.reply_end];
  if (patterns.length === 0) return 0;
  let n = 0;
  for (const line of lines) if (lowestMatchOf(patterns, { lines: [line] })) n++;
  return n;
}

/** How much of a prompt's end is looked for on screen: enough to be its own, little enough to stay in view. */
const PROMPT_END_CHARS = 24;

/**
 * Reply marks below the last row where `prompt`'s end shows, or undefined when it shows nowhere.
 * A full-screen CLI scrolls its own conversation, so the mark of the turn before may leave the
 * view as this turn's is drawn and a count of marks stays the same (OpenCode after a 20 KB prompt:
 * one mark before, one after); a mark under the prompt's echo is a reply to it. The end is matched
 * with whitespace and the frame a CLI draws around a message taken out, as the CLI may wrap it.
 */
export function repliesBelowPrompt(screens: Screens, lines: readonly string[], prompt: string): number | undefined {
  const end = squeezeRow(prompt.trim().split('\n').pop() ?? '').slice(-PROMPT_END_CHARS);
  if (end.length === 0) return undefined;
  // The rows squeezed into one string, with where each row ends in it.
  let joined = '';
  const rowEnds: number[] = [];
  for (const line of lines) {
    joined += squeezeRow(line);
    rowEnds.push(joined.length);
  }
  const at = joined.lastIndexOf(end);
  if (at < 0) return undefined;
  const lastRow = rowEnds.findIndex((e) => e >= at + end.length);
  return countReplies(screens, lines.slice(lastRow + 1));
}

/** A row without the frame around a message and without whitespace. */
function squeezeRow(row: string): string {
  return row.replace(FRAME, '').replace(/\s+/g, '');
}

/** A progress bar before a footer's message (OpenCode retrying: "⬝⬝■■ <message> [retrying …]"). */
const PROGRESS = /^[■⬝▰▱]{4,}\s*/;
/** A key hint drawn far right of a message ("esc interrupt"). */
const KEY_HINT = /\s{3,}(?:esc|ctrl\+|tab\b)[^\n]*$/i;

/**
 * The whole error message around `row`, where the error pattern matched: CLIs that mark an error
 * by colour (OpenCode's red bar) mark every row of it, so the run of marked rows is the message;
 * otherwise the matched line and the lines right below it, up to a blank one.
 */
export function errorText(screens: Screens, screen: { lines: readonly string[]; ansiLines: readonly string[] }, row: number | undefined, fallback: string): string {
  if (row === undefined) return fallback;
  const { ansiLines } = screen;
  // A side panel beside the message (OpenCode's at 200 columns) is not part of it.
  const lines = withoutSidePanel(screen.lines);
  const marked = (i: number): boolean => i >= 0 && i < lines.length && lowestMatchOf(screens.error, { lines: [lines[i] ?? ''], ansiLines: [ansiLines[i] ?? ''] }) !== undefined;
  let top = row;
  let bottom = row;
  while (row - top < 8 && marked(top - 1)) top -= 1;
  while (bottom - row < 8 && marked(bottom + 1)) bottom += 1;
  // Rows right below, up to a blank one or a rule (an input box under the message is not part of it).
  if (top === bottom) while (bottom - row < 5 && (lines[bottom + 1] ?? '').replace(FRAME, '') !== '' && !isRule(lines[bottom + 1])) bottom += 1;
  const text = lines
    .slice(top, bottom + 1)
    .map((l) => l.replace(FRAME, '').replace(PROGRESS, '').replace(KEY_HINT, ''))
    .filter((l) => l !== '')
    .join(' ');
  return text === '' ? fallback : text;
}
