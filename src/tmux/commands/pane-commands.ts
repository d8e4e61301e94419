/**
 * Commands that read and write panes and list things: display-message, capture-pane, send-keys,
 * copy-mode, clear-history, pipe-pane, the paste buffers, and list-sessions/windows/panes/clients.
 */
import { readFileSync, writeFileSync, appendFileSync } from 'node:fs';
import path from 'node:path';
import { capturePane, paneGrid } from '../capture.js';
import { formatTrue } from '../format.js';
import { flagValue, hasFlag, type ParsedCommand } from '../grammar.js';
import { keyBytes } from '../keys.js';
import type { PasteBuffer, TmuxPane } from '../model.js';
import { optionString } from '../options.js';
import type { TargetState } from '../target.js';
import { CommandError, type CommandContext } from './context.js';
import type { Command } from './session-commands.js';

const DISPLAY_MESSAGE_TEMPLATE = '[#{session_name}] #{window_index}:#{window_name}, current pane #{pane_index} - (%H:%M %d-%b-%y)';
const LIST_SESSIONS_TEMPLATE = '#{session_name}: #{session_windows} windows (created #{t:session_created})#{?session_grouped, (group ,}#{session_group}#{?session_grouped,),}#{?session_attached, (attached),}';
const LIST_WINDOWS_TEMPLATE = '#{window_index}: #{window_name}#{window_raw_flags} (#{window_panes} panes) [#{window_width}x#{window_height}] [layout #{window_layout}] #{window_id}#{?window_active, (active),}';
const LIST_WINDOWS_WITH_SESSION_TEMPLATE = '#{session_name}:#{window_index}: #{window_name}#{window_raw_flags} (#{window_panes} panes) [#{window_width}x#{window_height}] ';
const PANE_TAIL = '[#{pane_width}x#{pane_height}] [history #{history_size}/#{history_limit}, #{history_bytes} bytes] #{pane_id}#{?pane_active, (active),}#{?pane_dead, (dead),}';
const LIST_BUFFERS_TEMPLATE = '#{buffer_name}: #{buffer_size} bytes: "#{buffer_sample}"';

/** The variables formats see for a paste buffer. */
function bufferVariables(buffer: PasteBuffer): Record<string, string> {
  let sample = '';
  const chars = Array.from(buffer.data);
  for (const ch of chars.slice(0, 50)) {
    const code = ch.codePointAt(0) ?? 0;
    if (ch === '\n') sample += '\\n';
    else if (ch === '\t') sample += '\\t';
    else if (ch === '\r') sample += '\\r';
    else if (ch === '\\') sample += '\\\\';
    else if (ch === '"') sample += '\\"';
    else if (code < 0x20 || code === 0x7f) sample += `\\${code.toString(8).padStart(3, '0')}`;
    else sample += ch;
  }
  if (chars.length > 50) sample += '...';
  return {
    buffer_name: buffer.name,
    buffer_size: String(Buffer.byteLength(buffer.data)),
    buffer_sample: sample,
    buffer_created: String(Math.floor(buffer.createdAt.getTime() / 1000)),
  };
}

const displayMessage: Command = (ctx, _runtime, command) => {
  const format = flagValue(command, 'F');
  if (format !== undefined && command.args.length > 0) throw new CommandError('only one of -F or argument must be given');
  const target = ctx.targetOrNothing(command, 'pane');
  if (hasFlag(command, 'a')) {
    const scope = ctx.scopes.forTarget(target);
    const names = ALL_VARIABLES.filter((n) => scope.variable(n) !== undefined).sort();
    for (const name of names) ctx.print(`${name}=${scope.variable(name) ?? ''}`);
    return;
  }
  const template = format ?? command.args[0] ?? DISPLAY_MESSAGE_TEMPLATE;
  const message = ctx.expand(template, target, {}, { time: new Date() });
  // With no terminal client the message has nowhere to go unless -p prints it.
  if (hasFlag(command, 'p')) ctx.print(message);
};

/** Variables display-message -a lists. */
const ALL_VARIABLES = [
  'pid', 'version', 'socket_path', 'start_time', 'host', 'host_short',
  'session_name', 'session_id', 'session_windows', 'session_attached', 'session_created', 'session_activity', 'session_path', 'session_grouped', 'session_format',
  'window_id', 'window_index', 'window_name', 'window_active', 'window_panes', 'window_width', 'window_height', 'window_layout', 'window_visible_layout', 'window_zoomed_flag', 'window_flags', 'window_raw_flags', 'window_activity', 'window_format',
  'pane_id', 'pane_index', 'pane_active', 'pane_title', 'pane_width', 'pane_height', 'pane_left', 'pane_top', 'pane_right', 'pane_bottom', 'pane_dead', 'pane_dead_status', 'pane_pid', 'pane_tty', 'pane_in_mode', 'pane_start_command', 'pane_start_path', 'pane_current_command', 'pane_current_path', 'pane_pipe', 'pane_format',
  'history_size', 'history_limit', 'history_bytes', 'cursor_x', 'cursor_y', 'cursor_flag', 'alternate_on',
];

function requirePane(ctx: CommandContext, command: ParsedCommand): TmuxPane {
  const pane = ctx.target(command, 'pane').pane;
  if (!pane) throw new CommandError('no current pane');
  return pane;
}

const capturePaneCommand: Command = (ctx, _runtime, command) => {
  const pane = requirePane(ctx, command);
  if (hasFlag(command, 'a') && !pane.host?.altScreen) {
    if (hasFlag(command, 'q')) return;
    throw new CommandError('no alternate screen');
  }
  const text = hasFlag(command, 'P')
    ? ''
    : capturePane(paneGrid(pane), {
        start: flagValue(command, 'S'),
        end: flagValue(command, 'E'),
        escapes: hasFlag(command, 'e'),
        join: hasFlag(command, 'J'),
        noTrim: hasFlag(command, 'N'),
        escapeControl: hasFlag(command, 'C'),
      });
  if (hasFlag(command, 'p')) {
    ctx.write(text);
    return;
  }
  ctx.server.setBuffer(flagValue(command, 'b'), text);
};

/** Writes to a pane's program; a pane whose program has gone takes no input, as in tmux. */
function writeToPane(pane: TmuxPane, data: string): void {
  const host = pane.host;
  if (!host?.alive || data === '') return;
  try {
    host.write(data);
  } catch {
    // The program exited between the check and the write: the input is dropped, as tmux drops it.
  }
}

const sendKeys: Command = (ctx, runtime, command) => {
  const pane = requirePane(ctx, command);
  if (hasFlag(command, 'X')) {
    if (!pane.inMode) throw new CommandError('not in a mode');
    const name = command.args[0] ?? '';
    if (name === 'cancel' || name.endsWith('-and-cancel') || name === 'copy-selection-and-cancel') {
      pane.inMode = false;
      runtime.fireHook('pane-mode-changed', pane);
    }
    return;
  }
  const repeatText = flagValue(command, 'N');
  let repeat = 1;
  if (repeatText !== undefined) {
    if (!/^\d+$/.test(repeatText) || Number(repeatText) < 1) throw new CommandError('repeat count invalid');
    repeat = Number(repeatText);
  }
  if (hasFlag(command, 'R')) writeToPane(pane, '\x1bc');
  const appCursor = pane.host?.applicationCursorKeys ?? false;
  let data = '';
  for (const raw of command.args) {
    const arg = hasFlag(command, 'F') ? ctx.expand(raw, ctx.resolver.ofPane(pane)) : raw;
    if (hasFlag(command, 'H')) {
      for (const hex of arg.split(/\s+/).filter(Boolean)) {
        const code = Number.parseInt(hex, 16);
        if (!Number.isInteger(code) || code > 0xff) throw new CommandError(`invalid key: ${hex}`);
        data += String.fromCharCode(code);
      }
      continue;
    }
    const key = hasFlag(command, 'l') ? undefined : keyBytes(arg, appCursor);
    data += key ?? arg;
  }
  if (pane.inMode) {
    // Keys go to copy mode, not the program: q, Escape and C-c leave it.
    if (/^(q|\x1b|\x03)/.test(data)) {
      pane.inMode = false;
      runtime.fireHook('pane-mode-changed', pane);
    }
    return;
  }
  writeToPane(pane, data.repeat(repeat));
};

const sendPrefix: Command = (ctx, _runtime, command) => {
  const pane = requirePane(ctx, command);
  const option = hasFlag(command, '2') ? 'prefix2' : 'prefix';
  const key = optionString(pane.window.session.options.get(option)) ?? 'C-b';
  writeToPane(pane, keyBytes(key, pane.host?.applicationCursorKeys ?? false) ?? '');
};

const copyMode: Command = (ctx, runtime, command) => {
  const pane = requirePane(ctx, command);
  if (hasFlag(command, 'q')) {
    pane.inMode = false;
    return;
  }
  if (!pane.inMode) {
    pane.inMode = true;
    runtime.fireHook('pane-mode-changed', pane);
  }
};

const clearHistory: Command = (ctx, _runtime, command) => {
  const pane = requirePane(ctx, command);
  pane.carried = [];
  pane.host?.clearHistory();
};

const pipePane: Command = (ctx, runtime, command) => {
  const pane = requirePane(ctx, command);
  const old = pane.pipe;
  old?.close();
  pane.pipe = undefined;
  const text = command.args[0];
  if (text === undefined || text === '') return;
  if (hasFlag(command, 'o') && old) return;
  if (!pane.host?.alive) throw new CommandError('target pane has exited');
  const target = ctx.resolver.ofPane(pane);
  const shell = optionString(pane.window.session.options.get('default-shell')) ?? runtime.host.fallbackShell();
  const env: Record<string, string> = { ...Object.fromEntries([...ctx.server.environment].filter((e): e is [string, string] => e[1] !== null)) };
  env.TMUX = `${ctx.server.socketPath},${ctx.server.pid},${pane.window.session.id}`;
  env.TMUX_PANE = pane.name;
  const pipe = runtime.host.startPipe(shell, ctx.expand(text, target), pane.startPath || ctx.client.cwd, env);
  pane.pipe = pipe;
  pipe.onExit(() => {
    if (pane.pipe === pipe) pane.pipe = undefined;
  });
};

function bufferOrError(ctx: CommandContext, command: ParsedCommand): PasteBuffer | undefined {
  const name = flagValue(command, 'b');
  const buffer = ctx.server.buffer(name);
  if (!buffer && name !== undefined) throw new CommandError(`no buffer ${name}`);
  return buffer;
}

const loadBuffer: Command = (ctx, _runtime, command) => {
  const file = command.args[0] as string;
  let data: string;
  if (file === '-') {
    data = ctx.client.stdin ?? '';
  } else {
    const full = path.resolve(ctx.client.cwd, file);
    try {
      data = readFileSync(full, 'utf8');
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      throw new CommandError(`${file}: ${code === 'ENOENT' ? 'No such file or directory' : code === 'EACCES' ? 'Permission denied' : code === 'EISDIR' ? 'Is a directory' : (err as Error).message}`);
    }
  }
  ctx.server.setBuffer(flagValue(command, 'b'), data);
};

const pasteBuffer: Command = (ctx, _runtime, command) => {
  const pane = requirePane(ctx, command);
  const buffer = bufferOrError(ctx, command);
  if (!buffer) return;
  const separator = flagValue(command, 's') ?? '\r';
  const body = hasFlag(command, 'r') ? buffer.data : buffer.data.replace(/\n/g, separator);
  const bracket = hasFlag(command, 'p') && (pane.host?.bracketedPaste ?? false);
  writeToPane(pane, bracket ? `\x1b[200~${body}\x1b[201~` : body);
  if (hasFlag(command, 'd')) ctx.server.deleteBuffer(buffer);
};

const deleteBuffer: Command = (ctx, _runtime, command) => {
  const name = flagValue(command, 'b');
  const buffer = ctx.server.buffer(name);
  if (!buffer) {
    if (name !== undefined) throw new CommandError(`unknown buffer: ${name}`);
    return;
  }
  ctx.server.deleteBuffer(buffer);
};

const setBuffer: Command = (ctx, _runtime, command) => {
  const name = flagValue(command, 'b');
  const rename = flagValue(command, 'n');
  if (rename !== undefined) {
    const buffer = ctx.server.buffer(name);
    if (!buffer) throw new CommandError(name !== undefined ? `unknown buffer: ${name}` : 'no buffer');
    const replaced = ctx.server.buffer(rename);
    if (replaced) ctx.server.deleteBuffer(replaced);
    buffer.name = rename;
    buffer.automatic = false;
    return;
  }
  const data = command.args[0];
  if (data === undefined) throw new CommandError('no data specified');
  const existing = name !== undefined ? ctx.server.buffer(name) : undefined;
  ctx.server.setBuffer(name, hasFlag(command, 'a') && existing ? existing.data + data : data);
};

const showBuffer: Command = (ctx, _runtime, command) => {
  const buffer = bufferOrError(ctx, command);
  if (!buffer) throw new CommandError('no buffers');
  ctx.write(buffer.data);
};

const saveBuffer: Command = (ctx, _runtime, command) => {
  const buffer = bufferOrError(ctx, command);
  if (!buffer) throw new CommandError('no buffers');
  const file = command.args[0] as string;
  if (file === '-') {
    ctx.write(buffer.data);
    return;
  }
  const full = path.resolve(ctx.client.cwd, file);
  try {
    if (hasFlag(command, 'a')) appendFileSync(full, buffer.data);
    else writeFileSync(full, buffer.data);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new CommandError(`${file}: ${code === 'ENOENT' ? 'No such file or directory' : (err as Error).message}`);
  }
};

const listBuffers: Command = (ctx, _runtime, command) => {
  const template = flagValue(command, 'F') ?? LIST_BUFFERS_TEMPLATE;
  const filter = flagValue(command, 'f');
  for (const buffer of [...ctx.server.buffers].sort((a, b) => b.order - a.order)) {
    const vars = bufferVariables(buffer);
    const target = { ...ctx.current };
    if (filter !== undefined && !formatTrue(ctx.expand(filter, target, vars))) continue;
    ctx.print(ctx.expand(template, target, vars));
  }
};

/** Prints each target that passes the filter, in the template. */
function listTargets(ctx: CommandContext, command: ParsedCommand, targets: TargetState[], template: string): void {
  const format = flagValue(command, 'F') ?? template;
  const filter = flagValue(command, 'f');
  for (const target of targets) {
    if (filter !== undefined && !formatTrue(ctx.expand(filter, target))) continue;
    ctx.print(ctx.expand(format, target));
  }
}

const listSessions: Command = (ctx, _runtime, command) => {
  listTargets(ctx, command, ctx.server.sortedSessions().map((s) => ctx.resolver.sessionCurrent(s)), LIST_SESSIONS_TEMPLATE);
};

const listWindows: Command = (ctx, _runtime, command) => {
  if (hasFlag(command, 'a')) {
    const targets = ctx.server.allWindows().map((w) => ({ session: w.session, window: w, pane: w.active, index: w.index }));
    listTargets(ctx, command, targets, LIST_WINDOWS_WITH_SESSION_TEMPLATE);
    return;
  }
  const session = ctx.target(command, 'session').session;
  if (!session) throw new CommandError('no current session');
  listTargets(ctx, command, session.sortedWindows().map((w) => ({ session, window: w, pane: w.active, index: w.index })), LIST_WINDOWS_TEMPLATE);
};

const listPanes: Command = (ctx, _runtime, command) => {
  let panes: TmuxPane[];
  let template: string;
  if (hasFlag(command, 'a')) {
    panes = ctx.server.allPanes();
    template = `#{session_name}:#{window_index}.#{pane_index}: ${PANE_TAIL}`;
  } else if (hasFlag(command, 's')) {
    const session = ctx.target(command, 'session').session;
    panes = session?.sortedWindows().flatMap((w) => w.panes) ?? [];
    template = `#{window_index}.#{pane_index}: ${PANE_TAIL}`;
  } else {
    const window = ctx.target(command, 'window').window;
    if (!window) throw new CommandError('no current window');
    panes = window.panes;
    template = `#{pane_index}: ${PANE_TAIL}`;
  }
  listTargets(ctx, command, panes.map((p) => ctx.resolver.ofPane(p)), template);
};

/** No terminal clients ever attach to the front end, so there are none to list. */
const listClients: Command = (ctx, _runtime, command) => {
  if (flagValue(command, 't') !== undefined) ctx.target(command, 'session');
};

/** The pane and listing commands, by name. */
export const PANE_COMMANDS: Readonly<Record<string, Command>> = {
  'display-message': displayMessage,
  'capture-pane': capturePaneCommand,
  'send-keys': sendKeys,
  'send-prefix': sendPrefix,
  'copy-mode': copyMode,
  'clock-mode': copyMode,
  'choose-tree': copyMode,
  'choose-buffer': copyMode,
  'choose-client': copyMode,
  'customize-mode': copyMode,
  'clear-history': clearHistory,
  'pipe-pane': pipePane,
  'load-buffer': loadBuffer,
  'paste-buffer': pasteBuffer,
  'delete-buffer': deleteBuffer,
  'set-buffer': setBuffer,
  'show-buffer': showBuffer,
  'save-buffer': saveBuffer,
  'list-buffers': listBuffers,
  'list-sessions': listSessions,
  'list-windows': listWindows,
  'list-panes': listPanes,
  'list-clients': listClients,
};
