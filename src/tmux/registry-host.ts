/**
 * The tmux front end's panes as ordinary Switchboard panes: each program a tmux pane runs is a
 * pane of the daemon's registry (listed, readable, in the dashboard under its tmux session and
 * window), and one that runs an agent CLI is created as that agent's pane, so its state is tracked.
 */
import { execFile, spawn as spawnProcess } from 'node:child_process';
import { statSync } from 'node:fs';
import path from 'node:path';
import type { Disposable } from '../core/disposable.js';
import type { Logger } from '../core/logger.js';
import { silentLogger } from '../core/logger.js';
import { attachDialogResponder, agentTempEnv, profileVersion, createPrivateTemp, releaseTempWithPane, defaultBinaryDirs, findAgentBinary, type AgentCatalog, type AgentProfile, type Dialog, type FirstRunPolicy } from '../agents/index.js';
import type { Pane, PaneAgent, PaneRegistry } from '../pane/index.js';
import { fallbackShell, foregroundProcess, isExecutable, loginShellArgv, resolveExecutable, scriptShell, shellArgv } from '../platform/index.js';
import type { HostExit, HostPane, PaneHost, PipeProcess, SpawnSpec } from './host.js';

/** How long a pane's program gets after HUP before it is killed (tmux sends HUP and moves on). */
const KILL_GRACE_MS = 1_000;
/** Longest a version probe may hold up a pane that runs an agent CLI. */
const VERSION_PROBE_MS = 5_000;

/** Words of a command line, roughly as a shell splits them (enough to spot a program's name). */
function commandWords(argv: readonly string[]): string[] {
  return argv.flatMap((a) => a.split(/[\s;&|()'"`=]+/)).filter(Boolean);
}

class RegistryHostPane implements HostPane {
  constructor(
    private readonly pane: Pane,
    private readonly registry: PaneRegistry,
  ) {}

  get id(): string {
    return this.pane.id;
  }
  get pid(): number {
    return this.pane.pid;
  }
  get alive(): boolean {
    return this.pane.alive;
  }
  get exit(): HostExit | undefined {
    return this.pane.exit;
  }
  get cols(): number {
    return this.pane.cols;
  }
  get rows(): number {
    return this.pane.rows;
  }
  get historyLength(): number {
    return this.pane.historyLength;
  }
  get cursor(): { x: number; y: number; visible: boolean } {
    return this.pane.cursor;
  }
  get altScreen(): boolean {
    return this.pane.altScreen;
  }
  get bracketedPaste(): boolean {
    return this.pane.bracketedPaste;
  }
  get applicationCursorKeys(): boolean {
    return this.pane.inputModes.applicationCursorKeys;
  }
  get windowTitle(): string {
    return this.pane.windowTitle;
  }
  get ttyName(): string {
    return this.pane.ttyName;
  }

  captureRows(from: number, to: number, styled: boolean): ReturnType<Pane['captureRows']> {
    return this.pane.captureRows(from, to, styled);
  }

  write(data: string): void {
    this.pane.write(data);
  }

  resize(cols: number, rows: number): void {
    if (this.pane.alive) this.pane.resize(cols, rows);
  }

  clearHistory(): void {
    this.pane.clearHistory();
  }

  foreground(): { name: string; cwd: string; pid: number } {
    const fg = this.pane.alive ? foregroundProcess(this.pane.pid) : undefined;
    return { name: fg?.name ?? path.basename(this.pane.file), cwd: fg?.cwd ?? this.pane.cwd, pid: fg?.pid ?? this.pane.pid };
  }

  setLabel(label: string): void {
    this.pane.title = label;
  }

  onExit(listener: (exit: HostExit) => void): Disposable {
    return this.pane.onExit(listener);
  }

  onOutput(listener: (data: Buffer) => void): Disposable {
    return this.pane.onOutput((output) => listener(output.data));
  }

  async kill(): Promise<void> {
    if (this.pane.alive) await this.pane.kill({ graceMs: KILL_GRACE_MS, signal: 'SIGHUP' });
  }

  async remove(): Promise<void> {
    if (!this.registry.find(this.pane.id)) return;
    await this.registry.remove(this.pane.id, { graceMs: KILL_GRACE_MS });
  }
}

export interface RegistryHostOptions {
  logger?: Logger;
  /** Agent profiles, to recognize an agent CLI in a pane's command. */
  agents?: AgentCatalog;
  /** How to answer a recognized agent CLI's first-run dialogs; none are answered without one. */
  firstRun?: FirstRunPolicy;
}

/**
 * The dialogs a tmux pane's agent CLI is left to ask its person: using an API key found in the
 * environment is a billing choice the CLI remembers, and whether to keep retrying a failing model
 * is the task's. The others only acknowledge (trust the folder the user started it in, keep the
 * configured model, no to an offer), and CCB, which answers none, waits on them for ever.
 */
const LEFT_TO_THE_PERSON: ReadonlySet<Dialog['decides']> = new Set(['use_env_api_key', 'keep_retrying']);

/** Panes in a PaneRegistry, for the tmux front end. */
export class RegistryPaneHost implements PaneHost {
  private readonly logger: Logger;

  constructor(
    private readonly registry: PaneRegistry,
    private readonly options: RegistryHostOptions = {},
  ) {
    this.logger = options.logger ?? silentLogger;
  }

  async spawn(spec: SpawnSpec): Promise<HostPane> {
    const agent = await this.agentFor(spec.argv, spec.env);
    const cwd = this.usableDirectory(spec.cwd, spec.env);
    let argv = [...spec.argv];
    // A program that does not exist fails inside the pane, as under tmux, rather than refusing the command.
    // (Through /bin/sh: the user's login shell may be fish, or nologin for a service account.)
    if (argv[0] !== undefined && !resolveExecutable(argv[0], spec.env, cwd)) argv = [...shellArgv(scriptShell(spec.env), 'exec "$0" "$@"'), ...argv];
    // An agent CLI gets a private temporary folder, as every agent Switchboard starts does, so what
    // it leaves there goes with it; a TMPDIR the command exports itself still wins.
    const temp = agent ? createPrivateTemp(this.options.agents?.tempRoot) : undefined;
    const create = (): Pane =>
      this.registry.create({
        argv,
        cwd,
        title: spec.label,
        env: agent && temp ? { ...spec.env, ...agentTempEnv(agent.profile, temp) } : spec.env,
        // The client's environment is the whole environment, as tmux gives it; nothing of the daemon's leaks in.
        unsetEnv: ['*'],
        terminalFromEnv: true,
        cols: spec.cols,
        rows: spec.rows,
        scrollbackRows: spec.historyLimit,
        ...(agent ? { agent: agent.pane } : {}),
        ...(spec.paneScopes !== undefined ? { scopes: spec.paneScopes } : {}),
      });
    const pane = temp ? temp.guard(create) : create();
    if (temp) releaseTempWithPane(this.registry, pane, temp);
    // Its first-run dialogs (folder trust, model nudge) answered whenever they open, by the same
    // policy as an agent Switchboard starts: CCB on real tmux waits on them for ever.
    if (agent && this.options.firstRun) attachDialogResponder(pane, agent.profile.screensFor(agent.pane.version), this.options.firstRun, LEFT_TO_THE_PERSON);
    return new RegistryHostPane(pane, this.registry);
  }

  shellCommand(shell: string, command: string): string[] {
    return shellArgv(shell, command);
  }

  loginShell(shell: string): string[] {
    return loginShellArgv(shell);
  }

  fallbackShell(): string {
    return fallbackShell();
  }

  isExecutable(file: string): boolean {
    return isExecutable(file);
  }

  startPipe(shell: string, command: string, cwd: string, env: Record<string, string>): PipeProcess {
    const [file, ...args] = shellArgv(shell, command) as [string, ...string[]];
    const child = spawnProcess(file, args, { cwd: this.usableDirectory(cwd, env), env, stdio: ['pipe', 'ignore', 'ignore'], windowsHide: true });
    const exitListeners: (() => void)[] = [];
    let exited = false;
    child.on('error', (err) => this.logger.warn('pipe-pane command failed', { command, error: err.message }));
    child.stdin.on('error', () => undefined);
    child.once('exit', () => {
      exited = true;
      for (const listener of exitListeners.splice(0)) listener();
    });
    return {
      write: (data) => {
        if (!exited && child.stdin.writable) child.stdin.write(data);
      },
      close: () => {
        child.stdin.end();
        // A command that ignores the end of its input is ended, so no pipe outlives its pane for long.
        setTimeout(() => {
          if (!exited) child.kill('SIGTERM');
        }, KILL_GRACE_MS).unref();
      },
      onExit: (listener) => {
        if (exited) listener();
        else exitListeners.push(listener);
        return { dispose: () => void exitListeners.splice(exitListeners.indexOf(listener) >>> 0, 1) };
      },
    };
  }

  runShell(shell: string, command: string, cwd: string, env: Record<string, string>): Promise<{ stdout: string; stderr: string; exitCode: number }> {
    const [file, ...args] = shellArgv(shell, command) as [string, ...string[]];
    return new Promise((resolve) => {
      execFile(file, args, { cwd: this.usableDirectory(cwd, env), env, maxBuffer: 16 * 1024 * 1024, windowsHide: true }, (err, stdout, stderr) => {
        const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : 1) : 0;
        resolve({ stdout, stderr, exitCode: code });
      });
    });
  }

  /** tmux starts a program in its directory, else the home directory, else the root. */
  private usableDirectory(dir: string, env: Record<string, string>): string {
    for (const candidate of [dir, env.HOME, path.parse(process.cwd()).root]) {
      if (!candidate) continue;
      try {
        if (statSync(candidate).isDirectory()) return candidate;
      } catch {
        // try the next
      }
    }
    return path.parse(process.cwd()).root;
  }

  /** The agent CLI a command runs (a word naming one of the profiles' programs): its profile, and the pane's agent with its version. */
  private async agentFor(argv: readonly string[], env: Record<string, string>): Promise<{ profile: AgentProfile; pane: PaneAgent } | undefined> {
    const catalog = this.options.agents;
    if (!catalog) return undefined;
    const words = commandWords(argv).map((w) => ({ word: w, base: path.basename(w).replace(/\.(cmd|exe|ps1)$/i, '') }));
    let match: { profile: AgentProfile; word: string } | undefined;
    for (const { word, base } of words) {
      const profile = catalog.list().find((p) => p.data.name !== 'shell' && p.data.binary.names.includes(base));
      if (profile) {
        match = { profile, word };
        break;
      }
    }
    if (!match) return undefined;
    const { profile, word } = match;
    const binary = path.isAbsolute(word) ? word : findAgentBinary(profile.data, env, defaultBinaryDirs(env));
    const version = binary ? await profileVersion(profile.data, binary, env, { signal: AbortSignal.timeout(VERSION_PROBE_MS), tempRoot: catalog.tempRoot }) : undefined;
    return { profile, pane: { name: profile.data.name, version } };
  }
}
