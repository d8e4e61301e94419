/**
 * Gives an agent a prompt the way a person would: with each CLI's input quirks, and never into a
 * dialog. CLIs open some first-run dialogs late (Codex's model nudge arrives once its model list
 * loads, after the idle prompt was already drawn); text and Enter typed then would pick the
 * dialog's default and the prompt would be lost. So a dialog in the way is answered by the
 * first-run policy first, and a prompt whose echo never came is looked at again before Enter.
 */
import { compileSafeRegex } from '../core/safe-regex.js';
import { SwitchboardError } from '../core/errors.js';
import { waitForScreen, type Pane } from '../pane/index.js';
import { detectScreen } from './detect.js';
import { answerDialog, decideDialog, DEFAULT_FIRST_RUN_POLICY, untilScreen, type FirstRunPolicy } from './dialog-answer.js';
import type { Dialog, ProfileData, Screens } from './schema.js';

const escapeRegex = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** How the prompt goes in, and what is in its way. */
export interface PromptTarget {
  input: ProfileData['input'];
  /** The agent's screens: with them, a dialog in the way is answered before the prompt is typed. */
  screens?: Screens;
  /** How to answer such a dialog (default: DEFAULT_FIRST_RUN_POLICY). */
  policy?: FirstRunPolicy;
}

/** Answers to one dialog before it counts as stuck (a lost key, then the CLI's slow reaction). */
const MAX_ANSWERS_PER_DIALOG = 3;
/** How long an answered dialog may stay on screen before it is answered again. */
const DIALOG_GONE_TIMEOUT_MS = 3_000;
/** After answering, how long to wait for the idle prompt (a CLI may restart after a trust answer). */
const IDLE_AFTER_DIALOG_TIMEOUT_MS = 15_000;
/** The idle prompt must hold this long to count as back. */
const IDLE_HOLD_MS = 400;
/** Typed text shorter than this (without spaces) could be a menu's own words: it cannot mark a dialog as history. */
const MIN_PROBE_CHARS = 4;

/**
 * Types `text` into the agent and submits it: multi-line text pasted (bracketed), a single line
 * typed; then, once the text shows in the input box (or after a short wait), Enter as its own
 * write, because Codex and Gemini read text and Enter in one burst as a paste and submit nothing.
 */
export async function sendPrompt(pane: Pane, target: PromptTarget, text: string, signal?: AbortSignal): Promise<void> {
  const { input } = target;
  await answerDialogsInTheWay(pane, target, signal);
  signal?.throwIfAborted();
  // A bare CR is Enter to a terminal, as much as LF is: either makes a prompt multi-line.
  const normalized = text.replace(/\r\n?/g, '\n');
  const type = (): void => {
    if (normalized.includes('\n') && input.paste_multiline) pane.paste(normalized, 'auto');
    else pane.sendText(normalized.replace(/\n/g, ' '));
  };
  type();
  if (!input.separate_enter) {
    pane.sendKeys(['Enter']);
    return;
  }
  // The end of the text is what shows last; TUIs may wrap it (so any whitespace may fall between
  // its characters) or scroll its start away.
  const probe = (normalized.trim().split('\n').pop() ?? '').replace(/\s+/g, '').slice(-24);
  const pattern = probe.length > 0 && input.echo_timeout_ms > 0 ? compileSafeRegex(Array.from(probe, (c) => escapeRegex(c)).join('\\s*')) : undefined;
  const pause = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, input.enter_delay_ms));
  const echo = async (): Promise<void> => {
    if (pattern) await waitForScreen(pane, { pattern, timeoutMs: input.echo_timeout_ms, signal });
    if (input.enter_delay_ms > 0) await pause();
  };
  await echo();
  // A dialog that opened while the text went in would take the Enter: answer it first, and type
  // the text again if the dialog swallowed it. Our own text drawn below a dialog shows that dialog
  // is history (Gemini leaves its trust box on screen after a restart, and typed text hides the
  // idle placeholder that would otherwise say so); a text too short to tell apart from a menu's
  // own words ("y", "1") cannot show that.
  const typed = probe.length >= MIN_PROBE_CHARS ? probe : undefined;
  for (let round = 0; round < 2 && (await answerDialogsInTheWay(pane, target, signal, typed)); round++) {
    signal?.throwIfAborted();
    if (pattern && !pattern.test(pane.screenLines().join('\n'))) {
      type();
      await echo();
    }
  }
  signal?.throwIfAborted();
  if (pane.alive) pane.sendKeys(['Enter']);
}

/**
 * Answers whatever first-run dialog is on screen, by policy, until none is and the CLI has settled
 * (its idle prompt back, or, with text typed, no dialog for a moment); a dialog that opens while it
 * settles is answered too. Resolves true when it answered something.
 */
async function answerDialogsInTheWay(pane: Pane, target: PromptTarget, signal?: AbortSignal, typed?: string): Promise<boolean> {
  const { screens } = target;
  if (!screens) return false;
  const dialogNow = (lines: readonly string[] = pane.screenLines()): Dialog | undefined => {
    const seen = detectScreen(screens, { lines });
    if (!seen.dialog || !seen.evidence) return undefined;
    if (typed !== undefined && lines.slice(seen.evidence.row + 1).join('').replace(/\s+/g, '').includes(typed)) return undefined;
    return seen.dialog;
  };
  const answers = new Map<string, number>();
  for (;;) {
    signal?.throwIfAborted();
    const dialog = dialogNow();
    if (!dialog) {
      if (answers.size === 0) return false;
      if ((await settleAfterAnswers(pane, screens, dialogNow, typed !== undefined, signal)) === 'settled') return true;
      continue;
    }
    if (!pane.alive) return answers.size > 0;
    const count = (answers.get(dialog.id) ?? 0) + 1;
    if (count > MAX_ANSWERS_PER_DIALOG) {
      throw new SwitchboardError('TIMEOUT', `the agent's ${dialog.id} dialog is still on screen after ${MAX_ANSWERS_PER_DIALOG} answers; answer it in the pane`, { pane_id: pane.id, dialog: dialog.id });
    }
    answers.set(dialog.id, count);
    const id = dialog.id;
    await answerDialog(pane, dialog, decideDialog(dialog, target.policy ?? DEFAULT_FIRST_RUN_POLICY), signal).catch(() => undefined);
    await untilScreen(pane, (lines) => dialogNow(lines)?.id !== id, DIALOG_GONE_TIMEOUT_MS, signal);
  }
}

/**
 * After an answer: waits until the CLI is ready for text (the idle prompt held for IDLE_HOLD_MS;
 * with text already typed, which hides the idle marker, the screen free of dialogs for as long),
 * or until a new dialog opens. Gives up after IDLE_AFTER_DIALOG_TIMEOUT_MS and lets the caller go on.
 */
async function settleAfterAnswers(pane: Pane, screens: Screens, dialogNow: (lines?: readonly string[]) => Dialog | undefined, textTyped: boolean, signal?: AbortSignal): Promise<'dialog' | 'settled'> {
  const deadline = performance.now() + IDLE_AFTER_DIALOG_TIMEOUT_MS;
  const ready = (lines: readonly string[]): boolean => textTyped || detectScreen(screens, { lines }).kind === 'idle';
  while (performance.now() < deadline && pane.alive && !signal?.aborted) {
    const arrived = await untilScreen(pane, (lines) => dialogNow(lines) !== undefined || ready(lines), deadline - performance.now(), signal);
    if (dialogNow()) return 'dialog';
    if (!arrived) return 'settled';
    const left = await untilScreen(pane, (lines) => dialogNow(lines) !== undefined || !ready(lines), IDLE_HOLD_MS, signal);
    if (dialogNow()) return 'dialog';
    if (!left) return 'settled';
  }
  return 'settled';
}
