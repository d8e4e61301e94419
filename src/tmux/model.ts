/**
 * The state of one tmux server (one namespace, named by its socket path): sessions holding
 * windows at indexes, windows holding panes in a layout, the ids ($N, @N, %N) handed out in order,
 * options at every scope, the environment, paste buffers and key bindings. Panes point at the
 * host's panes that run their programs.
 */
import { DisposableStore } from '../core/disposable.js';
import type { CapturedRow } from '../pane/index.js';
import type { HostExit, HostPane, PipeProcess } from './host.js';
import { LayoutCell, dumpLayout, paneCells, singlePaneLayout } from './layout.js';
import { OptionStore, optionString } from './options.js';

/** tmux 3.3's hooks that live on sessions (and globally), in its order. */
export const SESSION_HOOKS: readonly string[] = [
  'after-bind-key', 'after-capture-pane', 'after-copy-mode', 'after-display-message', 'after-display-panes', 'after-kill-pane', 'after-list-buffers',
  'after-list-clients', 'after-list-keys', 'after-list-panes', 'after-list-sessions', 'after-list-windows', 'after-load-buffer', 'after-lock-server',
  'after-new-session', 'after-new-window', 'after-paste-buffer', 'after-pipe-pane', 'after-queue', 'after-refresh-client', 'after-rename-session',
  'after-rename-window', 'after-resize-pane', 'after-resize-window', 'after-save-buffer', 'after-select-layout', 'after-select-pane',
  'after-select-window', 'after-send-keys', 'after-set-buffer', 'after-set-environment', 'after-set-hook', 'after-set-option',
  'after-show-environment', 'after-show-messages', 'after-show-options', 'after-split-window', 'after-unbind-key', 'alert-activity', 'alert-bell',
  'alert-silence', 'client-active', 'client-attached', 'client-detached', 'client-focus-in', 'client-focus-out', 'client-resized',
  'client-session-changed', 'session-closed', 'session-created', 'session-renamed', 'session-window-changed', 'window-linked', 'window-unlinked',
];

/** Hooks that live on windows and panes. */
export const WINDOW_HOOKS: readonly string[] = [
  'pane-died', 'pane-exited', 'pane-focus-in', 'pane-focus-out', 'pane-mode-changed', 'pane-set-clipboard', 'pane-title-changed',
  'window-layout-changed', 'window-pane-changed', 'window-renamed', 'window-resized',
];

/** A variable of an environment, or null when it is marked removed (`-NAME`). */
export type Environment = Map<string, string | null>;

export class TmuxPane {
  readonly options: OptionStore;
  host: HostPane | undefined;
  /** What select-pane -T (or the program, OSC 2) set; tmux starts it at the host name. */
  title: string;
  inMode = false;
  /** The command words the pane was started with (respawn-pane without a command reuses them). */
  startArgv: string[] = [];
  startCommand = '';
  startPath = '';
  /** How the program ended, while the pane stays (remain-on-exit). */
  dead: { exit: HostExit; time: Date } | undefined;
  /** The "Pane is dead" line drawn under the screen, once. */
  deadLine: string | undefined;
  /** History kept from before a respawn, oldest first (tmux keeps a pane's history across respawn-pane). */
  carried: CapturedRow[] = [];
  pipe: PipeProcess | undefined;
  /** The title the program last set (OSC 2), so a new one replaces select-pane -T's. */
  programTitle = '';
  readonly hooks = new Map<string, string[]>();
  /** What follows the pane's program (its exit, its output into pipe-pane), cleared on a respawn. */
  readonly subscriptions = new DisposableStore();
  readonly createdAt = new Date();

  constructor(
    readonly id: number,
    public window: TmuxWindow,
    hostName: string,
  ) {
    this.options = new OptionStore(window.options);
    this.title = hostName;
  }

  /** %N */
  get name(): string {
    return `%${this.id}`;
  }

  /** The pane's number within its window, counting from pane-base-index. */
  get index(): number {
    const base = Number(optionString(this.window.options.get('pane-base-index')) ?? '0');
    return this.window.panes.indexOf(this) + base;
  }

  get alive(): boolean {
    return this.host?.alive === true;
  }

  get layoutCell(): LayoutCell | undefined {
    return paneCells(this.window.layout).find((c) => c.paneId === this.id);
  }

  /**
   * Where the pane's screen sits: its layout cell, less the row a pane border status line takes.
   * With pane-border-status top (bottom) the panes on the window's top (bottom) edge give up their
   * first (last) row; the others' status sits on the border they already have. The layout itself,
   * and so #{window_layout}, is unchanged, as in tmux.
   */
  get box(): PaneBox | undefined {
    const cell = this.layoutCell;
    if (!cell) return undefined;
    const box = { xoff: cell.xoff, yoff: cell.yoff, sx: cell.sx, sy: cell.sy };
    if (box.sy < 2) return box;
    const status = optionString(this.window.options.get('pane-border-status'));
    const root = this.window.layout;
    if (status === 'top' && cell.yoff === root.yoff) {
      box.yoff++;
      box.sy--;
    } else if (status === 'bottom' && cell.yoff + cell.sy === root.yoff + root.sy) {
      box.sy--;
    }
    return box;
  }
}

/** A pane's place and size in its window's cells. */
export interface PaneBox {
  xoff: number;
  yoff: number;
  sx: number;
  sy: number;
}

export class TmuxWindow {
  readonly options: OptionStore;
  panes: TmuxPane[] = [];
  active: TmuxPane | undefined;
  lastPane: TmuxPane | undefined;
  layout: LayoutCell;
  name = '';
  zoomed = false;
  readonly hooks = new Map<string, string[]>();
  readonly createdAt = new Date();
  activityAt = new Date();

  constructor(
    readonly id: number,
    public session: TmuxSession,
    public index: number,
    public sx: number,
    public sy: number,
    globalOptions: OptionStore,
  ) {
    this.options = new OptionStore(globalOptions);
    this.layout = singlePaneLayout(-1, sx, sy);
  }

  /** @N */
  get ref(): string {
    return `@${this.id}`;
  }

  get layoutString(): string {
    return dumpLayout(this.layout);
  }
}

export class TmuxSession {
  readonly options: OptionStore;
  readonly environment: Environment = new Map();
  readonly windows = new Map<number, TmuxWindow>();
  current: TmuxWindow | undefined;
  /** Windows selected before the current one, most recent first. */
  lastWindows: TmuxWindow[] = [];
  readonly hooks = new Map<string, string[]>();
  readonly createdAt = new Date();
  activityAt = new Date();

  constructor(
    readonly id: number,
    public name: string,
    public cwd: string,
    globalOptions: OptionStore,
  ) {
    this.options = new OptionStore(globalOptions);
  }

  /** $N */
  get ref(): string {
    return `$${this.id}`;
  }

  /** Windows by index, lowest first. */
  sortedWindows(): TmuxWindow[] {
    return [...this.windows.values()].sort((a, b) => a.index - b.index);
  }
}

/** A paste buffer: its data, and whether tmux named it (bufferN) or the user did. */
export interface PasteBuffer {
  name: string;
  data: string;
  automatic: boolean;
  order: number;
  createdAt: Date;
}

/** A key binding as bind-key stored it. */
export interface KeyBinding {
  key: string;
  repeat: boolean;
  note: string | undefined;
  /** The command, printed as list-keys prints it. */
  command: string;
}

export class TmuxServer {
  nextPaneId = 0;
  nextWindowId = 0;
  nextSessionId = 0;
  nextBufferOrder = 0;
  readonly sessions: TmuxSession[] = [];
  readonly options: OptionStore;
  readonly globalSessionOptions: OptionStore;
  readonly globalWindowOptions: OptionStore;
  readonly environment: Environment = new Map();
  readonly buffers: PasteBuffer[] = [];
  /** tmux's four tables exist from the start (list-keys -T of one never says "doesn't exist"). */
  readonly keyTables = new Map<string, Map<string, KeyBinding>>(['root', 'prefix', 'copy-mode', 'copy-mode-vi'].map((name) => [name, new Map()]));
  /** Global hooks of sessions and of windows (and panes), by hook name. */
  readonly sessionHooks = new Map<string, string[]>(SESSION_HOOKS.map((h) => [h, []]));
  readonly windowHooks = new Map<string, string[]>(WINDOW_HOOKS.map((h) => [h, []]));
  readonly startTime = new Date();

  constructor(
    /** The socket path the namespace is named by, as tmux would print it. */
    readonly socketPath: string,
    /** The pid tmux's #{pid} shows: the daemon's. */
    readonly pid: number,
    readonly hostName: string,
  ) {
    this.options = OptionStore.withDefaults(['server']);
    this.globalSessionOptions = OptionStore.withDefaults(['session']);
    this.globalWindowOptions = OptionStore.withDefaults(['window', 'pane']);
  }

  /** Sessions in name order, as tmux lists them. */
  sortedSessions(): TmuxSession[] {
    return [...this.sessions].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  session(name: string): TmuxSession | undefined {
    return this.sessions.find((s) => s.name === name);
  }

  allWindows(): TmuxWindow[] {
    return this.sortedSessions().flatMap((s) => s.sortedWindows());
  }

  allPanes(): TmuxPane[] {
    return this.allWindows().flatMap((w) => w.panes);
  }

  findPane(id: number): TmuxPane | undefined {
    return this.allPanes().find((p) => p.id === id);
  }

  findWindow(id: number): TmuxWindow | undefined {
    return this.allWindows().find((w) => w.id === id);
  }

  /** The most recently active session (tmux's "best" session when no target is given). */
  bestSession(): TmuxSession | undefined {
    let best: TmuxSession | undefined;
    for (const s of this.sessions) if (!best || s.activityAt.getTime() >= best.activityAt.getTime()) best = s;
    return best;
  }

  /** The buffer named `name`, or the most recent one. */
  buffer(name?: string): PasteBuffer | undefined {
    if (name !== undefined) return this.buffers.find((b) => b.name === name);
    return [...this.buffers].sort((a, b) => b.order - a.order)[0];
  }

  /** Adds or replaces a buffer; unnamed buffers get bufferN and the oldest automatic ones go past buffer-limit. */
  setBuffer(name: string | undefined, data: string): PasteBuffer {
    const order = this.nextBufferOrder++;
    if (name !== undefined) {
      const existing = this.buffer(name);
      if (existing) {
        existing.data = data;
        existing.order = order;
        return existing;
      }
      const created: PasteBuffer = { name, data, automatic: false, order, createdAt: new Date() };
      this.buffers.push(created);
      return created;
    }
    let n = 0;
    while (this.buffers.some((b) => b.name === `buffer${n}`)) n++;
    const created: PasteBuffer = { name: `buffer${n}`, data, automatic: true, order, createdAt: new Date() };
    this.buffers.push(created);
    const limit = Number(optionString(this.options.get('buffer-limit')) ?? '50');
    const automatic = this.buffers.filter((b) => b.automatic).sort((a, b) => a.order - b.order);
    for (const old of automatic.slice(0, Math.max(0, automatic.length - limit))) this.deleteBuffer(old);
    return created;
  }

  deleteBuffer(buffer: PasteBuffer): void {
    const at = this.buffers.indexOf(buffer);
    if (at !== -1) this.buffers.splice(at, 1);
  }
}

/** The environment a session's programs start from: global, then the session's, removed names dropped. */
export function sessionEnvironment(server: TmuxServer, session: TmuxSession | undefined): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of server.environment) if (v !== null) env[k] = v;
  if (session) {
    for (const [k, v] of session.environment) {
      if (v === null) Reflect.deleteProperty(env, k);
      else env[k] = v;
    }
  }
  return env;
}
