/**
 * tmux 3.3's commands as data: each command's name, alias and usage line as `tmux list-commands`
 * prints them (the flags a command takes are read from its usage), how many positional arguments it
 * takes, and whether running it starts a server. Facts about tmux's interface, recorded from tmux
 * 3.3a; the behaviour lives in ./commands/.
 */

/** One command's entry. */
export interface CommandSpec {
  readonly name: string;
  readonly alias: string | undefined;
  readonly usage: string;
  /** Flags that stand alone (`-d`). */
  readonly booleanFlags: ReadonlySet<string>;
  /** Flags that take a value (`-t target`). */
  readonly valueFlags: ReadonlySet<string>;
  readonly minArgs: number;
  /** -1: no upper bound. */
  readonly maxArgs: number;
  /** Running it starts the server when none runs (new-session, start-server, …). */
  readonly startsServer: boolean;
}

type Row = [name: string, alias: string | undefined, flagsAndArgs: string, minArgs: number, maxArgs: number, startsServer?: boolean];

// The usage lines of tmux 3.3a (`tmux list-commands`), with positional bounds from the same commands.
const ROWS: Row[] = [
  ['attach-session', 'attach', '[-dErx] [-c working-directory] [-f flags] [-t target-session]', 0, 0, true],
  ['bind-key', 'bind', '[-nr] [-T key-table] [-N note] key [command [arguments]]', 1, -1],
  ['break-pane', 'breakp', '[-abdP] [-F format] [-n window-name] [-s src-pane] [-t dst-window]', 0, 0],
  ['capture-pane', 'capturep', '[-aCeJNpPq] [-b buffer-name] [-E end-line] [-S start-line] [-t target-pane]', 0, 0],
  ['choose-buffer', undefined, '[-NrZ] [-F format] [-f filter] [-K key-format] [-O sort-order] [-t target-pane] [template]', 0, 1],
  ['choose-client', undefined, '[-NrZ] [-F format] [-f filter] [-K key-format] [-O sort-order] [-t target-pane] [template]', 0, 1],
  ['choose-tree', undefined, '[-GNrswZ] [-F format] [-f filter] [-K key-format] [-O sort-order] [-t target-pane] [template]', 0, 1],
  ['clear-history', 'clearhist', '[-t target-pane]', 0, 0],
  ['clear-prompt-history', 'clearphist', '[-T type]', 0, 0],
  ['clock-mode', undefined, '[-t target-pane]', 0, 0],
  ['command-prompt', undefined, '[-1bFkiN] [-I inputs] [-p prompts] [-t target-client] [-T type] [template]', 0, 1],
  ['confirm-before', 'confirm', '[-b] [-p prompt] [-t target-client] command', 1, 1],
  ['copy-mode', undefined, '[-eHMuq] [-s src-pane] [-t target-pane]', 0, 0],
  ['customize-mode', undefined, '[-NZ] [-F format] [-f filter] [-t target-pane]', 0, 0],
  ['delete-buffer', 'deleteb', '[-b buffer-name]', 0, 0],
  ['detach-client', 'detach', '[-aP] [-E shell-command] [-s target-session] [-t target-client]', 0, 0],
  ['display-menu', 'menu', '[-O] [-c target-client] [-t target-pane] [-T title] [-x position] [-y position] name key command ...', 1, -1],
  ['display-message', 'display', '[-aINpv] [-c target-client] [-d delay] [-F format] [-t target-pane] [message]', 0, 1],
  ['display-popup', 'popup', '[-BCE] [-b border-lines] [-c target-client] [-d start-directory] [-e environment] [-h height] [-s style] [-S border-style] [-t target-pane][-T title] [-w width] [-x position] [-y position] [shell-command]', 0, -1],
  ['display-panes', 'displayp', '[-bN] [-d duration] [-t target-client] [template]', 0, 1],
  ['find-window', 'findw', '[-CiNrTZ] [-t target-pane] match-string', 1, 1],
  ['has-session', 'has', '[-t target-session]', 0, 0],
  ['if-shell', 'if', '[-bF] [-t target-pane] shell-command command [command]', 2, 3],
  ['join-pane', 'joinp', '[-bdfhv] [-l size] [-s src-pane] [-t dst-pane]', 0, 0],
  ['kill-pane', 'killp', '[-a] [-t target-pane]', 0, 0],
  ['kill-server', undefined, '', 0, 0],
  ['kill-session', undefined, '[-aC] [-t target-session]', 0, 0],
  ['kill-window', 'killw', '[-a] [-t target-window]', 0, 0],
  ['last-pane', 'lastp', '[-deZ] [-t target-window]', 0, 0],
  ['last-window', 'last', '[-t target-session]', 0, 0],
  ['link-window', 'linkw', '[-abdk] [-s src-window] [-t dst-window]', 0, 0],
  ['list-buffers', 'lsb', '[-F format] [-f filter]', 0, 0],
  ['list-clients', 'lsc', '[-F format] [-t target-session]', 0, 0],
  ['list-commands', 'lscm', '[-F format] [command]', 0, 1],
  ['list-keys', 'lsk', '[-1aN] [-P prefix-string] [-T key-table] [key]', 0, 1],
  ['list-panes', 'lsp', '[-as] [-F format] [-f filter] [-t target-window]', 0, 0],
  ['list-sessions', 'ls', '[-F format] [-f filter]', 0, 0],
  ['list-windows', 'lsw', '[-a] [-F format] [-f filter] [-t target-session]', 0, 0],
  ['load-buffer', 'loadb', '[-b buffer-name] [-t target-client] path', 1, 1],
  ['lock-client', 'lockc', '[-t target-client]', 0, 0],
  ['lock-server', 'lock', '', 0, 0],
  ['lock-session', 'locks', '[-t target-session]', 0, 0],
  ['move-pane', 'movep', '[-bdfhv] [-l size] [-s src-pane] [-t dst-pane]', 0, 0],
  ['move-window', 'movew', '[-abdkr] [-s src-window] [-t dst-window]', 0, 0],
  ['new-session', 'new', '[-AdDEPX] [-c start-directory] [-e environment] [-F format] [-f flags] [-n window-name] [-s session-name] [-t target-session] [-x width] [-y height] [shell-command]', 0, -1, true],
  ['new-window', 'neww', '[-abdkPS] [-c start-directory] [-e environment] [-F format] [-n window-name] [-t target-window] [shell-command]', 0, -1],
  ['next-layout', 'nextl', '[-t target-window]', 0, 0],
  ['next-window', 'next', '[-a] [-t target-session]', 0, 0],
  ['paste-buffer', 'pasteb', '[-dpr] [-s separator] [-b buffer-name] [-t target-pane]', 0, 0],
  ['pipe-pane', 'pipep', '[-IOo] [-t target-pane] [shell-command]', 0, 1],
  ['previous-layout', 'prevl', '[-t target-window]', 0, 0],
  ['previous-window', 'prev', '[-a] [-t target-session]', 0, 0],
  ['refresh-client', 'refresh', '[-cDlLRSU] [-A pane:state] [-B name:what:format] [-C XxY] [-f flags] [-t target-client] [adjustment]', 0, 1],
  ['rename-session', 'rename', '[-t target-session] new-name', 1, 1],
  ['rename-window', 'renamew', '[-t target-window] new-name', 1, 1],
  ['resize-pane', 'resizep', '[-DLMRTUZ] [-x width] [-y height] [-t target-pane] [adjustment]', 0, 1],
  ['resize-window', 'resizew', '[-aADLRU] [-x width] [-y height] [-t target-window] [adjustment]', 0, 1],
  ['respawn-pane', 'respawnp', '[-k] [-c start-directory] [-e environment] [-t target-pane] [shell-command]', 0, -1],
  ['respawn-window', 'respawnw', '[-k] [-c start-directory] [-e environment] [-t target-window] [shell-command]', 0, -1],
  ['rotate-window', 'rotatew', '[-DUZ] [-t target-window]', 0, 0],
  ['run-shell', 'run', '[-bC] [-d delay] [-t target-pane] [shell-command]', 0, 1],
  ['save-buffer', 'saveb', '[-a] [-b buffer-name] path', 1, 1],
  ['select-layout', 'selectl', '[-Enop] [-t target-pane] [layout-name]', 0, 1],
  ['select-pane', 'selectp', '[-DdeLlMmRUZ] [-T title] [-t target-pane]', 0, 0],
  ['select-window', 'selectw', '[-lnpT] [-t target-window]', 0, 0],
  ['send-keys', 'send', '[-FHlMRX] [-N repeat-count] [-t target-pane] key ...', 0, -1],
  ['send-prefix', undefined, '[-2] [-t target-pane]', 0, 0],
  ['server-access', undefined, '[-adlrw] [-t target-pane] [user]', 0, 1],
  ['set-buffer', 'setb', '[-aw] [-b buffer-name] [-n new-buffer-name] [-t target-client] data', 0, 1],
  ['set-environment', 'setenv', '[-Fhgru] [-t target-session] name [value]', 1, 2],
  ['set-hook', undefined, '[-agpRuw] [-t target-pane] hook [command]', 1, 2],
  ['set-option', 'set', '[-aFgopqsuUw] [-t target-pane] option [value]', 1, 2],
  ['set-window-option', 'setw', '[-aFgoqu] [-t target-window] option [value]', 1, 2],
  ['show-buffer', 'showb', '[-b buffer-name]', 0, 0],
  ['show-environment', 'showenv', '[-hgs] [-t target-session] [name]', 0, 1],
  ['show-hooks', undefined, '[-gpw] [-t target-pane]', 0, 1],
  ['show-messages', 'showmsgs', '[-JT] [-t target-client]', 0, 0],
  ['show-options', 'show', '[-AgHpqsvw] [-t target-pane] [option]', 0, 1],
  ['show-prompt-history', 'showphist', '[-T type]', 0, 0],
  ['show-window-options', 'showw', '[-gv] [-t target-window] [option]', 0, 1],
  ['source-file', 'source', '[-Fnqv] path ...', 1, -1],
  ['split-window', 'splitw', '[-bdefhIPvZ] [-c start-directory] [-e environment] [-F format] [-l size] [-t target-pane][shell-command]', 0, -1],
  ['start-server', 'start', '', 0, 0, true],
  ['suspend-client', 'suspendc', '[-t target-client]', 0, 0],
  ['swap-pane', 'swapp', '[-dDUZ] [-s src-pane] [-t dst-pane]', 0, 0],
  ['swap-window', 'swapw', '[-d] [-s src-window] [-t dst-window]', 0, 0],
  ['switch-client', 'switchc', '[-ElnprZ] [-c target-client] [-t target-session] [-T key-table]', 0, 0],
  ['unbind-key', 'unbind', '[-anq] [-T key-table] key', 0, 1],
  ['unlink-window', 'unlinkw', '[-k] [-t target-window]', 0, 0],
  ['wait-for', 'wait', '[-L|-S|-U] channel', 1, 1],
];

/** Reads the flags out of a usage line: `[-abc]` groups stand alone, `[-t name]` takes a value. */
function flagsOf(usage: string): { booleanFlags: Set<string>; valueFlags: Set<string> } {
  const booleanFlags = new Set<string>();
  const valueFlags = new Set<string>();
  for (const match of usage.matchAll(/\[-([A-Za-z0-9|-]+)(?: ([^\]]+))?\]/g)) {
    const letters = (match[1] ?? '').replaceAll('|', '-').split('').filter((c) => c !== '-');
    if (match[2] !== undefined && letters.length === 1) valueFlags.add(letters[0] as string);
    else for (const letter of letters) booleanFlags.add(letter);
  }
  return { booleanFlags, valueFlags };
}

/**
 * Flags tmux still accepts but leaves out of the usage line: split-window -p (the older size flag)
 * and select-pane -P (the older pane style, which still selects the pane).
 */
const HIDDEN_VALUE_FLAGS: Readonly<Record<string, string>> = { 'split-window': 'p', 'select-pane': 'P' };

/** Every command, in tmux's (alphabetical) order. */
export const COMMANDS: readonly CommandSpec[] = ROWS.map(([name, alias, usage, minArgs, maxArgs, startsServer]) => {
  const flags = flagsOf(usage);
  const hidden = HIDDEN_VALUE_FLAGS[name];
  if (hidden !== undefined) flags.valueFlags.add(hidden);
  return { name, alias, usage, ...flags, minArgs, maxArgs, startsServer: startsServer === true };
});

const BY_NAME = new Map(COMMANDS.map((c) => [c.name, c]));
const BY_ALIAS = new Map(COMMANDS.filter((c) => c.alias !== undefined).map((c) => [c.alias as string, c]));

/** The outcome of looking a command name up: the command, or tmux's error for the name. */
export type CommandLookup = { ok: true; spec: CommandSpec } | { ok: false; error: string };

/**
 * Finds a command as tmux does: the exact name or alias, else the only command whose name starts
 * with what was typed ("list-p" is list-panes; "li" is ambiguous).
 */
export function lookupCommand(name: string): CommandLookup {
  const exact = BY_NAME.get(name) ?? BY_ALIAS.get(name);
  if (exact) return { ok: true, spec: exact };
  const matches = COMMANDS.filter((c) => c.name.startsWith(name));
  if (matches.length === 1) return { ok: true, spec: matches[0] as CommandSpec };
  if (matches.length === 0 || name === '') return { ok: false, error: `unknown command: ${name}` };
  return { ok: false, error: `ambiguous command: ${name}, could be: ${matches.map((c) => c.name).join(', ')}` };
}

/** The line `list-commands` prints for a command. */
export function usageLine(spec: CommandSpec): string {
  return `${spec.name}${spec.alias ? ` (${spec.alias})` : ''} ${spec.usage}`;
}
