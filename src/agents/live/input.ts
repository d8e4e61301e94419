import type { Pane } from '../../pane/index.js';

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
