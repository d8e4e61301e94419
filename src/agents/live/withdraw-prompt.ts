/**
 * Takes back a prompt that was typed but not submitted (the prompt's caller gave up on it: an ask
 * cancelled or timed out while its question went in). Left in the input box, the text would be
 * joined to the next prompt typed and both sent as one. Two steps: at the moment of the cancel,
 * the part the terminal has not taken yet is dropped (`stopTyping`, synchronous, so nothing more
 * goes in once the cancel returns); then what the CLI did read is erased with its line-editing
 * keys until the screen shows none of it (`clearTyped`).
 *
 * The keys, checked on the real CLIs (Claude Code 2.1.332, Codex 0.171.0, Gemini CLI 0.61.0,
 * OpenCode 1.18.33, multi-line text and paste placeholders alike, also sent in one burst): Ctrl+E
 * to the end of the line, Ctrl+U to erase back to its start, Backspace to join the line above
 * (Codex's Ctrl+U stops at a line's start). A paste placeholder ("[Pasted Content 3047 chars]")
 * goes as one character. On an empty box the keys do nothing, so a round too many is harmless.
 * Ctrl+C is not used: on an empty box it interrupts or quits.
 */
import { compileSafeRegex, escapeRegExp } from '../../core/safe-regex.js';
import type { Pane } from '../../pane/index.js';
import { untilScreen } from './dialog-answer.js';
import { findInputBox } from '../screen/structure.js';

/** The keys that erase one line of the input box, the cursor at its end (profile `input.clear_keys` overrides). */
export const DEFAULT_CLEAR_KEYS: readonly string[] = ['C-e', 'C-u', 'Backspace'];
/** Rounds of erasing, each checked on the screen. */
const CLEAR_ROUNDS = 4;
/** How long a round waits for the screen to show the box without the text. */
const CLEAR_SETTLE_MS = 2_000;
/** Lines erased in one round at most (a very long prompt takes several rounds). */
const MAX_LINES_PER_ROUND = 400;
/** Characters of the text's start looked for in the box. */
const HEAD_PROBE_CHARS = 8;
/** The end of a bracketed paste. */
const PASTE_END = '\x1b[201~';
/** How CLIs show a pasted text they fold away: "[Pasted text #1]", "[Pasted Content 1374 chars]", "[Pasted ~1 lines]". */
export const PASTE_PLACEHOLDER = /\[Pasted[^\]\n]{0,40}\]|Press Ctrl\+O to expand pasted|paste again to expand/i;

/** What was typed, for taking it back. */
export interface TypedPrompt {
  /** The text as it was written (after line-ending normalisation and any long-prompt reference). */
  text: string;
  /** It went as a bracketed paste. */
  bracketed: boolean;
  /** Bytes of it the terminal had not taken at the cancel (set by stopTyping). */
  withdrawn: number;
}

/** Drops the part of the prompt the terminal has not taken yet; synchronous, for an abort listener. */
export function stopTyping(pane: Pane, typed: TypedPrompt): void {
  typed.withdrawn += pane.withdrawUnsentInput();
}

/** The rows where typed text shows: from the input box down, or the whole screen when no input box can be found. */
export function inputRegion(lines: readonly string[]): readonly string[] {
  const box = findInputBox(lines);
  return box ? lines.slice(box.row) : lines;
}

/** A pattern for `chars` with any whitespace between them (TUIs wrap typed text anywhere). */
function probe(chars: string): RegExp | undefined {
  return chars.length > 0 ? compileSafeRegex(Array.from(chars, (c) => escapeRegExp(c)).join('\\s*')) : undefined;
}

/**
 * Whether the input box shows no part of `text`: neither its start (what a cut-off paste leaves),
 * nor its end, nor a paste placeholder.
 */
export function promptGone(text: string): (lines: readonly string[]) => boolean {
  const compact = text.trim().replace(/\s+/g, '');
  const lastLine = (text.trim().split('\n').pop() ?? '').replace(/\s+/g, '');
  // The start is probed short: a paste cut off early leaves only its first characters.
  const probes = [probe(compact.slice(0, HEAD_PROBE_CHARS)), probe(lastLine.slice(-24))].filter((p): p is RegExp => p !== undefined);
  return (lines) => {
    const joined = inputRegion(lines).join('\n');
    return !PASTE_PLACEHOLDER.test(joined) && !probes.some((p) => p.test(joined));
  };
}

/** The keys of one round of erasing `lineCount` lines: `keys` once per line, at most MAX_LINES_PER_ROUND. */
export function clearKeysFor(lineCount: number, keys: readonly string[] = DEFAULT_CLEAR_KEYS): string[] {
  const rounds = Math.max(1, Math.min(lineCount, MAX_LINES_PER_ROUND));
  return Array.from({ length: rounds }, () => [...keys]).flat();
}

/**
 * Erases what the CLI read of the prompt, once its typing was stopped: closes a bracketed paste the
 * cut left open (else the CLI would take the keys as pasted text), then erases a round at a time
 * until the screen shows none of the text. `working` says the CLI took the prompt after all (an
 * Enter already pressed): a turn is under way, and nothing is pressed into it. Resolves with
 * whether the box is clear.
 */
export async function clearTyped(pane: Pane, typed: TypedPrompt, options: { keys?: readonly string[]; working?: (lines: readonly string[]) => boolean } = {}): Promise<boolean> {
  const gone = promptGone(typed.text);
  const working = options.working ?? (() => false);
  // Read anew each time: the program may end while the keys go in.
  const ended = (): boolean => !pane.alive;
  if (ended()) return true;
  if (typed.bracketed && typed.withdrawn > 0) pane.write(PASTE_END);
  const lineCount = typed.text.split('\n').length;
  for (let round = 0; round < CLEAR_ROUNDS; round++) {
    const lines = pane.screenLines();
    if (ended() || working(lines)) return true;
    // The first round goes whatever the screen shows: the CLI may not have drawn the text yet.
    if (round > 0 && gone(lines)) return true;
    // One write: the keys reach the CLI after the text, in order, however late it reads them.
    pane.sendKeys(clearKeysFor(lineCount, options.keys));
    // A screen unchanged since the keys went says nothing yet (the CLI may still be reading the
    // text in): the box counts as clear once the CLI redrew it without the text, or, should it
    // redraw nothing, once the round's time is up with none of the text on screen.
    const before = lines.join('\n');
    if (await untilScreen(pane, (now) => gone(now) && now.join('\n') !== before, CLEAR_SETTLE_MS)) return true;
    if (ended()) return true;
  }
  return gone(pane.screenLines());
}
