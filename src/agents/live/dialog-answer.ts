/**
 * Answers a first-run dialog the way its profile says: keys pressed one by one, or an option chosen
 * by its label. Choosing walks the highlight one step at a time and reads the screen after each
 * step, so a key the CLI was not yet reading is pressed again instead of confirming the default.
 */
import { compileSafeRegex } from '../../core/safe-regex.js';
import { watchScreen, type Pane } from '../../pane/index.js';
import { menuRows, type MenuRow } from '../screen/approval-prompt.js';
import { patternFlags, patternSource } from '../profiles/check-profile.js';
import { pressKeys } from './input.js';
import type { Dialog } from '../profiles/schema.js';
import { findMenu } from '../screen/structure.js';

/** How to answer the questions a CLI asks on first run (and sometimes later). */
export interface FirstRunPolicy {
  /** Trust the working directory when asked (the caller chose it). */
  trustFolder: boolean;
  /** Use an API key found in the environment when asked. */
  useEnvApiKey: boolean;
  /** Keep the configured model when a CLI suggests switching. */
  keepCurrentModel: boolean;
  /** Take a CLI up on an offer to try something new (a renderer, a mode); no by default: the screens read are the known ones. */
  tryNewFeatures: boolean;
  /**
   * Keep retrying when a CLI whose model keeps failing offers to (Gemini CLI's "Keep trying /
   * Stop"); no by default: the turn ends with the model's error, which a task reports.
   */
  keepRetrying: boolean;
}

/**
 * The policy when the caller says nothing. With the user's own configuration, answering "use this
 * API key" is a billing decision the CLI remembers, so it is declined unless asked for; in an
 * isolated HOME every answer stays in that HOME, and the key is the sandbox's own.
 */
export function defaultFirstRunPolicy(sandboxed: boolean): FirstRunPolicy {
  return { trustFolder: true, useEnvApiKey: sandboxed, keepCurrentModel: true, tryNewFeatures: false, keepRetrying: false };
}

export const DEFAULT_FIRST_RUN_POLICY: FirstRunPolicy = defaultFirstRunPolicy(false);

/** What `policy` says to a first-run dialog. */
export function decideDialog(dialog: Dialog, policy: FirstRunPolicy): 'accept' | 'decline' {
  switch (dialog.decides) {
    case 'trust_folder':
      return policy.trustFolder ? 'accept' : 'decline';
    case 'use_env_api_key':
      return policy.useEnvApiKey ? 'accept' : 'decline';
    case 'keep_current_model':
      return policy.keepCurrentModel ? 'accept' : 'decline';
    case 'try_new_feature':
      return policy.tryNewFeatures ? 'accept' : 'decline';
    case 'keep_retrying':
      return policy.keepRetrying ? 'accept' : 'decline';
    case 'continue':
      return 'accept';
  }
}

/** How long one arrow key may take to move the highlight before it counts as lost and is pressed again. */
export const MENU_STEP_TIMEOUT_MS = 1_500;
/** Arrow presses allowed in one answer: enough for any menu, few enough to stop a CLI that ignores them. */
const MAX_MENU_STEPS = 12;

/** A `choose` answer, compiled: how to read the dialog's menu, and the label to reach. */
export interface MenuChoice {
  readMenu: (lines: readonly string[]) => MenuRow[];
  target: RegExp;
}

/**
 * The menu choice behind a dialog's answer, or null when the answer is plain keys. The menu is read
 * with the dialog's own option pattern, or by its shape (findMenu) when it has none.
 */
export function menuChoiceFor(dialog: Dialog, decision: 'accept' | 'decline'): MenuChoice | null {
  const answer = dialog[decision];
  if (Array.isArray(answer)) return null;
  const target = compileSafeRegex(patternSource(answer.choose), patternFlags(answer.choose));
  if (!dialog.options) return { readMenu: (lines) => findMenu(lines)?.options ?? [], target };
  const option = compileSafeRegex(patternSource(dialog.options.pattern), patternFlags(dialog.options.pattern));
  return { readMenu: (lines) => menuRows(lines, option), target };
}

/** The next key toward `choice` on this screen: an arrow toward it, or Enter once it is highlighted. */
export function nextMenuKey(choice: MenuChoice, lines: readonly string[]): 'Up' | 'Down' | 'Enter' {
  const rows = choice.readMenu(lines);
  const wanted = rows.findIndex((r) => choice.target.test(r.label));
  if (wanted < 0) throw new Error(`no option on screen matches ${String(choice.target)} (seen: ${rows.map((r) => JSON.stringify(r.label)).join(', ') || 'none'})`);
  const at = highlightedRow(choice, lines);
  if (at < 0) throw new Error('cannot see which option is highlighted');
  return at === wanted ? 'Enter' : at < wanted ? 'Down' : 'Up';
}

const highlightedRow = (choice: MenuChoice, lines: readonly string[]): number => choice.readMenu(lines).findIndex((r) => r.selected);

/** Presses the answer for `decision`; resolves with the keys pressed. Rejects when a `choose` answer cannot be carried out. */
export async function answerDialog(pane: Pane, dialog: Dialog, decision: 'accept' | 'decline', signal?: AbortSignal): Promise<string[]> {
  const choice = menuChoiceFor(dialog, decision);
  if (choice) return chooseMenuOption(pane, choice, signal);
  const keys = dialog[decision] as string[];
  await pressKeys(pane, keys);
  return [...keys];
}

/**
 * Moves a menu's highlight to the chosen option and presses Enter. Every step starts from what the
 * screen shows, so a lost or late key never leads to the wrong choice: at worst the highlight
 * overshoots and the next step comes back.
 */
export async function chooseMenuOption(pane: Pane, choice: MenuChoice, signal?: AbortSignal): Promise<string[]> {
  const pressed: string[] = [];
  const readable = (now: readonly string[]): boolean => highlightedRow(choice, now) >= 0;
  for (let arrows = 0; arrows < MAX_MENU_STEPS; ) {
    signal?.throwIfAborted();
    if (!pane.alive) throw new Error('the pane exited while a menu option was chosen');
    // A frame caught half-drawn shows no highlight: wait for a whole one before judging.
    if (!readable(pane.screenLines())) await untilScreen(pane, readable, MENU_STEP_TIMEOUT_MS, signal);
    const lines = pane.screenLines();
    const key = nextMenuKey(choice, lines);
    pane.sendKeys([key]);
    pressed.push(key);
    if (key === 'Enter') return pressed;
    arrows++;
    const from = highlightedRow(choice, lines);
    await untilScreen(pane, (now) => readable(now) && highlightedRow(choice, now) !== from, MENU_STEP_TIMEOUT_MS, signal);
  }
  throw new Error(`the highlight did not reach ${String(choice.target)} after ${MAX_MENU_STEPS} keys`);
}

/** The screen as one text, to tell whether it moved. */
export function screenText(pane: Pane): string {
  return pane.screenLines().join('\n');
}

/** Resolves true once the screen is no longer `from` (a `screenText` taken earlier), false as untilScreen does. */
export function untilScreenLeaves(pane: Pane, from: string, timeoutMs: number, signal?: AbortSignal): Promise<boolean> {
  return untilScreen(pane, (lines) => lines.join('\n') !== from, timeoutMs, signal);
}

/** Resolves true when `done` holds for the screen, false after `timeoutMs`, on exit or on abort (the caller looks again either way). */
export function untilScreen(pane: Pane, done: (lines: readonly string[]) => boolean, timeoutMs: number, signal?: AbortSignal): Promise<boolean> {
  return watchScreen(
    pane,
    { check: () => (done(pane.screenLines()) ? { done: true } : undefined), exited: () => false, timedOut: () => false, cancelled: () => false },
    { timeoutMs, ...(signal ? { signal } : {}) },
  );
}
