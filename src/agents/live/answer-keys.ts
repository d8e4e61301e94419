/**
 * Pressing the keys that answer a prompt so that they count. CLIs ignore keys for a moment after
 * they draw a prompt (Claude Code 2.1.330 dropped keys sent 0, 50 and 115 ms after its approval
 * prompt appeared and took them from 200 ms on), and a prompt drawn in steps must not be answered
 * half drawn: the keys go once the screen has held still, and again when the screen shows no
 * reaction, as the same answer.
 */
import { waitForScreen, type Pane } from '../../pane/index.js';
import { screenText, untilScreenLeaves } from './dialog-answer.js';
import { pressKeys } from './input.js';

/** The screen must hold still this long before an answer's keys go. */
export const PROMPT_SETTLE_MS = 300;
/** Longest wait for a prompt to hold still (a spinner elsewhere on screen never does). */
const PROMPT_SETTLE_MAX_MS = 1_500;
/**
 * After an answer's keys, how long the screen may stay unchanged before they count as lost. Long,
 * because a repeat sent to a CLI that took the keys but is slow to redraw (a loaded machine) is read
 * by whatever comes next: the next approval, answered without a decision, or the input box. Keys
 * are lost only right after a prompt is drawn, and the settle before the first press covers that.
 */
export const KEY_EFFECT_MS = 3_000;
/** Presses of one answer: the first and one repeat of a lost one. */
export const MAX_PRESSES = 2;

/** Waits until the screen has held still for PROMPT_SETTLE_MS (at most PROMPT_SETTLE_MAX_MS). */
export async function promptSettled(pane: Pane, signal?: AbortSignal): Promise<void> {
  await waitForScreen(pane, { idleMs: PROMPT_SETTLE_MS, timeoutMs: PROMPT_SETTLE_MAX_MS, ...(signal ? { signal } : {}) });
}

/**
 * Presses `keys` until the screen reacts, at most MAX_PRESSES times. Resolves with how many presses
 * it took and whether the screen reacted at all. The caller settles the prompt first (promptSettled).
 */
export async function pressUntilTaken(pane: Pane, keys: readonly string[], signal?: AbortSignal): Promise<{ presses: number; taken: boolean }> {
  const before = screenText(pane);
  for (let press = 1; press <= MAX_PRESSES; press++) {
    if (!pane.alive || signal?.aborted) return { presses: press - 1, taken: false };
    await pressKeys(pane, keys);
    if (await untilScreenLeaves(pane, before, KEY_EFFECT_MS, signal)) return { presses: press, taken: true };
  }
  return { presses: MAX_PRESSES, taken: false };
}
