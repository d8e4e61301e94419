/**
 * The tmux front end's method: `tmux_command` runs one tmux command line (what the `tmux` launcher
 * was called with) against the daemon's tmux namespaces (Services.tmux), whose panes are the
 * daemon's own. The method itself needs only `read`; each command of the line is then judged by
 * what it does (tmux/command-authority.ts), so a pane's token runs only what its scopes allow.
 */
import { SwitchboardError } from '../core/errors.js';
import { SCOPE_MEANINGS } from '../protocol/scopes.js';
import type { TmuxCaller } from '../tmux/service.js';
import { scopesForNewPane, type Grant } from './authorize.js';
import type { Handler } from './handler.js';

/** The judge of a scoped caller's tmux commands; undefined for the owner, who runs anything. */
async function tmuxCallerOf(grant: Grant | undefined): Promise<TmuxCaller | undefined> {
  if (grant === undefined || grant.owner) return undefined;
  const { scopesForCommand } = await import('../tmux/command-authority.js');
  const who = grant.paneId === undefined ? 'this token' : `the token of pane ${grant.paneId}`;
  return {
    paneScopes: scopesForNewPane(grant, false) ?? [...grant.scopes],
    check(command) {
      const needed = scopesForCommand(command).find((scope) => !grant.scopes.has(scope));
      if (needed === undefined) return;
      const why = needed === 'admin' ? 'it runs a shell, touches files, or stores commands or settings that run for others' : SCOPE_MEANINGS[needed];
      throw new SwitchboardError('FORBIDDEN', `forbidden: ${who} may not run the tmux command ${command.spec.name}: it needs the scope '${needed}' (${why})`, {
        method: 'tmux_command',
        command: command.spec.name,
        scope: needed,
        ...(grant.paneId !== undefined ? { pane_id: grant.paneId } : {}),
      });
    },
  };
}

export const tmuxHandlers: { tmux_command: Handler<'tmux_command'> } = {
  async tmux_command(ctx, p) {
    const [service, caller] = await Promise.all([ctx.tmux.get(), tmuxCallerOf(ctx.grant)]);
    return service.run({ argv: p.argv, env: p.env ?? {}, cwd: p.cwd ?? process.cwd(), tty: p.tty ?? false, stdin: p.stdin }, caller);
  },
};
