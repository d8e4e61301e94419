/**
 * The environment a `tmux` launcher sends the daemon with a command line. A tmux server started by
 * a client copies that client's environment as its global environment (the daemon's front end
 * does too: tmux/runtime.ts), so a command that may start a server sends it all, as tmux does. Any
 * other command sends only what a tmux server takes from a client that is not starting it: the
 * variables `update-environment` names by default (a new session copies them), the terminal's, and
 * what places the client (the pane it runs in, the socket directory, its home for `~`, its shell),
 * so the caller's API keys never travel to whatever endpoint the launcher found.
 */

/** What tmux reads from a client that does not start its server. */
const TMUX_CLIENT_VARIABLES: readonly string[] = [
  // tmux's default update-environment (tmux/option-table.ts; MSYSTEM is tmux's on Windows).
  'DISPLAY', 'KRB5CCNAME', 'MSYSTEM', 'SSH_ASKPASS', 'SSH_AUTH_SOCK', 'SSH_AGENT_PID', 'SSH_CONNECTION', 'WINDOWID', 'XAUTHORITY',
  // The terminal.
  'TERM', 'TERM_PROGRAM', 'COLORTERM',
  // Where the client is: its pane ($TMUX, $TMUX_PANE: the current target), the socket's folder
  // (tmux/client-args.ts), its directory, its home (`~` in command strings) and its shell.
  'TMUX', 'TMUX_PANE', 'TMUX_TMPDIR', 'PWD', 'HOME', 'SHELL',
];

/** The environment to send with a command line: all of `env` when it may start a server, else TMUX_CLIENT_VARIABLES only. */
export function tmuxClientEnv(env: NodeJS.ProcessEnv, startsServer: boolean): Record<string, string> {
  const names = startsServer ? Object.keys(env) : TMUX_CLIENT_VARIABLES;
  const sent: Record<string, string> = {};
  for (const name of names) {
    const value = env[name];
    if (value !== undefined) sent[name] = value;
  }
  return sent;
}
