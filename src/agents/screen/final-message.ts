/**
 * The agent's last reply, read off its screen: the lowest line the profile marks as the start of a
 * reply, and the lines that belong to it (indented continuations, paragraphs separated by one blank
 * line), without the CLI's chrome (rules, boxes, spinners, the prompt). Given the screen's width, the
 * rows a CLI broke a paragraph into at that width are joined again (unwrap-rows.ts): the reply comes
 * back with the model's own line breaks, not the terminal's.
 */
import type { AgentProfile } from '../profiles/profile.js';
import { lowestMatchOf } from './detect.js';
import type { ScreenPattern } from '../profiles/schema.js';
import { unwrapRows } from './unwrap-rows.js';

/** Rows of box drawing, rules and status glyphs: the CLI's furniture, never the reply. */
const CHROME = /^\s*([─━│┃╹╭╮╰╯▀▄▣✻✶✳✢·›❯>]|\? for shortcuts|esc to interrupt)/;

function matches(patterns: readonly ScreenPattern[], line: string): boolean {
  return lowestMatchOf(patterns, { lines: [line] }) !== undefined;
}

/** Removes a leading reply marker ("● ", "• ", "✦ ") and the indentation. */
function stripMarker(line: string): string {
  return line.replace(/^\s*[^\p{L}\p{N}\s"'`([{<*_-]{1,2}\s+/u, '').trim();
}

/**
 * The final reply on `lines`, or null when the profile has no reply patterns or none is on screen.
 * `task` is the prompt just sent: a reply line equal to it is the echo, not an answer. `cols`, the
 * screen's width, lets rows the CLI broke at that width join again (without it rows stay lines);
 * rows the terminal itself wrapped are joined before (`Screen.screenLines({ joinWrapped: true })`).
 */
export function extractFinalMessage(profile: AgentProfile, lines: readonly string[], task: string, version?: string, cols?: number): string | null {
  const screens = profile.screensFor(version);
  if (screens.reply_end.length > 0) return blockAbove(screens.reply_end, screens.chrome, lines, task, cols);
  if (screens.reply.length === 0) return null;
  const hit = lowestMatchOf(screens.reply, { lines });
  if (!hit) return null;
  const isReply = (i: number): boolean => matches(screens.reply, lines[i] ?? '');
  const blank = (i: number): boolean => (lines[i] ?? '').trim() === '';
  // Upwards: CLIs that mark every line of a reply (OpenCode indents them all alike).
  let top = hit.row;
  for (;;) {
    if (top > 0 && isReply(top - 1) && !CHROME.test(lines[top - 1] ?? '')) top -= 1;
    else if (top > 1 && blank(top - 1) && isReply(top - 2) && !CHROME.test(lines[top - 2] ?? '')) top -= 2;
    else break;
  }
  // Downwards: indented continuation lines, across single blank lines.
  let bottom = hit.row;
  const continues = (i: number): boolean => {
    const line = lines[i] ?? '';
    return /^\s/.test(line) && line.trim() !== '' && !CHROME.test(line) && !matches(screens.chrome, line) && !matches(screens.idle, line) && !matches(screens.busy, line);
  };
  for (;;) {
    if (continues(bottom + 1)) bottom += 1;
    else if (blank(bottom + 1) && continues(bottom + 2)) bottom += 2;
    else break;
  }
  const text = unwrapRows(lines.slice(top, bottom + 1), cols)
    .map((line, i) => (i === 0 ? stripMarker(line) : line))
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
  if (text === '' || text === task.trim()) return null;
  return text;
}

/** The block of lines right above the lowest `end` match, up to a blank line or the CLI's chrome. */
function blockAbove(end: readonly ScreenPattern[], chrome: readonly ScreenPattern[], lines: readonly string[], task: string, cols: number | undefined): string | null {
  const hit = lowestMatchOf(end, { lines });
  if (!hit) return null;
  let bottom = hit.row;
  while (bottom > 0 && (lines[bottom - 1] ?? '').trim() === '') bottom -= 1;
  let top = bottom;
  const partOfReply = (line: string): boolean => line.trim() !== '' && !CHROME.test(line) && !matches(chrome, line);
  while (top > 0 && partOfReply(lines[top - 1] ?? '')) top -= 1;
  const text = unwrapRows(lines.slice(top, bottom), cols)
    .map((line) => line.trim())
    .join('\n')
    .trim();
  return text === '' || text === task.trim() ? null : text;
}
