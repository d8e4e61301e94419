import { compileSafeRegex } from '../core/safe-regex.js';
import { waitForScreen, type Pane } from '../pane/index.js';
import type { ProfileData } from './schema.js';

const escapeRegex = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Pause between keys pressed one by one. */
export const KEY_INTERVAL_MS = 80;

/**
 * Presses keys one write at a time. TUIs read a burst such as "Up, Enter" as one input event and
 * act on only part of it, so menus and dialogs need one key per write.
 */
export async function pressKeys(pane: Pane, keys: readonly string[], intervalMs = KEY_INTERVAL_MS): Promise<void> {
  for (const [i, key] of keys.entries()) {
    if (i > 0) await new Promise((resolve) => setTimeout(resolve, intervalMs));
    if (!pane.alive) return;
    pane.sendKeys([key]);
  }
}

/**
 * Gives an agent a prompt the way a person would, with each CLI's quirks: multi-line prompts are
 * pasted (bracketed), single lines typed; then, once the text shows in the input box (or after a
 * short wait), Enter goes as its own write, because Codex and Gemini treat text and Enter in one
 * burst as a paste and submit nothing.
 */
export async function sendPrompt(pane: Pane, input: ProfileData['input'], text: string, signal?: AbortSignal): Promise<void> {
  // A bare CR is Enter to a terminal, as much as LF is: either makes a prompt multi-line.
  const normalized = text.replace(/\r\n?/g, '\n');
  const multiline = normalized.includes('\n');
  if (multiline && input.paste_multiline) pane.paste(normalized, 'auto');
  else pane.sendText(normalized.replace(/\n/g, ' '));
  if (!input.separate_enter) {
    pane.sendKeys(['Enter']);
    return;
  }
  // The end of the text is what shows last; TUIs may wrap it or scroll its start away.
  const probe = normalized.trim().split('\n').pop()?.trim().slice(-24) ?? '';
  if (probe.length > 0 && input.echo_timeout_ms > 0) {
    await waitForScreen(pane, { pattern: compileSafeRegex(escapeRegex(probe)), timeoutMs: input.echo_timeout_ms, signal });
  }
  if (input.enter_delay_ms > 0) await new Promise((resolve) => setTimeout(resolve, input.enter_delay_ms));
  if (pane.alive) pane.sendKeys(['Enter']);
}
