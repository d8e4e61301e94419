/**
 * Commands that run other commands or programs: source-file, if-shell, run-shell, and wait-for
 * channels. Shell commands run through the host, in the client's directory, with the server's
 * environment.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { formatTrue } from '../format.js';
import { hasFlag, type ParsedCommand } from '../grammar.js';
import { optionString } from '../options.js';
import type { TmuxRuntime } from '../runtime.js';
import { CommandError, type CommandContext } from './context.js';
import type { Command } from './session-commands.js';

function shellEnv(ctx: CommandContext): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of ctx.server.environment) if (v !== null) env[k] = v;
  const session = ctx.current.session;
  env.TMUX = `${ctx.server.socketPath},${ctx.server.pid},${session?.id ?? -1}`;
  return env;
}

function shellOf(ctx: CommandContext, runtime: TmuxRuntime): string {
  return optionString(ctx.current.session?.options.get('default-shell') ?? ctx.server.globalSessionOptions.get('default-shell')) ?? runtime.host.fallbackShell();
}

const sourceFile: Command = async (ctx, _runtime, command) => {
  for (const file of command.args) {
    const full = path.resolve(ctx.client.cwd, hasFlag(command, 'F') ? ctx.expand(file, ctx.current) : file);
    let text: string;
    try {
      text = readFileSync(full, 'utf8');
    } catch (err) {
      if (hasFlag(command, 'q') && (err as NodeJS.ErrnoException).code === 'ENOENT') continue;
      throw new CommandError(`${file}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'No such file or directory' : (err as Error).message}`);
    }
    if (hasFlag(command, 'n')) continue;
    if (!(await ctx.runCommands(text))) throw new CommandError(`${file}: a command failed`);
  }
};

const ifShell: Command = async (ctx, runtime, command) => {
  const [condition, then, otherwise] = command.args as [string, string, string | undefined];
  const target = ctx.targetOrNothing(command, 'pane');
  let ok: boolean;
  if (hasFlag(command, 'F')) ok = formatTrue(ctx.expand(condition, target));
  else {
    const result = await ctx.suspend(runtime.host.runShell(shellOf(ctx, runtime), ctx.expand(condition, target), ctx.client.cwd, shellEnv(ctx)));
    ok = result.exitCode === 0;
  }
  const chosen = ok ? then : otherwise;
  if (chosen !== undefined && !(await ctx.runCommands(chosen))) throw new CommandError('');
};

const runShell: Command = async (ctx, runtime, command) => {
  const text = command.args[0];
  if (text === undefined) return;
  const target = ctx.targetOrNothing(command, 'pane');
  if (hasFlag(command, 'C')) {
    if (!(await ctx.runCommands(text))) throw new CommandError('');
    return;
  }
  const run = runtime.host.runShell(shellOf(ctx, runtime), ctx.expand(text, target), ctx.client.cwd, shellEnv(ctx));
  if (hasFlag(command, 'b')) {
    void run.catch(() => undefined);
    return;
  }
  const result = await ctx.suspend(run);
  if (result.stdout !== '') ctx.write(result.stdout.endsWith('\n') ? result.stdout : `${result.stdout}\n`);
  if (result.exitCode !== 0) throw new CommandError(`'${text}' returned ${result.exitCode}`);
};

/** A wait-for channel: clients waiting on it, whether it is locked and who waits for the lock. */
interface Channel {
  waiters: (() => void)[];
  locked: boolean;
  lockers: (() => void)[];
  /** Signalled with no one waiting: the next wait returns at once. */
  woken: boolean;
}

const channels = new WeakMap<object, Map<string, Channel>>();

const waitFor: Command = async (ctx, _runtime, command: ParsedCommand) => {
  const name = command.args[0] as string;
  const table = channels.get(ctx.server) ?? new Map<string, Channel>();
  channels.set(ctx.server, table);
  const channel: Channel = table.get(name) ?? { waiters: [], locked: false, lockers: [], woken: false };
  table.set(name, channel);
  if (hasFlag(command, 'S')) {
    const waiters = channel.waiters.splice(0);
    if (waiters.length === 0) channel.woken = true;
    for (const wake of waiters) wake();
    return;
  }
  if (hasFlag(command, 'L')) {
    if (channel.locked) await ctx.suspend(new Promise<void>((resolve) => channel.lockers.push(resolve)));
    channel.locked = true;
    return;
  }
  if (hasFlag(command, 'U')) {
    if (!channel.locked) throw new CommandError(`channel ${name} not locked`);
    const next = channel.lockers.shift();
    if (next) next();
    else channel.locked = false;
    return;
  }
  if (channel.woken) {
    channel.woken = false;
    return;
  }
  await ctx.suspend(new Promise<void>((resolve) => channel.waiters.push(resolve)));
};

export const SCRIPT_COMMANDS: Readonly<Record<string, Command>> = {
  'source-file': sourceFile,
  'if-shell': ifShell,
  'run-shell': runShell,
  'wait-for': waitFor,
};
