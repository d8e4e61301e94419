/** The tmux front end's method: one tmux command line (the `tmux` launcher's argv) against the daemon's tmux namespaces. */
import { z } from 'zod';
import { MAX_TEXT, optional } from './common.js';

/** The schema's bounds, which the check without zod holds too: lengths (UTF-16 units, as zod counts), argv's entries. */
const MAX_ENV_VALUE = 128 * 1024;
const MAX_CWD = 4096;
const MAX_STDIN = 16 * MAX_TEXT;
const MAX_ARGV = 4096;

export const tmuxParams = {
  /** Runs one tmux command line (the `tmux` launcher's argv) against the daemon's tmux front end. */
  tmux_command: z.strictObject({
    argv: z.array(z.string().max(MAX_TEXT)).max(MAX_ARGV),
    /** The client's whole environment (tmux's server takes it at start; TMUX_PANE names the client's pane). */
    env: optional(z.record(z.string(), z.string().max(MAX_ENV_VALUE))),
    cwd: optional(z.string().min(1).max(MAX_CWD)),
    /** The client's standard input is a terminal (attach-session and new-session without -d need one). */
    tty: optional(z.boolean()),
    /** The client's standard input, sent once a reply asked for it (load-buffer -). */
    stdin: optional(z.string().max(MAX_STDIN)),
  }),
} as const;

const TMUX_COMMAND_KEYS = new Set(['argv', 'env', 'cwd', 'tty', 'stdin']);

const isBoundedString = (v: unknown, max: number): v is string => typeof v === 'string' && v.length <= max;

/**
 * The common `tmux_command` request checked without zod: the launchers call once per `tmux`
 * process, so this runs for every poll a tool makes, and the schema's walk allocates more than the
 * command's own work. It accepts only what the schema accepts and gives it back as it came (the
 * schema's output differs only by nulls, which it leaves to the schema); undefined means "ask the
 * schema", which also words any error.
 */
export function checkTmuxCommandParams(params: unknown): z.output<(typeof tmuxParams)['tmux_command']> | undefined {
  if (typeof params !== 'object' || params === null || Object.getPrototypeOf(params) !== Object.prototype) return undefined;
  const p = params as Record<string, unknown>;
  for (const key in p) if (!TMUX_COMMAND_KEYS.has(key) || !Object.hasOwn(p, key)) return undefined;
  const { argv, env, cwd, tty, stdin } = p;
  if (!Array.isArray(argv) || argv.length > MAX_ARGV) return undefined;
  for (const arg of argv) if (!isBoundedString(arg, MAX_TEXT)) return undefined;
  if (env !== undefined) {
    if (typeof env !== 'object' || env === null || Object.getPrototypeOf(env) !== Object.prototype || Object.hasOwn(env, '__proto__')) return undefined;
    const vars = env as Record<string, unknown>;
    for (const name in vars) if (!Object.hasOwn(vars, name) || !isBoundedString(vars[name], MAX_ENV_VALUE)) return undefined;
  }
  if (cwd !== undefined && (!isBoundedString(cwd, MAX_CWD) || cwd.length === 0)) return undefined;
  if (tty !== undefined && typeof tty !== 'boolean') return undefined;
  if (stdin !== undefined && !isBoundedString(stdin, MAX_STDIN)) return undefined;
  return p as z.output<(typeof tmuxParams)['tmux_command']>;
}

export const tmuxResults = {
  /** What tmux would have printed and its exit code; `attach` names a pane to attach the terminal to; `need_stdin` asks for the call again with stdin. */
  tmux_command: z.object({ stdout: z.string(), stderr: z.string(), exit_code: z.number(), attach: z.string().optional(), need_stdin: z.boolean().optional() }),
} as const;
