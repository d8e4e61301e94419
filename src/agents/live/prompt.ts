/**
 * Gives an agent a prompt the way a person would, and makes sure it arrived. A long prompt is
 * pasted (bracketed, as a terminal pastes), because Codex and Gemini take a long typed line for a
 * paste anyway and then swallow the Enter after it; the submit key goes once the CLI shows the
 * text or its placeholder for it ("[Pasted Content 1374 chars]"); and the prompt counts as sent
 * only when the CLI shows it took it (it starts working, or its input box empties), with Enter
 * pressed again while the text still sits in the box (for as long as the profile's patience). A dialog in the way is answered first by the
 * pane's dialog responder, never typed into.
 */
import { compileSafeRegex, escapeRegExp } from '../../core/safe-regex.js';
import { SwitchboardError } from '../../core/errors.js';
import type { Pane } from '../../pane/index.js';
import { detectScreen } from '../screen/detect.js';
import { untilScreen, DEFAULT_FIRST_RUN_POLICY, type FirstRunPolicy } from './dialog-answer.js';
import { DialogResponder, dialogResponderOf } from './dialog-responder.js';
import type { ProfileData, Screens } from '../profiles/schema.js';
import { findInputBox } from '../screen/structure.js';
import { longPromptReference } from './long-prompt.js';
import { clearTyped, inputRegion, PASTE_PLACEHOLDER, stopTyping, type TypedPrompt } from './withdraw-prompt.js';

/** How the prompt goes in, and what is in its way. */
export interface PromptTarget {
  input: ProfileData['input'];
  /** The agent's screens: with them, dialogs are answered and the submission is confirmed. */
  screens?: Screens;
  /** How to answer a dialog in the way when the pane has no responder of its own (default: DEFAULT_FIRST_RUN_POLICY). */
  policy?: FirstRunPolicy;
}

/** How a prompt was delivered. */
export interface PromptSubmission {
  /**
   * What showed the CLI took it: it started working (or asking), its input box emptied, or it ended
   * (a one-shot program); `unconfirmed` when nothing on screen could tell (no profile screens, no
   * input box found, and no work seen).
   */
  confirmedBy: 'work' | 'input cleared' | 'exited' | 'unconfirmed';
  /** Enter presses it took (more than one when the CLI swallowed one). */
  enters: number;
  /** True when the prompt was pasted rather than typed. */
  pasted: boolean;
}

/** Prompts longer than this (or with a line break) are pasted: typed, CLIs read them as a paste and lose the Enter. */
const PASTE_THRESHOLD_CHARS = 200;

/** How a prompt is typed into a program that has no agent profile (a shell, a REPL): the one default. */
export const PLAIN_PROGRAM_INPUT: ProfileData['input'] = { separate_enter: true, echo_timeout_ms: 500, enter_delay_ms: 50, paste_multiline: true, submit_patience_ms: 15_000 };
/** Longest wait for a pasted prompt to show (a large paste takes the CLI a moment to take in). */
const PASTE_ECHO_TIMEOUT_MS = 5_000;
/**
 * After each Enter, how long to wait for a sign the prompt was taken before looking at the input
 * box again; the waits grow, because a CLI may ignore Enter for seconds after a large paste (Codex
 * 0.169.0 ignored it 2 s after a 200 KB paste and took it at 4 s). Past the table, every wait is
 * its last, until the profile's `input.submit_patience_ms` is spent.
 */
const SUBMIT_CONFIRM_MS = [1_500, 2_000, 3_000, 4_000, 5_000] as const;
const LONGEST_CONFIRM_MS = 5_000;
/** Enter presses for one prompt at most, however long the profile's patience. */
const MAX_ENTERS = 20;
/** How long the screen must hold still before Enter is pressed again for text still in the box. */
const STILL_MS = 300;
/** The longest wait for a screen that keeps changing to hold still. */
const STILL_MAX_MS = 3_000;
/** The rows a NOT_DELIVERED carries, from the last one in use up: the input box and what is above it. */
const ROWS_IN_ERROR = 12;
/** With the text gone from the box but no work seen yet, how long to keep watching. */
const WORK_PATIENCE_MS = 5_000;
/** A dialog in the way may take this long to be answered and gone (a CLI restarting after a trust answer). */
const DIALOG_CLEAR_TIMEOUT_MS = 15_000;
/** After a dialog was answered, the idle prompt must hold this long before typing (a restart redraws it). */
const IDLE_HOLD_MS = 400;

/**
 * Types or pastes `text` into the agent and submits it; resolves once the CLI took it. Throws
 * TIMEOUT when a dialog in the way cannot be answered, and NOT_DELIVERED when the text still sat in
 * the input box after every Enter.
 */
export async function sendPrompt(pane: Pane, target: PromptTarget, text: string, signal?: AbortSignal): Promise<PromptSubmission> {
  const { input, screens } = target;
  // A pane started by startAgent has its own responder; any other gets one for the prompt's length.
  const own = dialogResponderOf(pane);
  const responder = own ?? (screens ? new DialogResponder(pane, screens, target.policy ?? DEFAULT_FIRST_RUN_POLICY) : undefined);
  try {
    const answeredBefore = responder?.answered.length ?? 0;
    await dialogsOutOfTheWay(pane, responder, signal);
    if (screens && responder && responder.answered.length > answeredBefore) await idleHeld(pane, screens, signal);
    signal?.throwIfAborted();
    // A bare CR is Enter to a terminal, as much as LF is: either makes a prompt multi-line. A
    // prompt too long for the CLI to take goes by a file it reads (input.long_prompt).
    const normalized = longPromptReference(pane, text.replace(/\r\n?/g, '\n'));
    const paste = normalized.includes('\n') ? input.paste_multiline : normalized.length > PASTE_THRESHOLD_CHARS;
    const typed: TypedPrompt = { text: paste ? normalized : normalized.replace(/\n/g, ' '), bracketed: false, withdrawn: 0 };
    const type = (): void => {
      if (paste) typed.bracketed = pane.paste(normalized, 'auto') || typed.bracketed;
      else pane.sendText(typed.text);
    };
    // From the first key on, a cancel stops the typing at once (what the terminal has not taken
    // is dropped, in the abort itself), and what the CLI read of it is erased before this returns:
    // left in the box, it would be sent with the next prompt as one.
    const stop = (): void => stopTyping(pane, typed);
    signal?.addEventListener('abort', stop, { once: true });
    try {
      return await typeAndSubmit(pane, target, responder, type, normalized, paste, signal);
    } catch (err) {
      if (signal?.aborted) {
        const working = screens ? (lines: readonly string[]): boolean => workingOn(screens, responder, lines) : undefined;
        // Erasing is best effort: the abort is what the caller hears of.
        await clearTyped(pane, typed, { ...(input.clear_keys ? { keys: input.clear_keys } : {}), ...(working ? { working } : {}) }).catch(() => false);
      }
      throw err;
    } finally {
      signal?.removeEventListener('abort', stop);
    }
  } finally {
    if (!own) responder?.dispose();
  }
}

/** Types the prompt (`type`), waits for it to show, and submits it; the steps after a dialog is out of the way. */
async function typeAndSubmit(pane: Pane, target: PromptTarget, responder: DialogResponder | undefined, type: () => void, normalized: string, paste: boolean, signal?: AbortSignal): Promise<PromptSubmission> {
  const { input, screens } = target;
  const answeredAtType = responder?.answered.length ?? 0;
  type();
  if (!input.separate_enter) {
    pane.sendKeys(['Enter']);
    return { confirmedBy: 'unconfirmed', enters: 1, pasted: paste };
  }
  const shown = textShown(normalized);
  const echoTimeout = paste ? Math.max(input.echo_timeout_ms, PASTE_ECHO_TIMEOUT_MS) : input.echo_timeout_ms;
  const echo = async (): Promise<boolean> => {
    const seen = echoTimeout > 0 ? await untilScreen(pane, (lines) => shown(inputRegion(lines)), echoTimeout, signal) : false;
    signal?.throwIfAborted();
    if (input.enter_delay_ms > 0) await sleep(input.enter_delay_ms);
    signal?.throwIfAborted();
    return seen;
  };
  await echo();
  // A dialog that opened while the text went in would take the Enter: have it answered first,
  // and type the text again if the dialog swallowed it. Whether it did shows only once the
  // prompt is back and holds still: Codex 0.171 puts the draft back a frame after its model
  // nudge closes, and typing into the blank frame between doubled the prompt.
  if (responder) {
    await dialogsOutOfTheWay(pane, responder, signal);
    const dialogCame = responder.answered.length > answeredAtType;
    if (dialogCame && screens) await idleHeld(pane, screens, signal);
    if (dialogCame && !shown(inputRegion(pane.screenLines()))) {
      type();
      await echo();
    }
  }
  signal?.throwIfAborted();
  if (!pane.alive) return { confirmedBy: 'exited', enters: 0, pasted: paste };
  if (!screens) {
    pane.sendKeys(['Enter']);
    return { confirmedBy: 'unconfirmed', enters: 1, pasted: paste };
  }
  return await submit(pane, screens, responder, shown, paste, input.submit_patience_ms, signal);
}

/**
 * Presses Enter until the CLI shows it took the prompt. Enter is pressed again only while the input
 * box can be seen still holding the text (a swallowed Enter); where no input box can be found, a
 * second Enter could submit twice, so the prompt is left unconfirmed instead.
 */
async function submit(pane: Pane, screens: Screens, responder: DialogResponder | undefined, shown: (lines: readonly string[]) => boolean, pasted: boolean, patienceMs: number, signal?: AbortSignal): Promise<PromptSubmission> {
  const working = (lines: readonly string[]): boolean => workingOn(screens, responder, lines);
  /**
   * Gives work a moment to show. With `watchBox`, the text coming back into the box ends the wait
   * as 'handed back': a CLI may empty its box on Enter and hand the text back untaken (OpenCode,
   * busy with a 20 KB paste, put it back whole 3.5 s later, and the task waited for a turn that
   * never started).
   */
  const waitForWork = async (enters: number, otherwise: PromptSubmission['confirmedBy'], watchBox = false): Promise<PromptSubmission | 'handed back'> => {
    const handedBack = (now: readonly string[]): boolean => watchBox && !working(now) && shown(inputRegion(now));
    const settled = await untilScreen(pane, (now) => working(now) || handedBack(now), WORK_PATIENCE_MS, signal);
    if (settled && handedBack(pane.screenLines())) return 'handed back';
    return { confirmedBy: settled ? 'work' : pane.alive ? otherwise : 'exited', enters, pasted };
  };
  /**
   * Before Enter is pressed again: the screen must hold still with the text still in the box. A
   * frame between two is no swallowed Enter: Gemini CLI 0.61 hides its input box while it draws an
   * approval, and the prompt's own echo above it is boxed the same way, so an Enter pressed on that
   * frame answered the approval with nobody's decision.
   */
  const readyForEnter = async (enters: number): Promise<PromptSubmission | 'press'> => {
    for (;;) {
      const now = await stillScreen(pane, working, signal);
      if (working(now)) return { confirmedBy: 'work', enters, pasted };
      if (shown(inputRegion(now))) return 'press';
      const box = findInputBox(now) !== undefined;
      const taken = await waitForWork(enters, box ? 'input cleared' : 'unconfirmed', box);
      signal?.throwIfAborted();
      if (taken !== 'handed back') return taken;
    }
  };
  const firstEnterAt = performance.now();
  let enters = 0;
  // A dialog answered on the last Enter took that Enter: one more is owed, however late it is.
  let owed = false;
  while (enters === 0 || ((performance.now() - firstEnterAt < patienceMs || owed) && enters < MAX_ENTERS)) {
    if (enters > 0) {
      const ready = await readyForEnter(enters);
      if (ready !== 'press') return ready;
    }
    enters++;
    owed = false;
    const before = pane.screenLines().join('\n');
    const answered = responder?.answered.length ?? 0;
    // The program may end at any moment (one that exits once it has its input already did).
    if (gone(pane)) return { confirmedBy: 'exited', enters: enters - 1, pasted };
    pane.sendKeys(['Enter']);
    const took = (lines: readonly string[]): boolean => working(lines) || (!shown(inputRegion(lines)) && lines.join('\n') !== before);
    await untilScreen(pane, took, SUBMIT_CONFIRM_MS[enters - 1] ?? LONGEST_CONFIRM_MS, signal);
    signal?.throwIfAborted();
    // A program that ends once it has its input (a script, a one-shot CLI) took it.
    if (gone(pane)) return { confirmedBy: 'exited', enters, pasted };
    // A dialog that opened on the Enter (a late model nudge) took that Enter: once it is answered,
    // the text still showing means it still waits to be sent.
    if (responder && !responder.clear) await dialogsOutOfTheWay(pane, responder, signal);
    const intervened = (responder?.answered.length ?? 0) > answered;
    // As before the first Enter: whether the text is still there shows only once the prompt is
    // back and holds still (Codex 0.171 draws a blank box for a frame before it puts the draft
    // back, which read as a prompt taken, with the text still waiting in the box).
    if (intervened) await idleHeld(pane, screens, signal);
    // Judged on a whole frame: a loaded daemon can read a redraw between two chunks of the CLI's
    // output, and an erased half-frame read as the text taken, with no input box to watch (CI saw
    // Gemini's prompt left in its box so, its Enter taken as a line break).
    const lines = await stillScreen(pane, working, signal);
    if (working(lines)) return { confirmedBy: 'work', enters, pasted };
    if (intervened && shown(inputRegion(lines))) {
      owed = true;
      continue;
    }
    const box = findInputBox(lines);
    if (box && shown(inputRegion(lines))) continue;
    // The box is empty (the CLI took the text, or seems to: text back in it means Enter again),
    // or there is none to tell.
    const taken = await waitForWork(enters, box ? 'input cleared' : 'unconfirmed', box !== undefined);
    signal?.throwIfAborted();
    if (taken !== 'handed back') return taken;
  }
  const seconds = Math.round((performance.now() - firstEnterAt) / 1000);
  throw new SwitchboardError('NOT_DELIVERED', `the prompt is still in the agent's input box after ${enters} presses of Enter over ${seconds} s`, {
    pane_id: pane.id,
    screen: pane.readText(ROWS_IN_ERROR).lines,
  });
}

/** Whether the screen shows the CLI took a prompt: at work, asking for approval, or in a dialog its turn opened. */
function workingOn(screens: Screens, responder: DialogResponder | undefined, lines: readonly string[]): boolean {
  const kind = detectScreen(screens, { lines }).kind;
  return kind === 'busy' || kind === 'approval' || (kind === 'dialog' && responder?.clear !== false);
}

/** Waits until no known dialog is on screen; throws TIMEOUT when one stays after every answer. */
async function dialogsOutOfTheWay(pane: Pane, responder: DialogResponder | undefined, signal?: AbortSignal): Promise<void> {
  if (!responder) return;
  const how = await responder.whenClear(DIALOG_CLEAR_TIMEOUT_MS, signal);
  signal?.throwIfAborted();
  const stuck = responder.stuck;
  if (how === 'stuck' && stuck) {
    throw new SwitchboardError('TIMEOUT', `the agent's ${stuck.id} dialog is still on screen after ${stuck.answers} answers; answer it in the pane`, { pane_id: pane.id, dialog: stuck.id });
  }
}

/** Waits (up to DIALOG_CLEAR_TIMEOUT_MS) for the idle prompt to hold: a CLI may restart after a dialog's answer. */
async function idleHeld(pane: Pane, screens: Screens, signal?: AbortSignal): Promise<void> {
  const idle = (lines: readonly string[]): boolean => detectScreen(screens, { lines }).kind === 'idle';
  const deadline = performance.now() + DIALOG_CLEAR_TIMEOUT_MS;
  while (performance.now() < deadline && pane.alive && !signal?.aborted) {
    if (!(await untilScreen(pane, idle, deadline - performance.now(), signal))) return;
    if (!(await untilScreen(pane, (lines) => !idle(lines), IDLE_HOLD_MS, signal))) return;
  }
}

/**
 * Whether rows show `text` as typed: its end (TUIs may wrap it, so any whitespace may fall between
 * its characters, or scroll its start away), or a paste placeholder.
 */
function textShown(text: string): (lines: readonly string[]) => boolean {
  const probe = (text.trim().split('\n').pop() ?? '').replace(/\s+/g, '').slice(-24);
  const pattern = probe.length > 0 ? compileSafeRegex(Array.from(probe, (c) => escapeRegExp(c)).join('\\s*')) : undefined;
  return (lines) => {
    const joined = lines.join('\n');
    return PASTE_PLACEHOLDER.test(joined) || (pattern !== undefined && pattern.test(joined));
  };
}

/**
 * The screen once it has not changed for STILL_MS (or as it is after STILL_MAX_MS of changes): a
 * CLI that swallowed an Enter sits still with the text in its box; one that took it redraws. A
 * frame that shows `work` ends the wait at once: a spinner never holds still, and a short turn
 * could start and end inside the wait, leaving the prompt's caller to hear of it only after the
 * reply (CI saw a whole 2 s Gemini turn pass unseen so).
 */
async function stillScreen(pane: Pane, work: (lines: readonly string[]) => boolean, signal?: AbortSignal): Promise<string[]> {
  const deadline = performance.now() + STILL_MAX_MS;
  for (;;) {
    const now = pane.screenLines();
    if (work(now)) return now;
    const seen = now.join('\n');
    const changed = await untilScreen(pane, (lines) => work(lines) || lines.join('\n') !== seen, STILL_MS, signal);
    signal?.throwIfAborted();
    if (!changed || performance.now() >= deadline) return changed ? pane.screenLines() : now;
  }
}

/** Whether the pane's program has ended (read anew each time: it ends while we wait). */
const gone = (pane: Pane): boolean => !pane.alive;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
