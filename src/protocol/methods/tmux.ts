/** The tmux front end's method: one tmux command line (the `tmux` launcher's argv) against the daemon's tmux namespaces. */
import { z } from 'zod';
import { MAX_TEXT, optional } from './common.js';

export const tmuxParams = {
  /** Runs one tmux command line (the `tmux` launcher's argv) against the daemon's tmux front end. */
  tmux_command: z.strictObject({
    argv: z.array(z.string().max(MAX_TEXT)).max(4096),
    /** The client's whole environment (tmux's server takes it at start; TMUX_PANE names the client's pane). */
    env: optional(z.record(z.string(), z.string().max(128 * 1024))),
    cwd: optional(z.string().min(1).max(4096)),
    /** The client's standard input is a terminal (attach-session and new-session without -d need one). */
    tty: optional(z.boolean()),
    /** The client's standard input, sent once a reply asked for it (load-buffer -). */
    stdin: optional(z.string().max(16 * MAX_TEXT)),
  }),
} as const;

export const tmuxResults = {
  /** What tmux would have printed and its exit code; `attach` names a pane to attach the terminal to; `need_stdin` asks for the call again with stdin. */
  tmux_command: z.object({ stdout: z.string(), stderr: z.string(), exit_code: z.number(), attach: z.string().optional(), need_stdin: z.boolean().optional() }),
} as const;
