import type { Pane } from '../pane/index.js';
import type { PaneInfo } from '../protocol/methods.js';

/** A pane as listed over the wire. */
export function paneInfo(pane: Pane, tmux?: PaneInfo['tmux']): PaneInfo {
  const info: PaneInfo = {
    pane_id: pane.id,
    title: pane.title,
    alive: pane.alive,
    cwd: pane.cwd,
    command: pane.commandText,
    cols: pane.cols,
    rows: pane.rows,
    created_at: pane.createdAt.toISOString(),
    window_title: pane.windowTitle,
  };
  if (pane.alive) info.pid = pane.pid;
  if (pane.agent) info.agent = { name: pane.agent.name, version: pane.agent.version ?? null };
  if (tmux) info.tmux = tmux;
  const exit = pane.exit;
  if (exit) {
    info.exit_code = exit.exitCode;
    info.signal = exit.signal;
    const at = pane.exitTime;
    if (at) info.exited_at = at.toISOString();
  }
  return info;
}
