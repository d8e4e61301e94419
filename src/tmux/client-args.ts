/**
 * What tmux reads before the command: its own flags (-S, -L, -V, -N, …) and, from them and the
 * environment, the socket path that names the server. Pure and small, so the launcher can answer
 * "no server running" and `-V` without the daemon, and without loading anything heavy.
 */
import path from 'node:path';

const USAGE = 'usage: tmux [-2CDlNuvV] [-c shell-command] [-f file] [-L socket-name]\n            [-S socket-path] [-T features] [command [flags]]\n';
export interface GlobalFlags {
  socketPath: string | undefined;
  label: string | undefined;
  noStart: boolean;
  version: boolean;
  shellCommand: string | undefined;
  control: boolean;
  rest: string[];
}

/** Reads tmux's own flags (before the command). */
export function parseGlobalFlags(argv: readonly string[]): GlobalFlags | { error: string } {
  const flags: GlobalFlags = { socketPath: undefined, label: undefined, noStart: false, version: false, shellCommand: undefined, control: false, rest: [] };
  let i = 0;
  for (; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--') {
      i++;
      break;
    }
    if (!arg.startsWith('-') || arg === '-') break;
    for (let j = 1; j < arg.length; j++) {
      const c = arg[j] as string;
      if ('cfLST'.includes(c)) {
        let value = arg.slice(j + 1);
        if (value === '') value = argv[++i] ?? '';
        if (value === '' && argv[i] === undefined) return { error: `tmux: option requires an argument -- ${c}\n${USAGE}` };
        if (c === 'S') flags.socketPath = value;
        else if (c === 'L') flags.label = value;
        else if (c === 'c') flags.shellCommand = value;
        break;
      }
      if (c === 'V') flags.version = true;
      else if (c === 'N') flags.noStart = true;
      else if (c === 'C') flags.control = true;
      else if (!'2DluvU'.includes(c)) return { error: `tmux: unknown option -- ${c}\n${USAGE}` };
    }
  }
  flags.rest = argv.slice(i);
  return flags;
}

/**
 * The socket path as tmux names it: -S as given; else -L's name (or "default") in
 * $TMUX_TMPDIR (or /tmp)/tmux-UID; else, inside tmux, the socket $TMUX names.
 */
export function tmuxSocketPath(flags: Pick<GlobalFlags, 'socketPath' | 'label'>, env: Readonly<Record<string, string | undefined>>, uid: number): string {
  if (flags.socketPath !== undefined && flags.socketPath !== '') return flags.socketPath;
  if (flags.label === undefined && env.TMUX) {
    const fromEnv = env.TMUX.split(',')[0];
    if (fromEnv) return fromEnv;
  }
  const base = env.TMUX_TMPDIR !== undefined && env.TMUX_TMPDIR !== '' ? env.TMUX_TMPDIR : '/tmp';
  return path.join(base, `tmux-${uid}`, flags.label ?? 'default');
}
