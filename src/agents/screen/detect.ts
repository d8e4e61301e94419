import { compileSafeRegex } from '../../core/safe-regex.js';
import { patternFlags, patternSource } from '../profiles/check-profile.js';
import type { Dialog, ScreenPattern, Screens } from '../profiles/schema.js';
import { findInputBox, findMenu, findWorkSign, type InputBox, type StructuralMenu, type WorkSign } from './structure.js';

/** What a screen shows, as far as a profile's patterns can tell. */
export type ScreenKind = 'dialog' | 'approval' | 'busy' | 'idle' | 'unknown';

// Evidence is the shared vocabulary (src/contract/): a state change carries it.
export type { Evidence } from '../../contract/agent-state.js';
import type { Evidence } from '../../contract/agent-state.js';

export interface Detection {
  kind: ScreenKind;
  /** The dialog on screen, for kind 'dialog'. */
  dialog?: Dialog;
  /** Which pattern decided, and the line it matched: the evidence for the decision. */
  evidence?: Evidence;
  /**
   * An error message from the model API on screen. Reported beside the kind, not as one: CLIs show
   * the error and go straight back to their prompt, so the screen is idle with an error on it.
   */
  error?: Evidence;
}

interface Compiled {
  regex: RegExp;
  rows: number | undefined;
  ansi: boolean;
  source: string;
}

const cache = new WeakMap<object, Compiled[]>();

/**
 * Profiles come from users too, and the screen text from the agent: patterns run on the linear-time
 * fallback engine (as clients' patterns do), so none can stall the daemon on a crafted screen.
 */
function compile(patterns: readonly ScreenPattern[]): Compiled[] {
  return patterns.map((p) => {
    const safe = compileSafeRegex(patternSource(p), patternFlags(p));
    const options = typeof p === 'string' ? { rows: undefined, ansi: false } : { rows: p.rows, ansi: p.ansi === true };
    return { regex: new RegExp(safe.source, `${safe.flags}g`), source: patternSource(p), ...options };
  });
}

function compiled(patterns: readonly ScreenPattern[]): Compiled[] {
  let c = cache.get(patterns);
  if (!c) {
    c = compile(patterns);
    cache.set(patterns, c);
  }
  return c;
}

/**
 * The rows a pattern looks at (all, or the last `rows` non-empty ones) joined into one text, with
 * each row's screen number and where it starts in the text.
 */
export function region(lines: readonly string[], rows: number | undefined): { text: string; rowOf: number[]; starts: number[] } {
  const picked: number[] = [];
  for (let i = 0; i < lines.length; i++) if (rows === undefined || (lines[i] ?? '').trim() !== '') picked.push(i);
  const rowOf = rows === undefined ? picked : picked.slice(-rows);
  const starts: number[] = [];
  let offset = 0;
  for (const row of rowOf) {
    starts.push(offset);
    offset += (lines[row] ?? '').length + 1;
  }
  return { text: rowOf.map((i) => lines[i] ?? '').join('\n'), rowOf, starts };
}

/** The index of the last start at or before `at` (binary search: screens are matched on every render). */
export function lineIndexAt(starts: readonly number[], at: number): number {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if ((starts[mid] ?? 0) <= at) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

type Match = Omit<Evidence, 'rule'>;

/** The screen as plain rows, and with colours when a caller has them (for `ansi` patterns). */
export interface ScreenRows {
  lines: readonly string[];
  ansiLines?: readonly string[];
}

/** The lowest match on screen of any of `patterns`. */
function lowestMatch(patterns: readonly ScreenPattern[], screen: ScreenRows): Match | undefined {
  const { lines } = screen;
  let best: Match | undefined;
  for (const c of compiled(patterns)) {
    const source = c.ansi ? screen.ansiLines : lines;
    if (!source) continue;
    const { text, rowOf, starts } = region(source, c.rows);
    const regex = c.regex;
    regex.lastIndex = 0;
    for (let m = regex.exec(text); m; m = regex.exec(text)) {
      // The line where the matched text starts (a leading \s* may begin on an earlier line).
      const at = m.index + (m[0].length - m[0].trimStart().length);
      const row = rowOf[lineIndexAt(starts, at)] ?? 0;
      if (!best || row > best.row) best = { pattern: c.source, line: (lines[row] ?? '').trim(), row };
      if (m[0].length === 0) regex.lastIndex += 1;
    }
  }
  return best;
}

/** The lowest match on screen of any of `patterns`, with its row and line (undefined when none). */
export function lowestMatchOf(patterns: readonly ScreenPattern[], screen: ScreenRows): Omit<Evidence, 'rule'> | undefined {
  return patterns.length === 0 ? undefined : lowestMatch(patterns, screen);
}

/** Matches only when every pattern matches; positioned at the lowest of them. */
function allMatch(patterns: readonly ScreenPattern[], screen: ScreenRows): Match | undefined {
  let lowest: Match | undefined;
  for (const p of patterns) {
    const m = lowestMatch([p], screen);
    if (!m) return undefined;
    if (!lowest || m.row > lowest.row) lowest = m;
  }
  return lowest;
}

/** What the screen's shape says, computed once per classification. */
interface Shape {
  menu: StructuralMenu | undefined;
  input: InputBox | undefined;
  work: WorkSign | undefined;
}

function shapeOf(lines: readonly string[]): Shape {
  const menu = findMenu(lines);
  return { menu, input: findInputBox(lines, menu), work: findWorkSign(lines) };
}

const evidenceAt = (rule: string, lines: readonly string[], row: number, pattern: string): Evidence => ({ rule, pattern, line: (lines[row] ?? '').trim(), row });

/**
 * Classifies a rendered screen with a profile's patterns, and with the screen's shape where the
 * patterns say nothing (a release they have not seen).
 *
 * Dialogs and approval prompts are modal: while one is live, the CLI draws nothing interactive
 * below it. One with the idle prompt below it is history (a trust dialog left on screen after a
 * restart), and is ignored. A menu waiting for a choice that no pattern explains is a dialog of
 * unknown meaning: nothing answers it by policy, so an unknown offer is never taken for an
 * approval or an idle prompt. Signs of work win over the idle prompt, which some CLIs keep drawn
 * under their spinner. Error messages are reported on the side: CLIs show them and go straight back
 * to their prompt.
 */
export function detectScreen(screens: Screens, screen: ScreenRows | readonly string[]): Detection {
  const rows: ScreenRows = Array.isArray(screen) ? { lines: screen as readonly string[] } : (screen as ScreenRows);
  const { lines } = rows;
  const errorMatch = lowestMatch(screens.error, rows);
  const idleMatch = lowestMatch(screens.idle, rows);
  const shape = shapeOf(lines);
  // The lowest row that takes typing: anything modal drawn above it is history.
  const typingRow = Math.max(idleMatch?.row ?? -1, shape.input?.row ?? -1);
  const live = (row: number): boolean => typingRow < 0 || typingRow <= row;
  const decide = (): Detection => {
    for (const dialog of screens.dialogs) {
      const m = allMatch(dialog.when, rows);
      if (m && live(m.row)) return { kind: 'dialog', dialog, evidence: { rule: `dialog:${dialog.id}`, ...m } };
    }
    const approval = lowestMatch(screens.approval, rows);
    if (approval && live(approval.row)) return { kind: 'approval', evidence: { rule: 'approval', ...approval } };
    const menu = shape.menu;
    if (menu && live(menu.top) && !(idleMatch && idleMatch.row > menu.bottom)) {
      const chosen = menu.options.find((o) => o.selected) ?? menu.options[0];
      return { kind: 'dialog', evidence: evidenceAt('structure:menu', lines, chosen?.row ?? menu.top, 'a menu waiting for a choice') };
    }
    const busy = lowestMatch(screens.busy, rows);
    if (busy) return { kind: 'busy', evidence: { rule: 'busy', ...busy } };
    if (shape.work?.kind === 'interrupt') return { kind: 'busy', evidence: evidenceAt('structure:work', lines, shape.work.row, 'a hint on how to interrupt') };
    if (shape.work?.kind === 'progress') return { kind: 'busy', evidence: evidenceAt('structure:work', lines, shape.work.row, 'a progress bar') };
    const open = openTurn(screens, rows, shape.input?.row, idleMatch?.row);
    if (open) return { kind: 'busy', evidence: { rule: 'turn_open', ...open } };
    if (idleMatch) return { kind: 'idle', evidence: { rule: 'idle', ...idleMatch } };
    if (shape.work) return { kind: 'busy', evidence: evidenceAt('structure:work', lines, shape.work.row, 'a spinner row') };
    if (shape.input) return { kind: 'idle', evidence: evidenceAt('structure:input', lines, shape.input.row, 'the input box') };
    return { kind: 'unknown' };
  };
  const detection = decide();
  return errorMatch ? { ...detection, error: { rule: 'error', ...errorMatch } } : detection;
}

/** The rows from `from` up to (not including) `to`, plain and with colours, as one screen. */
function slice(screen: ScreenRows, from: number, to: number): ScreenRows {
  return { lines: screen.lines.slice(from, to), ...(screen.ansiLines ? { ansiLines: screen.ansiLines.slice(from, to) } : {}) };
}

/**
 * A turn still open, for a CLI that says when a turn ends (`turn`) but draws nothing while its
 * reply streams: a reply below the latest prompt given, above the input row, with no end row,
 * error or refusal notice after the prompt. Once the prompt scrolled away, the whole screen above
 * the input is the turn; a reply whose first row went too (or that the CLI redrew under its
 * prompt without it) shows by continued rows only, from the first row under the prompt or the
 * screen's top row down to the input (a start-up screen begins with a blank row or its banner; a
 * slash command's output is a box or rows of its own). The reply row is the evidence.
 */
function openTurn(screens: Screens, screen: ScreenRows, inputBox: number | undefined, idleRow: number | undefined): Match | undefined {
  const turn = screens.turn;
  if (!turn) return undefined;
  // The input row: the box the shape found, else the lowest prompt-like row at or above the idle
  // footer (Codex's input row looks like a prompt given: "› Ask Codex to do anything").
  const inputRow = inputBox ?? (idleRow === undefined ? undefined : lowestMatchOf(turn.prompt, slice(screen, 0, idleRow + 1))?.row);
  if (inputRow === undefined) return undefined;
  const prompt = lowestMatchOf(turn.prompt, slice(screen, 0, inputRow));
  const from = prompt ? prompt.row + 1 : 0;
  const rows = slice(screen, from, inputRow);
  if (lowestMatchOf([...turn.end, ...screens.error, ...screens.interrupted], rows)) return undefined;
  const reply = lowestMatchOf(screens.reply, rows);
  if (reply) return { ...reply, row: reply.row + from };
  // No reply mark: text that goes on from above, from the first row under the prompt or the
  // screen's top row down to the input, every row of it a reply's continued row (a slash command's
  // output, a box, a banner is something else).
  const at = prompt ? rows.lines.findIndex((l) => l.trim() !== '') : 0;
  if (at < 0) return undefined;
  const first = lowestMatchOf(turn.continued, { lines: [rows.lines[at] ?? ''] });
  const goesOn = (line: string): boolean => line.trim() === '' || lowestMatchOf(turn.continued, { lines: [line] }) !== undefined;
  return first && rows.lines.slice(at + 1).every(goesOn) ? { ...first, row: from + at } : undefined;
}
