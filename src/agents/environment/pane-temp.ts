/**
 * How long an agent pane's private temporary folder lives: past the pane's first process, as long
 * as anything it started still runs. A dev server an agent left behind keeps writing to its
 * TMPDIR after the CLI exits; the folder goes when the last of them is gone, which is when the pane
 * is removed (removing a pane ends everything that carries its marker), or at once when the CLI
 * left nothing running.
 */
import type { Pane, PaneRegistry } from '../../pane/index.js';
import { PANE_MARKER_VARIABLE } from '../../pane/index.js';
import { findProcessesByEnv } from '../../platform/index.js';
import type { PrivateTemp } from './private-temp.js';

/** Releases `temp` when `pane` has exited and nothing it started runs any more. */
export function releaseTempWithPane(registry: PaneRegistry, pane: Pane, temp: PrivateTemp): void {
  const removed = registry.onPaneRemoved((gone) => {
    if (gone !== pane) return;
    removed.dispose();
    temp.release();
  });
  pane.onExit(() => {
    if (findProcessesByEnv(PANE_MARKER_VARIABLE, pane.id).length > 0) return;
    removed.dispose();
    temp.release();
  });
}
