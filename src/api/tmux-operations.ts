/**
 * The tmux front end's method: `tmux_command` runs one tmux command line (what the `tmux` launcher
 * was called with) against the daemon's tmux namespaces (Services.tmux), whose panes are the
 * daemon's own.
 */
import type { Handler } from './handler.js';

export const tmuxHandlers: { tmux_command: Handler<'tmux_command'> } = {
  async tmux_command(ctx, p) {
    return ctx.tmux.get().run({ argv: p.argv, env: p.env ?? {}, cwd: p.cwd ?? process.cwd(), tty: p.tty ?? false, stdin: p.stdin });
  },
};
