/**
 * Commands that make, find and end sessions, windows and panes: new-session, new-window,
 * split-window, respawn-pane, kill-*, has-session, start-server, attach-session, rename-*,
 * select-*, resize-pane, and the client commands that need a terminal client.
 */
import { flagValue, hasFlag, type ParsedCommand } from '../grammar.js';
import { dumpLayout, resizePane, resizePaneTo, resizeChildCells, fixOffsets } from '../layout.js';
import type { TmuxPane, TmuxSession, TmuxWindow } from '../model.js';
import type { SpawnRequest, TmuxRuntime } from '../runtime.js';
import { CommandError, type CommandContext } from './context.js';

export type Command = (ctx: CommandContext, runtime: TmuxRuntime, command: ParsedCommand) => void | Promise<void>;

const NEW_SESSION_TEMPLATE = '#{session_name}:';
const NEW_WINDOW_TEMPLATE = '#{session_name}:#{window_index}.#{pane_index}';

/** -e NAME=VALUE flags as an environment. */
/** What a command asks to start, with the scopes the new pane's programs get when the caller is not the owner. */
function spawnRequest(ctx: CommandContext, command: readonly string[], cwd: string, env: Record<string, string>): SpawnRequest {
  return { command, cwd, env, ...(ctx.client.paneScopes !== undefined ? { paneScopes: ctx.client.paneScopes } : {}) };
}

function envFlags(command: ParsedCommand): Record<string, string> {
  const env: Record<string, string> = {};
  for (const item of command.flags.get('e') ?? []) {
    const eq = item.indexOf('=');
    if (eq > 0) env[item.slice(0, eq)] = item.slice(eq + 1);
  }
  return env;
}

/** tmux replaces the separators of targets in session names. */
function sessionName(name: string): string {
  return name.replace(/[:.]/g, '_');
}

/** How tmux names a pane in messages: `session:window.pane`. */
function paneDescription(pane: TmuxPane): string {
  return `${pane.window.session.name}:${pane.window.index}.${pane.index}`;
}

function workingDirectory(ctx: CommandContext, command: ParsedCommand, fallback: string, target?: Parameters<CommandContext['expand']>[1]): string {
  const given = flagValue(command, 'c');
  if (given === undefined) return fallback;
  const expanded = target ? ctx.expand(given, target) : given;
  return expanded.startsWith('~') ? expanded.replace(/^~/, ctx.client.env.HOME ?? '~') : expanded;
}

function size(text: string | undefined, what: string): number | undefined {
  if (text === undefined || text === '-') return undefined;
  if (!/^\d+$/.test(text) || Number(text) < 1 || Number(text) > 10_000) throw new CommandError(`${what} ${/^\d+$/.test(text) ? 'too large' : 'invalid'}`);
  return Number(text);
}

const newSession: Command = async (ctx, runtime, command) => {
  const server = runtime.server;
  const detached = hasFlag(command, 'd');
  if (!detached && !ctx.client.tty) throw new CommandError('open terminal failed: not a terminal');
  const given = flagValue(command, 's');
  let name = given !== undefined ? sessionName(given) : undefined;
  if (name !== undefined && server.session(name)) {
    if (hasFlag(command, 'A')) {
      attachTo(ctx, server.session(name) as TmuxSession);
      return;
    }
    throw new CommandError(`duplicate session: ${name}`);
  }
  if (name === undefined) {
    let n = server.nextSessionId;
    while (server.session(String(n))) n++;
    name = String(n);
  }
  if (name === '') throw new CommandError('invalid session: ');
  const width = size(flagValue(command, 'x'), 'width');
  const height = size(flagValue(command, 'y'), 'height');
  const [defaultX, defaultY] = runtime.defaultSize(undefined);
  const cwd = workingDirectory(ctx, command, ctx.client.cwd);
  const spawn: SpawnRequest = spawnRequest(ctx, command.args, cwd, {});
  const session = await runtime.createSession({
    name,
    cwd,
    sx: width ?? defaultX,
    sy: height ?? defaultY,
    windowName: flagValue(command, 'n'),
    spawn,
    clientEnv: ctx.client.env,
    // -e goes into the new session's environment, which its first pane already starts with.
    sessionEnv: envFlags(command),
  });
  if (width !== undefined || height !== undefined) session.options.set('default-size', `${width ?? defaultX}x${height ?? defaultY}`);
  ctx.setCurrent(ctx.resolver.sessionCurrent(session));
  runtime.fireHook('session-created', undefined);
  if (hasFlag(command, 'P')) ctx.print(ctx.expand(flagValue(command, 'F') ?? NEW_SESSION_TEMPLATE, ctx.resolver.sessionCurrent(session)));
  if (!detached) attachTo(ctx, session);
};

function attachTo(ctx: CommandContext, session: TmuxSession): void {
  if (!ctx.client.tty) throw new CommandError('open terminal failed: not a terminal');
  const host = session.current?.active?.host;
  if (host) ctx.attachPane = host.id;
}

const newWindow: Command = async (ctx, runtime, command) => {
  const target = ctx.target(command, 'window', { windowIndex: true });
  const session = target.session;
  if (!session) throw new CommandError('no current session');
  const name = flagValue(command, 'n');
  if (hasFlag(command, 'S') && name !== undefined) {
    const existing = session.sortedWindows().find((w) => w.name === name);
    if (existing) {
      if (!hasFlag(command, 'd')) runtime.selectWindow(session, existing);
      return;
    }
  }
  // A window (or index) named in the target is where the new one goes; a session alone means the next free index.
  let index = target.index;
  if (hasFlag(command, 'a') || hasFlag(command, 'b')) {
    const anchor = target.window?.index ?? session.current?.index ?? 0;
    index = hasFlag(command, 'a') ? anchor + 1 : anchor;
    if (session.windows.has(index)) shiftWindows(session, index);
  }
  if (index !== undefined && session.windows.has(index)) {
    if (!hasFlag(command, 'k')) throw new CommandError(`create window failed: index ${index} in use`);
    await runtime.killWindow(session.windows.get(index) as TmuxWindow);
  }
  const cwd = workingDirectory(ctx, command, ctx.client.cwd, target);
  const window = await runtime.createWindow(session, { index, name, spawn: spawnRequest(ctx, command.args, cwd, envFlags(command)), select: !hasFlag(command, 'd') });
  ctx.setCurrent({ session, window, pane: window.active, index: window.index });
  runtime.fireHook('window-linked', undefined);
  if (hasFlag(command, 'P')) ctx.print(ctx.expand(flagValue(command, 'F') ?? NEW_WINDOW_TEMPLATE, { session, window, pane: window.active, index: window.index }));
};

/** Moves windows at `from` and above up by one to make room (new-window -a/-b). */
function shiftWindows(session: TmuxSession, from: number): void {
  const moving = session.sortedWindows().filter((w) => w.index >= from).reverse();
  let next = from;
  // Only windows up to the first gap move.
  const inRun: TmuxWindow[] = [];
  for (const w of [...moving].reverse()) {
    if (w.index !== next) break;
    inRun.push(w);
    next++;
  }
  for (const w of inRun.reverse()) {
    session.windows.delete(w.index);
    w.index += 1;
    session.windows.set(w.index, w);
  }
}

function splitSize(command: ParsedCommand, current: number): number | undefined {
  const l = flagValue(command, 'l');
  if (l !== undefined) {
    const percent = l.endsWith('%');
    const digits = percent ? l.slice(0, -1) : l;
    if (!/^\d+$/.test(digits)) throw new CommandError('lines invalid');
    const n = Number(digits);
    if (percent) {
      if (n > 100) throw new CommandError('lines too large');
      return Math.floor((current * n) / 100);
    }
    return n;
  }
  const p = flagValue(command, 'p');
  if (p !== undefined) {
    if (!/^\d+$/.test(p) || Number(p) > 100) throw new CommandError(`percentage ${/^\d+$/.test(p) ? 'too large' : 'invalid'}`);
    return Math.floor((current * Number(p)) / 100);
  }
  return undefined;
}

const splitWindow: Command = async (ctx, runtime, command) => {
  const target = ctx.target(command, 'pane');
  const pane = target.pane;
  if (!pane) throw new CommandError('no current pane');
  const window = pane.window;
  const type = hasFlag(command, 'h') ? 'leftright' : 'topbottom';
  const full = hasFlag(command, 'f');
  const cell = full ? window.layout : pane.layoutCell;
  const current = type === 'leftright' ? (cell?.sx ?? window.sx) : (cell?.sy ?? window.sy);
  const amount = splitSize(command, current);
  const cwd = workingDirectory(ctx, command, ctx.client.cwd, target);
  const created = await runtime.splitPane(pane, type, { size: amount, before: hasFlag(command, 'b'), fullSize: full }, spawnRequest(ctx, command.args, cwd, envFlags(command)), !hasFlag(command, 'd'));
  if (!created) throw new CommandError('no space for new pane');
  ctx.setCurrent(ctx.resolver.ofPane(created));
  if (hasFlag(command, 'P')) ctx.print(ctx.expand(flagValue(command, 'F') ?? NEW_WINDOW_TEMPLATE, ctx.resolver.ofPane(created)));
};

const respawnPane: Command = async (ctx, runtime, command) => {
  const pane = ctx.target(command, 'pane').pane;
  if (!pane) throw new CommandError('no current pane');
  if (pane.alive && !hasFlag(command, 'k')) throw new CommandError(`respawn pane failed: pane ${paneDescription(pane)} still active`);
  const cwd = workingDirectory(ctx, command, pane.startPath || ctx.client.cwd, ctx.resolver.ofPane(pane));
  const words = command.args.length > 0 ? command.args : pane.startArgv;
  await runtime.respawn(pane, spawnRequest(ctx, words, cwd, envFlags(command)));
};

const respawnWindow: Command = async (ctx, runtime, command) => {
  const window = ctx.target(command, 'window').window;
  if (!window) throw new CommandError('no current window');
  if (window.panes.some((p) => p.alive) && !hasFlag(command, 'k')) throw new CommandError(`respawn window failed: window ${window.session.name}:${window.index} still active`);
  const [first, ...others] = window.panes;
  for (const other of others) await runtime.destroyPane(other);
  if (!first) return;
  const words = command.args.length > 0 ? command.args : first.startArgv;
  await runtime.respawn(first, spawnRequest(ctx, words, workingDirectory(ctx, command, first.startPath || ctx.client.cwd), envFlags(command)));
};

const killPane: Command = async (ctx, runtime, command) => {
  const pane = ctx.target(command, 'pane').pane;
  if (!pane) throw new CommandError('no current pane');
  if (hasFlag(command, 'a')) {
    for (const other of [...pane.window.panes]) if (other !== pane) await runtime.destroyPane(other);
    return;
  }
  await runtime.destroyPane(pane);
};

const killWindow: Command = async (ctx, runtime, command) => {
  const target = ctx.target(command, 'window');
  const window = target.window;
  if (!window) throw new CommandError('no current window');
  if (hasFlag(command, 'a')) {
    for (const other of window.session.sortedWindows()) if (other !== window) await runtime.killWindow(other);
    return;
  }
  await runtime.killWindow(window);
  runtime.fireHook('window-unlinked', undefined);
};

const killSession: Command = async (ctx, runtime, command) => {
  const session = ctx.target(command, 'session').session;
  if (!session) throw new CommandError('no current session');
  if (hasFlag(command, 'C')) return;
  if (hasFlag(command, 'a')) {
    for (const other of [...runtime.server.sessions]) if (other !== session) await runtime.killSession(other);
    return;
  }
  await runtime.killSession(session);
};

const killServer: Command = async (ctx, runtime) => {
  ctx.killed = true;
  await runtime.kill();
};

const hasSession: Command = (ctx, _runtime, command) => {
  ctx.target(command, 'session');
};

const attachSession: Command = (ctx, _runtime, command) => {
  if (!ctx.client.tty) throw new CommandError('open terminal failed: not a terminal');
  const target = ctx.target(command, 'session');
  const host = (target.pane ?? target.session?.current?.active)?.host;
  if (host) ctx.attachPane = host.id;
};

const renameSession: Command = (ctx, runtime, command) => {
  const session = ctx.target(command, 'session').session;
  if (!session) throw new CommandError('no current session');
  const name = sessionName(command.args[0] ?? '');
  if (name === '') throw new CommandError(`invalid session: ${name}`);
  if (runtime.server.session(name) && runtime.server.session(name) !== session) throw new CommandError(`duplicate session: ${name}`);
  session.name = name;
  runtime.relabel();
  runtime.fireHook('session-renamed', undefined);
};

const renameWindow: Command = (ctx, runtime, command) => {
  const window = ctx.target(command, 'window').window;
  if (!window) throw new CommandError('no current window');
  window.name = command.args[0] ?? '';
  window.options.set('automatic-rename', 'off');
  runtime.relabel();
};

const selectWindow: Command = (ctx, runtime, command) => {
  const target = ctx.target(command, 'window');
  const session = target.session;
  if (!session) throw new CommandError('no current session');
  const windows = session.sortedWindows();
  let window = target.window;
  const current = session.current;
  if (hasFlag(command, 'l')) {
    window = session.lastWindows[0];
    if (!window) throw new CommandError('no last window');
  } else if (hasFlag(command, 'n') || hasFlag(command, 'p')) {
    const at = current ? windows.indexOf(current) : 0;
    const step = hasFlag(command, 'n') ? 1 : -1;
    window = windows[(at + step + windows.length) % windows.length];
  }
  if (!window) throw new CommandError('no current window');
  // -T: selecting the current window goes to the last one instead.
  if (hasFlag(command, 'T') && window === current && session.lastWindows[0]) window = session.lastWindows[0];
  runtime.selectWindow(session, window);
};

const lastWindow: Command = (ctx, runtime, command) => {
  const session = ctx.target(command, 'session').session;
  const last = session?.lastWindows[0];
  if (!session || !last) throw new CommandError('no last window');
  runtime.selectWindow(session, last);
};

const stepWindow = (step: 1 | -1): Command => (ctx, runtime, command) => {
  const session = ctx.target(command, 'session').session;
  if (!session) throw new CommandError('no current session');
  const windows = session.sortedWindows();
  const at = session.current ? windows.indexOf(session.current) : 0;
  const next = windows[(at + step + windows.length) % windows.length];
  if (!next || next === session.current) throw new CommandError(step === 1 ? 'no next window' : 'no previous window');
  runtime.selectWindow(session, next);
};

const selectPane: Command = (ctx, runtime, command) => {
  const target = ctx.target(command, 'pane');
  let pane = target.pane;
  if (!pane) throw new CommandError('no current pane');
  const window = pane.window;
  if (hasFlag(command, 'l')) {
    if (!window.lastPane) throw new CommandError('no last pane');
    pane = window.lastPane;
  }
  // tmux 3.3a runs after-select-pane only when the active pane changes: not for a title, nor for
  // -d/-e/-m/-M, nor for the pane already active.
  ctx.afterHook = false;
  const title = flagValue(command, 'T');
  if (title !== undefined) {
    pane.title = title;
    runtime.relabel();
    runtime.fireHook('pane-title-changed', pane);
    return;
  }
  if (hasFlag(command, 'd') || hasFlag(command, 'e') || hasFlag(command, 'm') || hasFlag(command, 'M')) return;
  const direction = ['U', 'D', 'L', 'R'].find((d) => hasFlag(command, d));
  if (direction) pane = neighbour(pane, direction) ?? pane;
  ctx.afterHook = runtime.selectPane(window, pane);
  if (window.session.current !== window) runtime.selectWindow(window.session, window);
};

/** The pane next to `pane` in a direction, as the layout places them (wrapping round like tmux). */
function neighbour(pane: TmuxPane, direction: string): TmuxPane | undefined {
  const cell = pane.layoutCell;
  if (!cell) return undefined;
  const others = pane.window.panes.filter((p) => p !== pane);
  const overlaps = (a0: number, a1: number, b0: number, b1: number): boolean => a0 < b1 && b0 < a1;
  const candidates = others.filter((p) => {
    const c = p.layoutCell;
    if (!c) return false;
    if (direction === 'U' || direction === 'D') return overlaps(c.xoff, c.xoff + c.sx, cell.xoff, cell.xoff + cell.sx) && (direction === 'U' ? c.yoff + c.sy < cell.yoff : c.yoff > cell.yoff + cell.sy);
    return overlaps(c.yoff, c.yoff + c.sy, cell.yoff, cell.yoff + cell.sy) && (direction === 'L' ? c.xoff + c.sx < cell.xoff : c.xoff > cell.xoff + cell.sx);
  });
  const distance = (p: TmuxPane): number => {
    const c = p.layoutCell;
    if (!c) return Infinity;
    return direction === 'U' ? cell.yoff - c.yoff : direction === 'D' ? c.yoff - cell.yoff : direction === 'L' ? cell.xoff - c.xoff : c.xoff - cell.xoff;
  };
  return candidates.sort((a, b) => distance(a) - distance(b))[0];
}

const lastPane: Command = (ctx, runtime, command) => {
  const window = ctx.target(command, 'window').window;
  if (!window?.lastPane) throw new CommandError('no last pane');
  runtime.selectPane(window, window.lastPane);
};

const resizePaneCommand: Command = (ctx, runtime, command) => {
  const pane = ctx.target(command, 'pane').pane;
  if (!pane) throw new CommandError('no current pane');
  const window = pane.window;
  if (hasFlag(command, 'Z')) {
    window.zoomed = !window.zoomed && window.panes.length > 1;
    return;
  }
  const layoutBefore = dumpLayout(window.layout);
  const x = flagValue(command, 'x');
  const y = flagValue(command, 'y');
  const amount = (text: string | undefined, total: number, what: string): number => {
    if (text === undefined) return 0;
    const percent = text.endsWith('%');
    const digits = percent ? text.slice(0, -1) : text;
    if (!/^\d+$/.test(digits)) throw new CommandError(`${what} invalid`);
    return percent ? Math.floor((total * Number(digits)) / 100) : Number(digits);
  };
  if (x !== undefined) resizePaneTo(window.layout, pane.id, 'leftright', Math.max(1, amount(x, window.sx, 'width')));
  if (y !== undefined) resizePaneTo(window.layout, pane.id, 'topbottom', Math.max(1, amount(y, window.sy, 'height')));
  const adjustText = command.args[0];
  let adjust = 1;
  if (adjustText !== undefined) {
    if (!/^\d+$/.test(adjustText) || Number(adjustText) < 1) throw new CommandError('adjustment invalid');
    adjust = Number(adjustText);
  }
  if (hasFlag(command, 'L')) resizePane(window.layout, pane.id, 'leftright', -adjust, true);
  if (hasFlag(command, 'R')) resizePane(window.layout, pane.id, 'leftright', adjust, true);
  if (hasFlag(command, 'U')) resizePane(window.layout, pane.id, 'topbottom', -adjust, true);
  if (hasFlag(command, 'D')) resizePane(window.layout, pane.id, 'topbottom', adjust, true);
  runtime.syncSizes(window);
  // tmux tells a window's hooks only of a layout that changed, and on the window's active pane.
  if (dumpLayout(window.layout) !== layoutBefore) runtime.fireHook('window-layout-changed', window.active);
};

const resizeWindow: Command = (ctx, runtime, command) => {
  const window = ctx.target(command, 'window').window;
  if (!window) throw new CommandError('no current window');
  const x = size(flagValue(command, 'x'), 'width') ?? window.sx;
  const y = size(flagValue(command, 'y'), 'height') ?? window.sy;
  window.sx = x;
  window.sy = y;
  window.layout.sx = x;
  window.layout.sy = y;
  resizeChildCells(window.layout);
  fixOffsets(window.layout);
  runtime.syncSizes(window);
};

const needsClient: Command = () => {
  throw new CommandError('no current client');
};

const nothing: Command = () => undefined;

/** The session, window and pane commands, by name. */
export const SESSION_COMMANDS: Readonly<Record<string, Command>> = {
  'new-session': newSession,
  'new-window': newWindow,
  'split-window': splitWindow,
  'respawn-pane': respawnPane,
  'respawn-window': respawnWindow,
  'kill-pane': killPane,
  'kill-window': killWindow,
  'kill-session': killSession,
  'kill-server': killServer,
  'has-session': hasSession,
  'start-server': nothing,
  'attach-session': attachSession,
  'rename-session': renameSession,
  'rename-window': renameWindow,
  'select-window': selectWindow,
  'last-window': lastWindow,
  'next-window': stepWindow(1),
  'previous-window': stepWindow(-1),
  'select-pane': selectPane,
  'last-pane': lastPane,
  'resize-pane': resizePaneCommand,
  'resize-window': resizeWindow,
  'switch-client': needsClient,
  'detach-client': needsClient,
  'refresh-client': needsClient,
  'suspend-client': needsClient,
  'lock-client': needsClient,
  'display-panes': needsClient,
  'command-prompt': needsClient,
  'confirm-before': needsClient,
  'display-menu': needsClient,
  'display-popup': needsClient,
  'lock-server': nothing,
  'lock-session': nothing,
};
