/**
 * Target resolution (-t, -s) as tmux 3.3's cmd-find does it: `session:window.pane`, `%N`, `@N`,
 * `$N`, names, unique prefixes and patterns, `=exact`, `{start}`/`{end}`/`{last}`, relative
 * `+`/`-`, and the current session, window and pane when a part is missing.
 */
import type { TmuxPane, TmuxServer, TmuxSession, TmuxWindow } from './model.js';

export type TargetType = 'session' | 'window' | 'pane';

/** What a target names; parts may be missing (a session alone, or a window index not in use yet). */
export interface TargetState {
  session: TmuxSession | undefined;
  window: TmuxWindow | undefined;
  pane: TmuxPane | undefined;
  /** The window index named, when it need not exist (new-window -t s:5). */
  index: number | undefined;
  /** The index came from a window part of the target, not from a session's current window. */
  indexNamed?: boolean;
}

export const EMPTY_TARGET: TargetState = { session: undefined, window: undefined, pane: undefined, index: undefined };

/** A target that names nothing, with tmux's message. */
export class TargetError extends Error {
  override readonly name = 'TargetError';
}

const WINDOW_TABLE: Readonly<Record<string, string>> = { '{start}': '^', '{end}': '$', '{last}': '!', '{next}': '+', '{previous}': '-' };
const PANE_TABLE: Readonly<Record<string, string>> = {
  '{last}': '!', '{next}': '+', '{previous}': '-', '{top}': 'top', '{bottom}': 'bottom', '{left}': 'left', '{right}': 'right',
  '{top-left}': 'top-left', '{top-right}': 'top-right', '{bottom-left}': 'bottom-left', '{bottom-right}': 'bottom-right',
};

function globToRegExp(pattern: string): RegExp {
  let source = '^';
  for (const ch of pattern) source += ch === '*' ? '.*' : ch === '?' ? '.' : ch.replace(/[\\^$.|+()[\]{}]/g, '\\$&');
  return new RegExp(`${source}$`, 's');
}

/** The one item that matches, or undefined for none or more than one. */
function unique<T>(items: T[], test: (item: T) => boolean): T | undefined {
  const found = items.filter(test);
  return found.length === 1 ? found[0] : undefined;
}

export interface ResolveOptions {
  /** A window index that is not in use is still a target (new-window -t). */
  windowIndex?: boolean;
}

/** Resolves targets against one server, relative to the current state. */
export class TargetResolver {
  constructor(
    private readonly server: TmuxServer,
    private readonly current: TargetState,
  ) {}

  /** Resolves `text` (undefined: the current state); throws TargetError with tmux's message. */
  resolve(text: string | undefined, type: TargetType, options: ResolveOptions = {}): TargetState {
    const state = this.resolveState(text, type, options);
    // A window index is named only by a window part; a session (or nothing) leaves it to the command.
    if (options.windowIndex && !state.indexNamed) state.index = undefined;
    return state;
  }

  private resolveState(text: string | undefined, type: TargetType, options: ResolveOptions): TargetState {
    if (text === undefined || text === '') {
      if (!this.current.session) throw new TargetError('no current target');
      return { ...this.current };
    }
    const colon = text.indexOf(':');
    const head = colon === -1 ? text : text.slice(0, colon);
    const tail = colon === -1 ? undefined : text.slice(colon + 1);
    let period: number;
    let sessionPart: string | undefined;
    let windowPart: string | undefined;
    let panePart: string | undefined;
    let windowOnly = false;
    let paneOnly = false;
    if (tail !== undefined) {
      period = tail.indexOf('.');
      sessionPart = head;
      windowPart = period === -1 ? tail : tail.slice(0, period);
      windowOnly = true;
      if (period !== -1) {
        panePart = tail.slice(period + 1);
        paneOnly = true;
      }
    } else {
      period = head.indexOf('.');
      // A leading '%', '@' or '$' is an id, whose text never holds a period.
      if (period !== -1 && !/^[%@$]/.test(head)) {
        windowPart = head.slice(0, period);
        panePart = head.slice(period + 1);
        paneOnly = true;
      } else if (head.startsWith('$')) sessionPart = head;
      else if (head.startsWith('@')) windowPart = head;
      else if (head.startsWith('%')) panePart = head;
      else if (type === 'session') sessionPart = head;
      else if (type === 'window') windowPart = head;
      else panePart = head;
    }
    let exactSession = false;
    let exactWindow = false;
    if (sessionPart?.startsWith('=')) {
      sessionPart = sessionPart.slice(1);
      exactSession = true;
    }
    if (windowPart?.startsWith('=')) {
      windowPart = windowPart.slice(1);
      exactWindow = true;
    }
    if (sessionPart === '') sessionPart = undefined;
    if (windowPart === '') windowPart = undefined;
    if (panePart === '') panePart = undefined;
    if (windowPart !== undefined) windowPart = WINDOW_TABLE[windowPart] ?? windowPart;
    if (panePart !== undefined) panePart = PANE_TABLE[panePart] ?? panePart;

    if (sessionPart === undefined && windowPart === undefined && panePart === undefined) {
      if (!this.current.session) throw new TargetError('no current target');
      return { ...this.current };
    }
    const state: TargetState = { ...EMPTY_TARGET };
    if (sessionPart !== undefined) {
      state.session = this.findSession(sessionPart, exactSession);
      if (!state.session) throw new TargetError(`can't find session: ${sessionPart}`);
      const session = state.session;
      if (panePart === undefined) {
        if (windowPart === undefined) return this.sessionCurrent(session);
        if (!this.windowInSession(state, session, windowPart, exactWindow, options)) throw new TargetError(`can't find window: ${windowPart}`);
        state.pane = state.window?.active;
        return state;
      }
      if (windowPart !== undefined) {
        if (!this.windowInSession(state, session, windowPart, exactWindow, options)) throw new TargetError(`can't find window: ${windowPart}`);
      } else {
        if (panePart.startsWith('%')) {
          const pane = this.findPaneId(panePart);
          if (!pane || pane.window.session !== session) throw new TargetError(`can't find pane: ${panePart}`);
          return this.ofPane(pane);
        }
        state.window = session.current;
        state.index = state.window?.index;
      }
      if (!this.paneInWindow(state, panePart)) throw new TargetError(`can't find pane: ${panePart}`);
      return state;
    }
    if (windowPart !== undefined) {
      if (!this.findWindowAnywhere(state, windowPart, windowOnly, exactWindow, options)) throw new TargetError(`can't find window: ${windowPart}`);
      if (panePart === undefined) {
        state.pane = state.window?.active;
        return state;
      }
      if (!this.paneInWindow(state, panePart)) throw new TargetError(`can't find pane: ${panePart}`);
      return state;
    }
    const pane = panePart as string;
    if (pane.startsWith('%')) {
      const found = this.findPaneId(pane);
      if (!found) throw new TargetError(`can't find pane: ${pane}`);
      return this.ofPane(found);
    }
    const inCurrent: TargetState = { ...this.current };
    if (inCurrent.window && this.paneInWindow(inCurrent, pane)) return inCurrent;
    if (!paneOnly) {
      const asWindow: TargetState = { ...EMPTY_TARGET };
      if (this.findWindowAnywhere(asWindow, pane, false, false, {})) {
        asWindow.pane = asWindow.window?.active;
        return asWindow;
      }
    }
    throw new TargetError(`can't find pane: ${pane}`);
  }

  /** A pane with its window and session. */
  ofPane(pane: TmuxPane): TargetState {
    return { session: pane.window.session, window: pane.window, pane, index: pane.window.index };
  }

  sessionCurrent(session: TmuxSession): TargetState {
    const window = session.current;
    return { session, window, pane: window?.active, index: window?.index };
  }

  findSession(name: string, exact: boolean): TmuxSession | undefined {
    const sessions = this.server.sortedSessions();
    if (name.startsWith('$')) return sessions.find((s) => s.ref === name);
    const exactMatch = sessions.find((s) => s.name === name);
    if (exactMatch || exact) return exactMatch;
    const byPrefix = sessions.filter((s) => s.name.startsWith(name));
    if (byPrefix.length > 0) return byPrefix.length === 1 ? byPrefix[0] : undefined;
    const pattern = globToRegExp(name);
    return unique(sessions, (s) => pattern.test(s.name));
  }

  private findPaneId(text: string): TmuxPane | undefined {
    return this.server.allPanes().find((p) => p.name === text);
  }

  private findWindowAnywhere(state: TargetState, text: string, only: boolean, exact: boolean, options: ResolveOptions): boolean {
    if (text.startsWith('@')) {
      const window = this.server.allWindows().find((w) => w.ref === text);
      if (!window) return false;
      Object.assign(state, { session: window.session, window, index: window.index });
      return true;
    }
    const session = this.current.session;
    if (session && this.windowInSession(state, session, text, exact, options)) {
      state.session = session;
      return true;
    }
    if (!only) {
      const asSession = this.findSession(text, false);
      if (asSession) {
        Object.assign(state, this.sessionCurrent(asSession));
        return true;
      }
    }
    return false;
  }

  private windowInSession(state: TargetState, session: TmuxSession, text: string, exact: boolean, options: ResolveOptions): boolean {
    state.session = session;
    const windows = session.sortedWindows();
    const set = (window: TmuxWindow | undefined): boolean => {
      if (!window) return false;
      state.window = window;
      state.index = window.index;
      state.indexNamed = true;
      return true;
    };
    if (text.startsWith('@')) return set(windows.find((w) => w.ref === text));
    if (!exact && (text.startsWith('+') || text.startsWith('-'))) {
      const offset = text.length === 1 ? 1 : Number(text.slice(1));
      if (!Number.isInteger(offset)) return false;
      const current = session.current;
      if (!current) return false;
      const at = windows.indexOf(current);
      const n = windows.length;
      const step = text.startsWith('+') ? offset : -offset;
      return set(windows[(((at + step) % n) + n) % n]);
    }
    if (!exact) {
      if (text === '!') return set(session.lastWindows[0]);
      if (text === '^') return set(windows[0]);
      if (text === '$') return set(windows.at(-1));
    }
    if (/^\d+$/.test(text)) {
      const index = Number(text);
      const byIndex = session.windows.get(index);
      if (byIndex) return set(byIndex);
      if (options.windowIndex) {
        state.index = index;
        state.window = undefined;
        state.indexNamed = true;
        return true;
      }
    }
    const named = windows.filter((w) => w.name === text);
    if (named.length > 0) return named.length === 1 && set(named[0]);
    if (exact) return false;
    const byPrefix = windows.filter((w) => w.name.startsWith(text));
    if (byPrefix.length > 0) return byPrefix.length === 1 && set(byPrefix[0]);
    const pattern = globToRegExp(text);
    return set(unique(windows, (w) => pattern.test(w.name)));
  }

  private paneInWindow(state: TargetState, text: string): boolean {
    const window = state.window;
    if (!window) return false;
    const set = (pane: TmuxPane | undefined): boolean => {
      if (!pane) return false;
      state.pane = pane;
      return true;
    };
    if (text.startsWith('%')) return set(window.panes.find((p) => p.name === text));
    if (text === '!') return set(window.lastPane);
    if (text.startsWith('+') || text.startsWith('-')) {
      const offset = text.length === 1 ? 1 : Number(text.slice(1));
      if (!Number.isInteger(offset) || !window.active) return false;
      const at = window.panes.indexOf(window.active);
      const n = window.panes.length;
      const step = text.startsWith('+') ? offset : -offset;
      return set(window.panes[(((at + step) % n) + n) % n]);
    }
    if (/^\d+$/.test(text)) {
      const pane = window.panes.find((p) => p.index === Number(text));
      if (pane) return set(pane);
    }
    return set(describedPane(window, text));
  }
}

/** top, bottom, left, right, top-left, … as tmux's window_find_string picks them. */
function describedPane(window: TmuxWindow, text: string): TmuxPane | undefined {
  const cells = window.panes.map((p) => ({ pane: p, cell: p.layoutCell })).filter((c) => c.cell !== undefined);
  const top = Math.min(...cells.map((c) => c.cell?.yoff ?? 0));
  const bottom = Math.max(...cells.map((c) => (c.cell?.yoff ?? 0) + (c.cell?.sy ?? 0)));
  const left = Math.min(...cells.map((c) => c.cell?.xoff ?? 0));
  const right = Math.max(...cells.map((c) => (c.cell?.xoff ?? 0) + (c.cell?.sx ?? 0)));
  const at = (x: number, y: number): TmuxPane | undefined =>
    cells.find((c) => c.cell && x >= c.cell.xoff && x < c.cell.xoff + c.cell.sx + 1 && y >= c.cell.yoff && y < c.cell.yoff + c.cell.sy + 1)?.pane;
  const midX = Math.floor((left + right) / 2);
  const midY = Math.floor((top + bottom) / 2);
  switch (text) {
    case 'top': return at(midX, top);
    case 'bottom': return at(midX, bottom - 1);
    case 'left': return at(left, midY);
    case 'right': return at(right - 1, midY);
    case 'top-left': return at(left, top);
    case 'top-right': return at(right - 1, top);
    case 'bottom-left': return at(left, bottom - 1);
    case 'bottom-right': return at(right - 1, bottom - 1);
    default: return undefined;
  }
}
