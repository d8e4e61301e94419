/**
 * What each tmux command does, in the daemon's terms: the scope a caller must hold to run it
 * (protocol/scopes.ts). The owner runs anything; a scoped token (an agent pane's programs) runs a
 * command only when what it does is within the token's scopes, judged per command, so a program in
 * an agent pane can list and capture panes but never run a shell (`run-shell`, `if-shell`,
 * `pipe-pane`), read or write files (`load-buffer`/`save-buffer` with a path, `source-file`), or
 * leave commands behind for someone else's command line to run (hooks, key bindings, options such
 * as `default-command`, the global environment new panes inherit).
 */
import { flagValue, hasFlag, type ParsedCommand } from './grammar.js';
import type { Scope } from '../protocol/scopes.js';

/** Commands that only read the server's state. */
const READS = new Set([
  'capture-pane',
  'display-message',
  'has-session',
  'list-buffers',
  'list-clients',
  'list-commands',
  'list-keys',
  'list-panes',
  'list-sessions',
  'list-windows',
  'show-buffer',
  'show-hooks',
  'show-messages',
  'show-options',
  'show-prompt-history',
  'show-window-options',
]);

/** Commands that type into, move, resize or rename panes and windows that exist. */
const SENDS = new Set([
  'break-pane',
  'clear-history',
  'clear-prompt-history',
  'clock-mode',
  'copy-mode',
  'delete-buffer',
  'display-panes',
  'join-pane',
  'last-pane',
  'last-window',
  'link-window',
  'move-pane',
  'move-window',
  'next-layout',
  'next-window',
  'paste-buffer',
  'previous-layout',
  'previous-window',
  'refresh-client',
  'rename-session',
  'rename-window',
  'resize-pane',
  'resize-window',
  'rotate-window',
  'select-layout',
  'select-pane',
  'select-window',
  'send-keys',
  'send-prefix',
  'set-buffer',
  'swap-pane',
  'swap-window',
  'switch-client',
  'unlink-window',
  'wait-for',
  // Attaching gives the caller a terminal that types into the pane.
  'attach-session',
]);

/** Commands that start panes (the new pane's programs never get more than the caller has). */
const CREATES = new Set(['new-session', 'new-window', 'split-window', 'respawn-pane', 'respawn-window', 'start-server']);

/** Commands that end panes, windows, sessions or the server. */
const KILLS = new Set(['kill-pane', 'kill-window', 'kill-session', 'kill-server']);

/** Commands whose -k ends what is there first (a running program, a window in the way). */
const KILL_FLAG = new Set(['respawn-pane', 'respawn-window', 'new-window', 'link-window', 'move-window', 'unlink-window']);

/**
 * Every scope `command` needs: what it does (scopeForCommand), and `kill` too when its -k ends a
 * program or a window first.
 */
export function scopesForCommand(command: ParsedCommand): Scope[] {
  const scope = scopeForCommand(command);
  return KILL_FLAG.has(command.spec.name) && hasFlag(command, 'k') && scope !== 'kill' && scope !== 'admin' ? [scope, 'kill'] : [scope];
}

/**
 * The scope `command` needs. Anything not listed above needs `admin`: it runs a shell
 * (`run-shell`, `if-shell`, `pipe-pane`, `display-popup`, `detach-client -E`), touches files
 * (`source-file`), or stores commands or settings that later run for others (`set-hook`,
 * `bind-key`, `set-option`, `set-environment`, `command-prompt`, `confirm-before`, `display-menu`).
 */
function scopeForCommand(command: ParsedCommand): Scope {
  const name = command.spec.name;
  // A buffer to or from a file reads or writes any file the daemon can; `-` is the caller's own stdin or stdout.
  if (name === 'save-buffer') return command.args[0] === '-' ? 'read' : 'admin';
  if (name === 'load-buffer') return command.args[0] === '-' ? 'send' : 'admin';
  // The global environment holds the starting client's variables (API keys among them).
  if (name === 'show-environment') return 'admin';
  // Capturing into a named buffer changes what a later paste types.
  if (name === 'capture-pane') return flagValue(command, 'b') === undefined ? 'read' : 'send';
  // -E runs a shell command when the client detaches.
  if (name === 'detach-client') return flagValue(command, 'E') === undefined ? 'send' : 'admin';
  if (READS.has(name)) return 'read';
  if (SENDS.has(name)) return 'send';
  if (CREATES.has(name)) return 'create';
  if (KILLS.has(name)) return 'kill';
  return 'admin';
}
