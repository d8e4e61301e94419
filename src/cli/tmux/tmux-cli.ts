/** `switchboard tmux …`, `switchboard herdr …` and `switchboard compat install`. */
import path from 'node:path';
import { isatty } from 'node:tty';
import { switchboardHome } from '../../platform/index.js';
import type { CliContext } from '../context.js';
import { parseCommandArgs, UsageError } from '../args.js';
import { installCompat } from './compat.js';
import { runHerdrLauncher } from './herdr-cli.js';
import { runTmuxLauncher } from './launcher.js';

/** `switchboard tmux ARGS…`: one tmux command line, answered as tmux 3.3 answers it. */
export function tmuxCliCommand(ctx: CliContext, argv: string[]): Promise<number> {
  return runTmuxLauncher(argv, { env: ctx.env, cwd: process.cwd(), stdout: ctx.stdout, stderr: ctx.stderr, stdin: () => ctx.stdin, stdinIsTTY: isatty(0), home: ctx.home });
}

/** `switchboard herdr ARGS…`: the herdr front end. */
export function herdrCliCommand(ctx: CliContext, argv: string[]): Promise<number> {
  return runHerdrLauncher(argv, { env: ctx.env, cwd: process.cwd(), stdout: ctx.stdout, stderr: ctx.stderr, home: ctx.home });
}

/** `switchboard compat install [--dir DIR] [--no-compile]`: the tmux and herdr launchers, for PATH. */
export async function compatCommand(ctx: CliContext, argv: string[]): Promise<number> {
  const [verb, ...rest] = argv;
  if (verb !== 'install') throw new UsageError(verb === undefined ? 'say what to do: install' : `unknown compat command '${verb}'`);
  const { values, positionals } = parseCommandArgs(rest, { dir: { type: 'string' }, 'no-compile': { type: 'boolean' } });
  if (positionals.length > 0) throw new UsageError(`unexpected argument '${positionals[0] ?? ''}'`);
  const home = ctx.home ?? switchboardHome(ctx.env);
  const dir = typeof values.dir === 'string' ? values.dir : path.join(home, 'bin');
  const result = await installCompat({ dir, home: ctx.home ?? ctx.env.SWITCHBOARD_HOME, compile: values['no-compile'] !== true, env: ctx.env });
  ctx.stdout.write(`installed ${result.files.map((f) => path.basename(f)).join(', ')} in ${result.dir} (tmux: ${result.tmux === 'native' ? 'compiled C launcher' : 'Node launcher'})\n`);
  for (const note of result.notes) ctx.stdout.write(`note: ${note}\n`);
  const sep = path.delimiter;
  ctx.stdout.write(`put it first on PATH, e.g.  export PATH="${result.dir}${sep}$PATH"  (PowerShell: $env:Path = "${result.dir};" + $env:Path)\n`);
  ctx.stdout.write(`CCB 8.x on Windows: set CCB_HERDR_EXE to ${path.join(result.dir, 'herdr.cmd')}\n`);
  return 0;
}
