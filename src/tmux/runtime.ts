/**
 * A running tmux server: the model (model.ts) plus what changes it together with the panes
 * underneath: starting a pane's program, respawning it, sizing panes to their layout cells,
 * closing panes, windows and sessions, what happens when a program exits (remain-on-exit, the
 * "Pane is dead" line, pane-died and pane-exited hooks), and the server ending once its last
 * session closes.
 */
import path from 'node:path';
import { Emitter, type Event } from '../core/emitter.js';
import type { Logger } from '../core/logger.js';
import { ctime, expandFormat } from './format.js';
import { escapeArgument } from './grammar.js';
import { FormatScopes, TMUX_VERSION } from './format-scope.js';
import type { HostExit, PaneHost } from './host.js';
import { closePane, fixOffsets, singlePaneLayout, splitCell, type SplitOptions } from './layout.js';
import { TmuxPane, TmuxServer, TmuxSession, TmuxWindow, WINDOW_HOOKS, sessionEnvironment } from './model.js';
import { optionString } from './options.js';

/** How a pane's program is to be started. */
export interface SpawnRequest {
  /** The command words: none for the default command, one for a shell command line, more to run directly. */
  command: readonly string[];
  cwd: string;
  /** -e NAME=VALUE */
  env: Record<string, string>;
  /** The scopes of the token the pane's programs get; undefined: the owner's (the caller is the owner). */
  paneScopes?: readonly string[];
}

/** Runs one namespace's server. */
export class TmuxRuntime {
  readonly server: TmuxServer;
  private readonly closedEmitter = new Emitter<void>();
  /** The server ended (kill-server, or its last session closed). */
  readonly onClosed: Event<void> = this.closedEmitter.event;
  private closed = false;
  /** Commands run by hooks; set by the service, which owns the command queue. */
  runHookCommands: ((commands: string[], pane: TmuxPane | undefined) => void) | undefined;

  constructor(
    socketPath: string,
    pid: number,
    hostName: string,
    readonly host: PaneHost,
    private readonly logger: Logger,
    clientEnv: Record<string, string>,
  ) {
    this.server = new TmuxServer(socketPath, pid, hostName);
    // The server's global environment is the environment of the client that started it.
    for (const [k, v] of Object.entries(clientEnv)) if (k !== 'TMUX' && k !== 'TMUX_PANE') this.server.environment.set(k, v);
    const shell = clientEnv.SHELL;
    const defaultShell = shell && path.isAbsolute(shell) && host.isExecutable(shell) ? shell : host.fallbackShell();
    this.server.globalSessionOptions.set('default-shell', defaultShell);
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** The scope formats of this server see. */
  scopes(): FormatScopes {
    return new FormatScopes(this.server);
  }

  /** A new session with one window running `spawn` (new-session). */
  async createSession(options: { name: string; cwd: string; sx: number; sy: number; windowName: string | undefined; spawn: SpawnRequest; clientEnv: Record<string, string>; sessionEnv: Record<string, string> }): Promise<TmuxSession> {
    const server = this.server;
    const session = new TmuxSession(server.nextSessionId++, options.name, options.cwd, server.globalSessionOptions);
    // update-environment: the client's value of each listed variable, or removed when it has none.
    const update = server.globalSessionOptions.get('update-environment');
    for (const name of typeof update === 'string' ? [] : (update ?? [])) {
      const value = options.clientEnv[name];
      session.environment.set(name, value ?? null);
    }
    for (const [name, value] of Object.entries(options.sessionEnv)) session.environment.set(name, value);
    server.sessions.push(session);
    const base = Number(optionString(session.options.get('base-index')) ?? '0');
    await this.createWindow(session, { index: base, name: options.windowName, sx: options.sx, sy: options.sy, spawn: options.spawn, select: true });
    return session;
  }

  /** A new window in `session` at `index` (or the first free one) with one pane running `spawn`. */
  async createWindow(session: TmuxSession, options: { index?: number; name: string | undefined; sx?: number; sy?: number; spawn: SpawnRequest; select: boolean }): Promise<TmuxWindow> {
    const server = this.server;
    let index = options.index;
    if (index === undefined) {
      index = Number(optionString(session.options.get('base-index')) ?? '0');
      while (session.windows.has(index)) index++;
    }
    const [sx, sy] = options.sx !== undefined && options.sy !== undefined ? [options.sx, options.sy] : this.defaultSize(session);
    const window = new TmuxWindow(server.nextWindowId++, session, index, sx, sy, server.globalWindowOptions);
    if (options.name !== undefined) {
      window.name = options.name;
      window.options.set('automatic-rename', 'off');
    } else {
      window.name = this.defaultWindowName(options.spawn.command, session);
    }
    session.windows.set(index, window);
    const pane = new TmuxPane(server.nextPaneId++, window, server.hostName);
    window.panes.push(pane);
    window.active = pane;
    window.layout = singlePaneLayout(pane.id, sx, sy);
    if (options.select || !session.current) this.selectWindow(session, window);
    try {
      await this.spawn(pane, options.spawn);
    } catch (err) {
      this.removePaneFromModel(pane);
      throw err;
    }
    return window;
  }

  /** Splits `target` for a new pane; undefined when there is no room. */
  async splitPane(target: TmuxPane, type: 'leftright' | 'topbottom', split: SplitOptions, spawn: SpawnRequest, select: boolean): Promise<TmuxPane | undefined> {
    const window = target.window;
    const cell = target.layoutCell;
    if (!cell) return undefined;
    const pane = new TmuxPane(this.server.nextPaneId++, window, this.server.hostName);
    const result = splitCell(window.layout, cell, type, pane.id, split);
    if (!result) {
      this.server.nextPaneId--;
      return undefined;
    }
    window.layout = result.root;
    fixOffsets(window.layout);
    // The new pane goes after its target (before it with -b), as tmux orders panes.
    const at = window.panes.indexOf(target);
    if (split.fullSize) window.panes.splice(split.before ? 0 : window.panes.length, 0, pane);
    else window.panes.splice(split.before ? at : at + 1, 0, pane);
    this.syncSizes(window);
    if (select) this.selectPane(window, pane);
    try {
      await this.spawn(pane, spawn);
    } catch (err) {
      this.removePaneFromModel(pane);
      throw err;
    }
    this.fireHook('window-layout-changed', window.active);
    return pane;
  }

  /** Starts (or restarts) `pane`'s program; the previous one must be gone. */
  async spawn(pane: TmuxPane, request: SpawnRequest): Promise<void> {
    const server = this.server;
    const session = pane.window.session;
    const env = sessionEnvironment(server, session);
    Object.assign(env, request.env);
    env.TERM = optionString(server.options.get('default-terminal')) ?? 'tmux-256color';
    env.TERM_PROGRAM = 'tmux';
    env.TERM_PROGRAM_VERSION = TMUX_VERSION;
    env.TMUX = `${server.socketPath},${server.pid},${session.id}`;
    env.TMUX_PANE = pane.name;
    const shell = optionString(session.options.get('default-shell')) ?? this.host.fallbackShell();
    let argv: readonly string[];
    if (request.command.length === 0) {
      const defaultCommand = optionString(session.options.get('default-command')) ?? '';
      argv = defaultCommand !== '' ? this.host.shellCommand(shell, defaultCommand) : this.host.loginShell(shell);
    } else if (request.command.length === 1) {
      argv = this.host.shellCommand(shell, request.command[0] as string);
    } else {
      argv = request.command;
    }
    // #{pane_start_command}: the words as given, escaped as tmux prints arguments.
    const commandText = request.command.map((word) => escapeArgument(word, true)).join(' ');
    const box = pane.box;
    const cols = box?.sx ?? pane.window.sx;
    const rows = box?.sy ?? pane.window.sy;
    const host = await this.host.spawn({
      argv,
      cwd: request.cwd,
      env,
      cols,
      rows,
      historyLimit: Number(optionString(session.options.get('history-limit')) ?? '2000'),
      label: this.labelOf(pane),
      commandText,
      ...(request.paneScopes !== undefined ? { paneScopes: request.paneScopes } : {}),
    });
    pane.subscriptions.clear();
    pane.host = host;
    pane.startCommand = commandText;
    pane.startArgv = [...request.command];
    pane.startPath = request.cwd;
    pane.dead = undefined;
    pane.deadLine = undefined;
    pane.subscriptions.add(host.onExit((exit) => this.paneExited(pane, exit)));
    pane.subscriptions.add(host.onOutput((data) => pane.pipe?.write(data)));
    // A program that failed at once has already exited: handle it as tmux would.
    if (host.exit) this.paneExited(pane, host.exit);
  }

  /** respawn-pane: the old program (if any) is ended, history kept, the screen cleared, a new program started. */
  async respawn(pane: TmuxPane, request: SpawnRequest): Promise<void> {
    const old = pane.host;
    if (old) {
      pane.subscriptions.clear();
      // tmux keeps the pane's history across a respawn and clears only the screen.
      const rows = old.captureRows(0, old.historyLength, true);
      if (pane.deadLine !== undefined) {
        const screen = old.captureRows(old.historyLength, old.historyLength + 1, true);
        rows.push(...screen);
      }
      pane.carried = [...pane.carried, ...rows].slice(-Math.max(0, Number(optionString(pane.window.session.options.get('history-limit')) ?? '2000')));
      pane.host = undefined;
      await old.remove();
    }
    pane.inMode = false;
    await this.spawn(pane, request);
  }

  /** A new name for windows made without -n: the program's name, as automatic-rename would show it. */
  private defaultWindowName(command: readonly string[], session: TmuxSession): string {
    const first = command.length === 0 ? (optionString(session.options.get('default-shell')) ?? 'sh') : (command[0] as string).trim().split(/\s+/)[0] ?? '';
    return path.basename(first);
  }

  /** A session's size for new windows: its default-size (set by new-session -x/-y), else the global one. */
  defaultSize(session: TmuxSession | undefined): [number, number] {
    const size = optionString(session?.options.get('default-size') ?? this.server.globalSessionOptions.get('default-size')) ?? '80x24';
    const match = /^(\d+)x(\d+)$/.exec(size);
    return match ? [Number(match[1]), Number(match[2])] : [80, 24];
  }

  /** Resizes every pane's program to its layout cell. */
  syncSizes(window: TmuxWindow): void {
    for (const pane of window.panes) {
      const box = pane.box;
      const host = pane.host;
      if (box && host?.alive && (host.cols !== box.sx || host.rows !== box.sy)) host.resize(Math.max(2, box.sx), Math.max(1, box.sy));
    }
  }

  /** Makes `window` its session's current window. */
  selectWindow(session: TmuxSession, window: TmuxWindow): void {
    const previous = session.current;
    if (previous === window) return;
    session.lastWindows = session.lastWindows.filter((w) => w !== window);
    if (previous) session.lastWindows.unshift(previous);
    session.current = window;
    session.activityAt = new Date();
  }

  /** Makes `pane` its window's active pane; whether that changed anything. */
  selectPane(window: TmuxWindow, pane: TmuxPane): boolean {
    if (window.active === pane) return false;
    const before = window.active;
    window.lastPane = before;
    window.active = pane;
    if (before) this.fireHook('window-pane-changed', pane);
    return true;
  }

  /** What Switchboard's listings call a pane: `session:window.index`, then its title. */
  labelOf(pane: TmuxPane): string {
    const window = pane.window;
    const title = pane.title && pane.title !== this.server.hostName ? ` ${pane.title}` : '';
    return `${window.session.name}:${window.name}.${pane.index}${title}`;
  }

  /** What an option set or unset changes beyond its store: pane labels, or pane sizes (a border status line takes a row). */
  optionChanged(name: string): void {
    if (name === 'automatic-rename' || name === 'pane-base-index') this.relabel();
    if (name === 'pane-border-status') for (const session of this.server.sessions) for (const window of session.windows.values()) this.syncSizes(window);
  }

  /** Refreshes every pane's label (after renames and moves). */
  relabel(): void {
    for (const pane of this.server.allPanes()) pane.host?.setLabel(this.labelOf(pane));
  }

  /** A program ended: keep the pane dead (remain-on-exit) or close it. */
  paneExited(pane: TmuxPane, exit: HostExit): void {
    if (this.closed || pane.dead || !this.server.findPane(pane.id)) return;
    const remain = optionString(pane.options.get('remain-on-exit')) ?? 'off';
    const keep = remain === 'on' || (remain === 'failed' && (exit.exitCode !== 0 || exit.signal !== null));
    pane.pipe?.close();
    pane.pipe = undefined;
    if (keep) {
      pane.dead = { exit, time: new Date() };
      const format = optionString(pane.options.get('remain-on-exit-format')) ?? '';
      const scope = this.scopes().scope(pane.window.session, pane.window, pane);
      pane.deadLine = expandFormat(format, scope);
      this.fireHook('pane-died', pane);
      return;
    }
    this.fireHook('pane-exited', pane);
    void this.destroyPane(pane);
  }

  /** Closes a pane: its program ended and removed; its window and session close when it was their last. */
  async destroyPane(pane: TmuxPane): Promise<void> {
    const host = pane.host;
    this.removePaneFromModel(pane);
    pane.subscriptions.clear();
    pane.pipe?.close();
    pane.pipe = undefined;
    pane.host = undefined;
    if (host) await host.remove().catch((err: unknown) => this.logger.warn('tmux pane removal failed', { pane: host.id, error: String(err) }));
  }

  /** Takes a pane out of its window and layout, closing the window (and session) it leaves empty. */
  private removePaneFromModel(pane: TmuxPane): void {
    const window = pane.window;
    const at = window.panes.indexOf(pane);
    if (at === -1) return;
    window.panes.splice(at, 1);
    if (window.lastPane === pane) window.lastPane = undefined;
    const wasActive = window.active === pane;
    if (wasActive) window.active = window.lastPane ?? window.panes[Math.min(at, window.panes.length - 1)];
    if (window.panes.length === 0) {
      this.removeWindowFromModel(window);
      return;
    }
    const root = closePane(window.layout, pane.id);
    if (root) window.layout = root;
    this.syncSizes(window);
    // In tmux's order: the layout, then the active pane.
    this.fireHook('window-layout-changed', window.active);
    if (wasActive && window.active) this.fireHook('window-pane-changed', window.active);
  }

  private removeWindowFromModel(window: TmuxWindow): void {
    const session = window.session;
    if (session.windows.get(window.index) !== window) return;
    session.windows.delete(window.index);
    session.lastWindows = session.lastWindows.filter((w) => w !== window);
    if (session.current === window) {
      session.current = session.lastWindows.shift() ?? session.sortedWindows()[0];
    }
    if (session.windows.size === 0) this.removeSessionFromModel(session);
  }

  private removeSessionFromModel(session: TmuxSession): void {
    const at = this.server.sessions.indexOf(session);
    if (at === -1) return;
    this.server.sessions.splice(at, 1);
    this.fireHook('session-closed', undefined);
    this.closeIfEmpty();
  }

  /** Closes every pane of a window. */
  async killWindow(window: TmuxWindow): Promise<void> {
    await Promise.all([...window.panes].map((p) => this.destroyPane(p)));
  }

  /** Closes every window of a session. */
  async killSession(session: TmuxSession): Promise<void> {
    await Promise.all(session.sortedWindows().map((w) => this.killWindow(w)));
  }

  /** The server ends once no session is left (tmux's exit-empty). */
  closeIfEmpty(): void {
    if (this.server.sessions.length === 0 && optionString(this.server.options.get('exit-empty')) !== 'off') this.close();
  }

  /** Ends the server: every pane closed. */
  async kill(): Promise<void> {
    const panes = this.server.allPanes();
    this.server.sessions.length = 0;
    this.close();
    await Promise.all(
      panes.map(async (pane) => {
        pane.subscriptions.clear();
        pane.pipe?.close();
        await pane.host?.remove().catch(() => undefined);
      }),
    );
  }

  private close(): void {
    if (this.closed) return;
    this.closed = true;
    this.closedEmitter.fire();
    this.closedEmitter.dispose();
  }

  /**
   * Runs a hook's commands. Hooks are options, so the nearest scope that sets one is the one that
   * runs: a window hook from the pane, its window or the global window hooks; any other from the
   * pane's session or the global ones.
   */
  fireHook(name: string, pane: TmuxPane | undefined): void {
    const scopes = !pane
      ? [this.server.sessionHooks]
      : WINDOW_HOOKS.includes(name)
        ? [pane.hooks, pane.window.hooks, this.server.windowHooks]
        : [pane.window.session.hooks, this.server.sessionHooks];
    const commands = scopes.map((scope) => scope.get(name)).find((list) => list !== undefined) ?? [];
    if (commands.length > 0) this.runHookCommands?.(commands, pane);
  }

  /** The time tmux prints for the dead line and elsewhere. */
  static ctime(date: Date): string {
    return ctime(date);
  }
}

