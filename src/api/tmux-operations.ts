/**
 * The tmux front end's method: `tmux_command` runs one tmux command line (what the `tmux` launcher
 * was called with) against the daemon's tmux namespaces, whose panes are the daemon's own.
 */
import { hostname } from 'node:os';
import type { PaneRegistry } from '../pane/index.js';
import type { PaneInfo } from '../protocol/methods.js';
import { RegistryPaneHost } from '../tmux/registry-host.js';
import { TmuxService } from '../tmux/service.js';
import type { OperationContext } from './context.js';
import type { Handler } from './operations.js';

// One tmux service per pane registry (that is, per daemon), made on first use, so the daemon's
// composition root needs no field for it; it ends with the registry's daemon (disposeTmuxService).
const services = new WeakMap<PaneRegistry, TmuxService>();

function serviceFor(ctx: OperationContext): TmuxService {
  let service = services.get(ctx.panes);
  if (!service) {
    service = new TmuxService(new RegistryPaneHost(ctx.panes, { agents: ctx.agents }), { pid: process.pid, hostName: hostname(), uid: process.getuid?.() ?? 0 });
    services.set(ctx.panes, service);
  }
  return service;
}

/** Ends the tmux namespaces of a daemon that is shutting down. */
export function disposeTmuxService(panes: PaneRegistry): void {
  services.get(panes)?.dispose();
  services.delete(panes);
}

/** Where a Switchboard pane sits in the tmux front end's namespaces, for listings. */
export function tmuxPlacement(panes: PaneRegistry, paneId: string): PaneInfo['tmux'] {
  const found = services.get(panes)?.paneOf(paneId);
  if (!found) return undefined;
  const { runtime, pane } = found;
  return { socket: runtime.server.socketPath, session: pane.window.session.name, window: pane.window.name, window_index: pane.window.index, pane: pane.name, title: pane.title };
}

export const tmuxHandlers: { tmux_command: Handler<'tmux_command'> } = {
  async tmux_command(ctx, p) {
    const reply = await serviceFor(ctx).run({ argv: p.argv, env: p.env ?? {}, cwd: p.cwd ?? process.cwd(), tty: p.tty ?? false, stdin: p.stdin });
    return reply;
  },
};
