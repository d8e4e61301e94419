import { randomBytes } from 'node:crypto';
import { statSync } from 'node:fs';
import path from 'node:path';
import { Emitter, type Event } from '../core/emitter.js';
import { SwitchboardError } from '../core/errors.js';
import { silentLogger, type Logger } from '../core/logger.js';
import { closeOnExecProblem, defaultShell, envNameMatches, resolveExecutable, setEnvVar, shellCommandLine, type CommandLine } from '../platform/index.js';
import { Pane, PANE_MARKER_VARIABLE, type ExitInfo, type PaneAgent } from './pane.js';
import { RenderScheduler } from './render-scheduler.js';

/** What a new pane runs and how it looks. Unset fields take the registry's defaults. */
export interface CreatePaneOptions {
  /** A command line in the shell's syntax, run through the default shell. */
  command?: string;
  /** A program and its arguments, run directly (no shell). */
  argv?: readonly string[];
  cwd?: string;
  title?: string;
  /** Variables added to (and overriding) the pane's environment. */
  env?: Record<string, string>;
  /**
   * Variables of the base environment the pane must not inherit: names, or prefixes ending in `*`
   * (an agent run from an isolated HOME must not see the user's credentials). `env` still applies.
   */
  unsetEnv?: readonly string[];
  /**
   * Leave TERM and COLORTERM to `env` (default: xterm-256color and truecolor, what the pane's
   * renderer supports). The tmux front end gives its client's, as tmux does.
   */
  terminalFromEnv?: boolean;
  cols?: number;
  rows?: number;
  scrollbackRows?: number;
  /** The agent CLI the pane runs (set by the agent launcher). */
  agent?: PaneAgent;
  /**
   * What the pane's programs may do when they call the daemon back: the scopes of the token they
   * are given (docs/rpc.md). Undefined: whatever the pane environment provider decides by default.
   */
  scopes?: readonly string[];
}

/**
 * What runs a pane's program inside a sandbox, when one applies to it (the daemon: agent panes in
 * bubblewrap when the user asks for it): the command line that starts the sandbox around it, or
 * undefined to start it as it is.
 */
export type PaneJail = (pane: { agent: PaneAgent | undefined; scopes: readonly string[] | undefined; command: CommandLine; cwd: string; env: Readonly<Record<string, string>> }) => CommandLine | undefined;

/** What decides a pane's own variables (the daemon: which token its programs get). */
export type PaneEnvProvider = (pane: { id: string; agent: PaneAgent | undefined; scopes: readonly string[] | undefined }) => Record<string, string>;

export interface PaneDefaults {
  cols: number;
  rows: number;
  scrollbackRows: number;
  rawHistoryBytes: number;
  killGraceMs: number;
}

export interface PaneRegistryOptions {
  logger?: Logger;
  defaults?: Partial<PaneDefaults>;
  /** The environment every pane starts from (the daemon's own, by default). */
  baseEnv?: NodeJS.ProcessEnv;
  /** Variables set in every pane after the base environment (e.g. how to call the daemon back). */
  paneEnv?: Record<string, string>;
  /** Most panes alive at once. */
  maxPanes?: number;
  /** Most exited panes kept listed; the oldest are forgotten beyond this. */
  maxExitedPanes?: number;
  scheduler?: RenderScheduler;
}

const DEFAULT_PANE_DEFAULTS: PaneDefaults = {
  cols: 120,
  rows: 30,
  scrollbackRows: 10_000,
  rawHistoryBytes: 256 * 1024,
  killGraceMs: 3_000,
};

/** Variables that would make a program think it runs inside another multiplexer. */
const SCRUBBED_ENV = ['TMUX', 'TMUX_PANE', 'STY', 'WEZTERM_PANE', 'WEZTERM_UNIX_SOCKET', 'ZELLIJ', 'ZELLIJ_SESSION_NAME'];

const LIMITS = {
  minCols: 2,
  maxCols: 1000,
  minRows: 1,
  maxRows: 500,
  maxScrollbackRows: 1_000_000,
} as const;

/** All panes of one daemon (or one embedding process): creation, lookup, kill and removal. */
export class PaneRegistry {
  readonly defaults: PaneDefaults;
  private readonly panes = new Map<string, Pane>();
  private readonly logger: Logger;
  private readonly scheduler: RenderScheduler;
  private readonly baseEnv: NodeJS.ProcessEnv;
  private paneEnv: Record<string, string>;
  private paneEnvProvider: PaneEnvProvider | undefined;
  private paneJail: PaneJail | undefined;
  private readonly maxPanes: number;
  private readonly maxExitedPanes: number;
  private closed = false;

  private readonly createdEmitter = new Emitter<Pane>();
  private readonly removedEmitter = new Emitter<Pane>();
  /** A pane was created (its process is running). */
  readonly onPaneCreated: Event<Pane> = this.createdEmitter.event;
  /** A pane was removed from the registry. */
  readonly onPaneRemoved: Event<Pane> = this.removedEmitter.event;

  constructor(options: PaneRegistryOptions = {}) {
    this.logger = options.logger ?? silentLogger;
    this.defaults = { ...DEFAULT_PANE_DEFAULTS, ...options.defaults };
    this.scheduler = options.scheduler ?? new RenderScheduler();
    this.baseEnv = options.baseEnv ?? process.env;
    this.paneEnv = options.paneEnv ?? {};
    this.maxPanes = options.maxPanes ?? 256;
    this.maxExitedPanes = options.maxExitedPanes ?? 128;
    const problem = closeOnExecProblem();
    if (problem) this.logger.warn('no pane will start: without the native helper every program would inherit the terminals of the panes before it', { problem });
  }

  /** Starts a new pane. Throws INVALID_PARAMS, LIMIT_EXCEEDED or SPAWN_FAILED. */
  create(options: CreatePaneOptions = {}): Pane {
    if (this.closed) throw new SwitchboardError('SHUTTING_DOWN', 'the daemon is shutting down');
    // Without close-on-exec on each PTY master every later pane could type into the earlier ones
    // (node-pty leaves them inheritable): no pane rather than panes that are not private.
    const helperProblem = closeOnExecProblem();
    if (helperProblem !== undefined) {
      throw new SwitchboardError('SPAWN_FAILED', `panes cannot start: ${helperProblem}`, { reason: 'native_helper_missing' });
    }
    const alive = [...this.panes.values()].filter((p) => p.alive).length;
    if (alive >= this.maxPanes) {
      throw new SwitchboardError('LIMIT_EXCEEDED', `too many panes: ${alive} running (limit ${this.maxPanes})`);
    }
    if (options.command !== undefined && options.argv !== undefined) {
      throw new SwitchboardError('INVALID_PARAMS', 'give either command or argv, not both');
    }
    const cwd = this.resolveCwd(options.cwd);
    const env = this.environmentFor(options.env, options.unsetEnv, options.terminalFromEnv !== true);
    const resolved = this.resolveCommand(options, env, cwd);
    const commandLine = this.paneJail?.({ agent: options.agent, scopes: options.scopes, command: resolved, cwd, env }) ?? resolved;
    const cols = options.cols ?? this.defaults.cols;
    const rows = options.rows ?? this.defaults.rows;
    checkSize(cols, rows);
    const id = this.newId();
    for (const [key, value] of Object.entries(this.paneEnvProvider?.({ id, agent: options.agent, scopes: options.scopes }) ?? {})) setEnvVar(env, key, value);
    setEnvVar(env, PANE_MARKER_VARIABLE, id);
    // The daemon's own $PWD would be wrong here, and some programs (OpenCode) trust $PWD over their cwd.
    if (!('PWD' in (options.env ?? {}))) setEnvVar(env, 'PWD', cwd);
    const commandText = options.command ?? (options.argv ? options.argv.join(' ') : [resolved.file, ...resolved.args].join(' '));
    const pane = new Pane(
      {
        id,
        title: options.title?.trim() || `pane ${this.panes.size + 1}`,
        file: commandLine.file,
        args: commandLine.args,
        commandText,
        cwd,
        env,
        cols,
        rows,
        scrollbackRows: options.scrollbackRows ?? this.defaults.scrollbackRows,
        rawHistoryBytes: this.defaults.rawHistoryBytes,
        agent: options.agent,
      },
      { scheduler: this.scheduler, logger: this.logger },
    );
    this.panes.set(id, pane);
    pane.onExit(() => this.forgetOldExited());
    this.logger.info('pane created', { pane: id, pid: pane.pid, command: commandText, cwd });
    this.createdEmitter.fire(pane);
    return pane;
  }

  /** Sets the variables every pane created from now on gets (after the base environment). */
  setPaneEnv(vars: Record<string, string>): void {
    this.paneEnv = { ...vars };
  }

  /** Sets what starts a pane's program inside a sandbox, for the panes it applies to. */
  setPaneJail(jail: PaneJail | undefined): void {
    this.paneJail = jail;
  }

  /** Sets what adds each new pane's own variables (after the shared ones and the caller's `env`). */
  setPaneEnvProvider(provider: PaneEnvProvider | undefined): void {
    this.paneEnvProvider = provider;
  }

  /** The pane with this id; throws PANE_NOT_FOUND. */
  get(id: string): Pane {
    const pane = this.panes.get(id);
    if (!pane) throw new SwitchboardError('PANE_NOT_FOUND', `pane not found: ${id}`, { pane_id: id });
    return pane;
  }

  /** The pane with this id, or undefined. */
  find(id: string): Pane | undefined {
    return this.panes.get(id);
  }

  /** Every pane, oldest first, exited ones included. */
  list(): Pane[] {
    return [...this.panes.values()];
  }

  get size(): number {
    return this.panes.size;
  }

  /** Ends a pane's process tree (TERM, then KILL after the grace period); the pane stays listed. */
  kill(id: string, options: { graceMs?: number; signal?: NodeJS.Signals } = {}): Promise<ExitInfo> {
    const pane = this.get(id);
    return pane.kill({ graceMs: options.graceMs ?? this.defaults.killGraceMs, signal: options.signal });
  }

  /** Kills the pane (and anything it left running), then forgets it. */
  async remove(id: string, options: { graceMs?: number } = {}): Promise<void> {
    const pane = this.get(id);
    await pane.kill({ graceMs: options.graceMs ?? this.defaults.killGraceMs });
    this.forget(pane);
  }

  /** SIGKILL to every pane's processes at once, without waiting (a daemon that must exit now). */
  killAllNow(): void {
    for (const pane of this.list()) pane.killNow();
  }

  /** Ends every pane and what they left running (in parallel), and releases them all. Later creates fail with SHUTTING_DOWN. */
  async close(options: { graceMs?: number } = {}): Promise<void> {
    this.closed = true;
    const graceMs = options.graceMs ?? this.defaults.killGraceMs;
    await Promise.all(this.list().map((p) => p.kill({ graceMs }).catch(() => undefined)));
    for (const pane of this.list()) this.forget(pane);
    this.createdEmitter.dispose();
    this.removedEmitter.dispose();
  }

  private forget(pane: Pane): void {
    if (this.panes.get(pane.id) !== pane) return;
    this.panes.delete(pane.id);
    this.removedEmitter.fire(pane);
    pane.dispose();
  }

  private forgetOldExited(): void {
    const exited = this.list().filter((p) => !p.alive);
    const excess = exited.length - this.maxExitedPanes;
    if (excess <= 0) return;
    exited.sort((a, b) => (a.exitTime?.getTime() ?? 0) - (b.exitTime?.getTime() ?? 0));
    for (const pane of exited.slice(0, excess)) {
      this.logger.info('forgetting an old exited pane', { pane: pane.id });
      this.forget(pane);
    }
  }

  private newId(): string {
    for (;;) {
      const id = `p${randomBytes(4).toString('hex')}`;
      if (!this.panes.has(id)) return id;
    }
  }

  /** The absolute working directory for `cwd` (default: the daemon's), or INVALID_PARAMS. */
  resolveCwd(cwd: string | undefined): string {
    const dir = path.resolve(cwd ?? process.cwd());
    let stat: ReturnType<typeof statSync>;
    try {
      stat = statSync(dir);
    } catch {
      throw new SwitchboardError('INVALID_PARAMS', `cwd does not exist: ${dir}`, { cwd: dir });
    }
    if (!stat.isDirectory()) throw new SwitchboardError('INVALID_PARAMS', `cwd is not a directory: ${dir}`, { cwd: dir });
    return dir;
  }

  /**
   * The environment a pane created with `extra` and `unset` starts with (before its marker), so
   * callers can find programs and probe them with what the pane will see. Throws INVALID_PARAMS for
   * a variable no process can carry.
   */
  environmentFor(extra: Record<string, string> | undefined, unset: readonly string[] = [], terminalDefaults = true): Record<string, string> {
    const env: Record<string, string> = {};
    for (const [key, value] of Object.entries(this.baseEnv)) {
      if (value === undefined || SCRUBBED_ENV.includes(key) || unset.some((pattern) => envNameMatches(key, pattern))) continue;
      env[key] = value;
    }
    if (terminalDefaults) {
      setEnvVar(env, 'TERM', 'xterm-256color');
      setEnvVar(env, 'COLORTERM', 'truecolor');
    }
    for (const [key, value] of Object.entries(this.paneEnv)) setEnvVar(env, key, value);
    for (const [key, value] of Object.entries(extra ?? {})) {
      if (key === '' || key.includes('=') || key.includes('\0')) {
        throw new SwitchboardError('INVALID_PARAMS', `invalid environment variable name: ${JSON.stringify(key)}`);
      }
      if (value.includes('\0')) throw new SwitchboardError('INVALID_PARAMS', `environment variable ${key} contains a NUL byte`);
      setEnvVar(env, key, value);
    }
    return env;
  }

  private resolveCommand(options: CreatePaneOptions, env: Record<string, string>, cwd: string): CommandLine {
    if (options.argv !== undefined) {
      const [program, ...args] = options.argv;
      if (program === undefined || program === '') throw new SwitchboardError('INVALID_PARAMS', 'argv must name a program');
      const file = resolveExecutable(program, env, cwd);
      if (!file) throw new SwitchboardError('SPAWN_FAILED', `command not found: ${program}`, { command: program });
      return { file, args };
    }
    if (options.command !== undefined && options.command.trim() !== '') return shellCommandLine(options.command, env);
    return defaultShell(env);
  }
}

function checkSize(cols: number, rows: number): void {
  if (!Number.isInteger(cols) || cols < LIMITS.minCols || cols > LIMITS.maxCols) {
    throw new SwitchboardError('INVALID_PARAMS', `cols must be an integer from ${LIMITS.minCols} to ${LIMITS.maxCols}`);
  }
  if (!Number.isInteger(rows) || rows < LIMITS.minRows || rows > LIMITS.maxRows) {
    throw new SwitchboardError('INVALID_PARAMS', `rows must be an integer from ${LIMITS.minRows} to ${LIMITS.maxRows}`);
  }
}

/** Validates a resize request (same bounds as creation). */
export function checkPaneSize(cols: number, rows: number): void {
  checkSize(cols, rows);
}
