/**
 * The tmux front end in the daemon: one call runs one `tmux` command line. It reads tmux's own
 * flags (-S, -L, -V, …), finds the server (namespace) the socket names, starts it when a command
 * needs one (as tmux starts its server), parses every command before any runs, runs them in order
 * until one fails, and answers with what tmux would have printed and its exit code.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Disposable } from '../core/disposable.js';
import { holdSocketFile } from '../platform/index.js';
import { silentLogger, type Logger } from '../core/logger.js';
import { CommandContext, CommandError, type ClientInfo } from './commands/context.js';
import { COMMAND_IMPLEMENTATIONS } from './commands/index.js';
import { TMUX_VERSION } from './format-scope.js';
import { CommandParseError, flagValue, parseArgv, tokenizeCommandString, type ParsedCommand } from './grammar.js';
import { parseGlobalFlags, tmuxSocketPath, type GlobalFlags } from './client-args.js';
import type { PaneHost } from './host.js';
import { SESSION_HOOKS, sessionEnvironment, type TmuxPane } from './model.js';
import { TmuxRuntime } from './runtime.js';
import { EMPTY_TARGET, TargetResolver, type TargetState, type TargetType } from './target.js';

/** One tmux invocation as the launcher sends it. */
export interface TmuxRequest {
  argv: readonly string[];
  env: Record<string, string>;
  cwd: string;
  /** The client's standard input is a terminal. */
  tty: boolean;
  /** The client's standard input, when a command reads it (load-buffer -). */
  stdin?: string;
}

/**
 * Who sends a command line, when it is not the owner: every command is judged before any runs
 * (command-authority.ts gives the scope each needs), and panes it starts get a token no greater
 * than the caller's.
 */
export interface TmuxCaller {
  /** Throws (FORBIDDEN) when the caller may not run `command`. */
  check(command: ParsedCommand): void;
  /** The scopes of the token panes this caller starts get. */
  paneScopes: readonly string[];
}

/** What the launcher prints and exits with. */
export interface TmuxReply {
  stdout: string;
  stderr: string;
  exit_code: number;
  /** Switchboard pane to attach the terminal to (attach-session, new-session without -d). */
  attach?: string;
  /** Send the request again with stdin: a command reads it. */
  need_stdin?: boolean;
}

export interface TmuxServiceOptions {
  /** The pid #{pid} reports (the daemon's). */
  pid: number;
  hostName: string;
  /** For the default socket directory, /tmp/tmux-UID. */
  uid: number;
  logger?: Logger;
  /**
   * Hold a socket file at each -S path while its server runs, left behind when it ends, as tmux
   * does (the daemon's service); tests of the model alone leave the paths alone.
   */
  socketFiles?: boolean;
}

/** Most commands one hook run may queue, so a hook that fires itself cannot loop forever. */
const MAX_HOOK_DEPTH = 8;

/** Runs tmux command lines against the namespaces this daemon holds. */
export class TmuxService implements Disposable {
  private readonly runtimes = new Map<string, TmuxRuntime>();
  /** Socket paths of servers that ran and ended (tmux leaves the socket file behind). */
  private readonly ended = new Set<string>();
  /** One lock per namespace: a command line runs to its end (or to a wait) before the next starts. */
  private readonly locks = new Map<string, NamespaceLock>();
  private readonly logger: Logger;

  constructor(
    private readonly host: PaneHost,
    private readonly options: TmuxServiceOptions,
  ) {
    this.logger = options.logger ?? silentLogger;
  }

  /** Namespaces with a running server, by socket path. */
  get servers(): ReadonlyMap<string, TmuxRuntime> {
    return this.runtimes;
  }

  /** The tmux pane (with its server) that a Switchboard pane backs, if any. */
  paneOf(hostPaneId: string): { runtime: TmuxRuntime; pane: TmuxPane } | undefined {
    for (const runtime of this.runtimes.values()) {
      const pane = runtime.server.allPanes().find((p) => p.host?.id === hostPaneId);
      if (pane) return { runtime, pane };
    }
    return undefined;
  }

  /** Runs one command line, for the owner or, with `caller`, for a caller with a scoped token. */
  run(request: TmuxRequest, caller?: TmuxCaller): Promise<TmuxReply> {
    const flags = parseGlobalFlags(request.argv);
    if ('error' in flags) return Promise.resolve({ stdout: '', stderr: flags.error, exit_code: 1 });
    if (flags.version) return Promise.resolve({ stdout: `tmux ${TMUX_VERSION}\n`, stderr: '', exit_code: 0 });
    if (flags.control) return Promise.resolve({ stdout: '', stderr: 'control mode is not supported by this tmux front end\n', exit_code: 1 });
    const shown = this.socketPath(flags, request.env);
    const key = path.resolve(request.cwd, shown);
    return this.lockOf(key).run((lock) => this.runQueued(flags, request, shown, key, lock, caller));
  }

  private lockOf(key: string): NamespaceLock {
    let lock = this.locks.get(key);
    if (!lock) {
      lock = new NamespaceLock(() => {
        if (this.locks.get(key) === lock) this.locks.delete(key);
      });
      this.locks.set(key, lock);
    }
    return lock;
  }

  /** The socket path as tmux would name it (see tmuxSocketPath). */
  socketPath(flags: Pick<GlobalFlags, 'socketPath' | 'label'>, env: Record<string, string>): string {
    return tmuxSocketPath(flags, env, this.options.uid);
  }

  private async runQueued(flags: GlobalFlags, request: TmuxRequest, shown: string, key: string, lock: LockHandle, caller: TmuxCaller | undefined): Promise<TmuxReply> {
    if (flags.shellCommand !== undefined) return { stdout: '', stderr: 'tmux -c is not supported by this tmux front end\n', exit_code: 1 };
    const words = flags.rest.length > 0 ? flags.rest : ['new-session'];
    let commands: ParsedCommand[];
    let runtime = this.runtimes.get(key);
    try {
      commands = parseArgv(words, runtime ? commandAliases(runtime) : {});
    } catch (err) {
      if (err instanceof CommandParseError) return { stdout: '', stderr: `${err.message}\n`, exit_code: 1 };
      throw err;
    }
    // Judged as a whole before anything runs: a refused command leaves no earlier one half done.
    for (const command of commands) caller?.check(command);
    if (request.stdin === undefined && commands.some((c) => c.spec.name === 'load-buffer' && c.args[0] === '-')) {
      return { stdout: '', stderr: '', exit_code: 0, need_stdin: true };
    }
    if (!runtime) {
      const starts = !flags.noStart && commands.some((c) => c.spec.startsServer);
      if (!starts) {
        const leftBehind = this.ended.has(key) || existsSync(key);
        return { stdout: '', stderr: leftBehind ? `no server running on ${shown}\n` : `error connecting to ${shown} (No such file or directory)\n`, exit_code: 1 };
      }
      // tmux makes its own socket directory for -L names; a -S path's directory must exist (tmux prints this and exits 0).
      if (flags.socketPath !== undefined && !existsSync(path.dirname(key))) return { stdout: '', stderr: `error creating ${shown} (No such file or directory)\n`, exit_code: 0 };
      runtime = this.startServer(key, shown, request.env);
      if (flags.socketPath !== undefined && this.options.socketFiles === true) await this.holdSocketFile(runtime, key);
    }
    const client: ClientInfo = { env: request.env, cwd: request.cwd, tty: request.tty, stdin: request.stdin, ...(caller ? { paneScopes: caller.paneScopes } : {}) };
    const ctx = this.context(runtime, client, currentTarget(runtime, request.env), 0);
    ctx.suspend = (promise) => lock.suspend(promise);
    let exitCode = 0;
    for (const command of commands) {
      if (runtime.isClosed) break;
      const ok = await this.execute(ctx, runtime, command, 0);
      if (!ok) {
        exitCode = 1;
        break;
      }
    }
    runtime.closeIfEmpty();
    const reply: TmuxReply = { stdout: ctx.stdout.join(''), stderr: ctx.stderr.join(''), exit_code: exitCode };
    if (ctx.attachPane !== undefined && exitCode === 0) reply.attach = ctx.attachPane;
    return reply;
  }

  /** Runs one command and its after- hooks; false when it failed (its message is in stderr). */
  private async execute(ctx: CommandContext, runtime: TmuxRuntime, command: ParsedCommand, depth: number): Promise<boolean> {
    const implementation = COMMAND_IMPLEMENTATIONS[command.spec.name];
    const before = ctx.current;
    const name = `after-${command.spec.name}`;
    // Resolved before the command runs (rename-window renames what its -t named), and only when
    // such a hook is set (or being set: a set-hook of after-set-hook runs itself, as in tmux), so
    // the commands a tool polls with pay nothing for hooks nobody set.
    const wanted = depth < MAX_HOOK_DEPTH && SESSION_HOOKS.includes(name) && (command.spec.name === 'set-hook' || hasHook(runtime, name));
    const hook = wanted ? hookTarget(ctx, command) : undefined;
    ctx.expectAfterHook();
    try {
      if (!implementation) throw new CommandError(`${command.spec.name}: not supported by the Switchboard tmux front end`);
      await implementation(ctx, runtime, command);
    } catch (err) {
      if (err instanceof CommandError) {
        ctx.stderr.push(`${err.message}\n`);
        return false;
      }
      this.logger.error('tmux command failed', { command: command.spec.name, error: err instanceof Error ? (err.stack ?? err.message) : String(err) });
      ctx.stderr.push(`${command.spec.name}: ${err instanceof Error ? err.message : String(err)}\n`);
      return false;
    }
    if (hook && ctx.afterHook && !runtime.isClosed && hasHook(runtime, name)) {
      // What made something runs its hook on it; any other command on its target, or, when that is
      // gone (kill-pane), on the current one, or the best session when that is gone too.
      const alive = (state: TargetState): boolean => (!state.pane || runtime.server.findPane(state.pane.id) !== undefined) && (!state.session || runtime.server.sessions.includes(state.session));
      const target = ctx.current !== before ? ctx.current : alive(hook) ? hook : alive(ctx.current) ? ctx.current : currentTarget(runtime, ctx.client.env);
      // tmux runs a session's own hook instead of the global one, not as well.
      const texts = target.session?.hooks.get(name) ?? runtime.server.sessionHooks.get(name) ?? [];
      if (texts.length > 0) {
        const current = ctx.current;
        ctx.setCurrent(target);
        try {
          for (const text of texts) await this.runCommandString(ctx, runtime, text, depth + 1);
        } finally {
          ctx.setCurrent(current);
        }
      }
    }
    return true;
  }

  /** Runs a stored command string (a hook's, a sourced file's) in `ctx`; false when a command failed. */
  private async runCommandString(ctx: CommandContext, runtime: TmuxRuntime, text: string, depth: number): Promise<boolean> {
    let commands: ParsedCommand[];
    try {
      // tmux's parser takes `$NAME` from the server's global environment, never the client's.
      commands = tokenizeCommandString(text, sessionEnvironment(runtime.server, undefined)).flatMap((words) => parseArgv(words, commandAliases(runtime)));
    } catch (err) {
      ctx.stderr.push(`${err instanceof Error ? err.message : String(err)}\n`);
      return false;
    }
    for (const command of commands) if (!(await this.execute(ctx, runtime, command, depth))) return false;
    return true;
  }

  /** A context whose nested command strings run through this service. */
  private context(runtime: TmuxRuntime, client: ClientInfo, current: TargetState, depth: number): CommandContext {
    const ctx = new CommandContext(runtime.server, this.host, client, current);
    ctx.runCommands = (text) => (depth >= MAX_HOOK_DEPTH ? Promise.resolve(false) : this.runCommandString(ctx, runtime, text, depth + 1));
    return ctx;
  }

  /**
   * A socket file at the server's -S path for as long as it runs, so `test -S path` finds one; a
   * tmux client that connects to it is closed on at once (tmux prints "server exited unexpectedly").
   */
  private async holdSocketFile(runtime: TmuxRuntime, socketPath: string): Promise<void> {
    const held = await holdSocketFile(socketPath).catch((err: unknown) => {
      this.logger.warn('no socket file at the tmux server path', { socket: socketPath, error: String(err) });
      return undefined;
    });
    if (!held) return;
    if (runtime.isClosed) held.dispose();
    else runtime.onClosed(() => held.dispose());
  }

  private startServer(key: string, shown: string, env: Record<string, string>): TmuxRuntime {
    const runtime = new TmuxRuntime(shown, this.options.pid, this.options.hostName, this.host, this.logger, env);
    this.runtimes.set(key, runtime);
    this.ended.delete(key);
    runtime.onClosed(() => {
      if (this.runtimes.get(key) === runtime) this.runtimes.delete(key);
      this.ended.add(key);
    });
    // Hooks fired by events (a pane died) run on the namespace's queue; their output goes nowhere.
    runtime.runHookCommands = (commands, pane) => {
      void this.lockOf(key)
        .run(async (lock) => {
          if (runtime.isClosed) return;
          const current = pane && runtime.server.findPane(pane.id) ? new TargetResolver(runtime.server, EMPTY_TARGET).ofPane(pane) : currentTarget(runtime, env);
          const ctx = this.context(runtime, { env, cwd: '/', tty: false, stdin: undefined }, current, 1);
          ctx.suspend = (promise) => lock.suspend(promise);
          for (const text of commands) await this.runCommandString(ctx, runtime, text, 1);
          runtime.closeIfEmpty();
        })
        .catch((err: unknown) => this.logger.warn('tmux hook failed', { error: String(err) }));
    };
    this.logger.info('tmux server started', { socket: shown });
    return runtime;
  }

  /** Ends every namespace (the daemon is shutting down). */
  dispose(): void {
    for (const runtime of [...this.runtimes.values()]) void runtime.kill();
    this.runtimes.clear();
  }
}

/** What a running command line holds of its namespace's lock. */
interface LockHandle {
  /** Lets other command lines run while `promise` settles (wait-for, run-shell), then takes the lock back. */
  suspend<T>(promise: Promise<T>): Promise<T>;
}

/** A namespace's lock: command lines run one at a time, in arrival order. */
class NamespaceLock {
  private held = false;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly onIdle: () => void) {}

  async run<T>(fn: (handle: LockHandle) => Promise<T>): Promise<T> {
    await this.acquire();
    try {
      return await fn({
        suspend: async (promise) => {
          this.release();
          try {
            return await promise;
          } finally {
            await this.acquire();
          }
        },
      });
    } finally {
      this.release();
      if (!this.held && this.waiting.length === 0) this.onIdle();
    }
  }

  private acquire(): Promise<void> {
    if (!this.held) {
      this.held = true;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  private release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.held = false;
  }
}

/**
 * Whether any session, or the server, has hook `name` set. tmux 3.3a runs `after-<command>` hooks
 * only for the commands it lists as hooks (SESSION_HOOKS): respawn-pane, kill-session and the like
 * have none; a command that changed nothing it hooks (select-pane) says so in ctx.afterHook.
 */
function hasHook(runtime: TmuxRuntime, name: string): boolean {
  return (runtime.server.sessionHooks.get(name)?.length ?? 0) > 0 || runtime.server.sessions.some((s) => s.hooks.has(name));
}

/** The target an after- hook runs on: the command's -t of its kind, or the current one when that names nothing now (a killed pane). */
function hookTarget(ctx: CommandContext, command: ParsedCommand): TargetState {
  const kind = /\[-t target-(pane|window|session)\]/.exec(command.spec.usage)?.[1] as TargetType | undefined;
  if (kind === undefined || flagValue(command, 't') === undefined) return ctx.current;
  try {
    return ctx.resolver.resolve(flagValue(command, 't'), kind);
  } catch {
    return ctx.current;
  }
}

/** The command-alias server option as a table. */
function commandAliases(runtime: TmuxRuntime): Record<string, string> {
  const aliases: Record<string, string> = {};
  const value = runtime.server.options.get('command-alias');
  for (const item of typeof value === 'string' || value === undefined ? [] : value) {
    const eq = item.indexOf('=');
    if (eq > 0) aliases[item.slice(0, eq)] = item.slice(eq + 1);
  }
  return aliases;
}

/** The client's current target: the pane it runs in ($TMUX_PANE), else the most recently used session. */
function currentTarget(runtime: TmuxRuntime, env: Record<string, string>): TargetState {
  const resolver = new TargetResolver(runtime.server, EMPTY_TARGET);
  const paneName = env.TMUX_PANE;
  if (paneName) {
    const pane = runtime.server.allPanes().find((p) => p.name === paneName);
    if (pane) return resolver.ofPane(pane);
  }
  const session = runtime.server.bestSession();
  return session ? resolver.sessionCurrent(session) : { ...EMPTY_TARGET };
}

