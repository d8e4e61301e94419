/**
 * The variables tmux's formats see for a session, window and pane (`#{pane_id}`, `#{window_layout}`,
 * `#{session_name}`, …), computed when a format asks for them, with the options of the target's
 * scopes and its environment. A session without a window or pane falls back to its current ones,
 * as tmux's format_defaults does.
 */
import path from 'node:path';
import { switchboardVersion } from '../core/version.js';
import { expandFormat, type FormatScope } from './format.js';
import type { TmuxPane, TmuxServer, TmuxSession, TmuxWindow } from './model.js';
import { optionString, parseOptionName, type OptionStore } from './options.js';
import type { TargetState } from './target.js';

/** The version tmux reports; the front end answers as tmux 3.3a. */
export const TMUX_VERSION = '3.3a';

const seconds = (d: Date): string => String(Math.floor(d.getTime() / 1000));
const flag = (b: boolean): string => (b ? '1' : '0');

/** Builds format scopes over one server. */
export class FormatScopes {
  constructor(private readonly server: TmuxServer) {}

  /** The scope of a target (missing window and pane filled in from the session's current). */
  forTarget(target: TargetState, extra: Record<string, string> = {}): FormatScope {
    const session = target.session ?? target.window?.session;
    const window = target.window ?? session?.current;
    const pane = target.pane ?? window?.active;
    return this.scope(session, window, pane, extra);
  }

  scope(session: TmuxSession | undefined, window: TmuxWindow | undefined, pane: TmuxPane | undefined, extra: Record<string, string> = {}): FormatScope {
    const server = this.server;
    const stores: OptionStore[] = [server.options];
    if (pane) stores.push(pane.options);
    if (window) stores.push(window.options);
    stores.push(server.globalWindowOptions);
    if (session) stores.push(session.options);
    stores.push(server.globalSessionOptions);
    const variable = (name: string): string | undefined => {
      if (Object.hasOwn(extra, name)) return extra[name];
      if (name === 'window_name' && window) return this.windowName(window);
      return serverVariable(server, name) ?? (session ? sessionVariable(server, session, name) : undefined) ?? (window ? windowVariable(window, name) : undefined) ?? (pane ? paneVariable(this, pane, name) : undefined);
    };
    return {
      variable,
      option: (text) => {
        const { name, index } = parseOptionName(text);
        for (const store of stores) {
          const value = store.getOwn(name);
          if (value !== undefined) return optionString(value, index);
        }
        return undefined;
      },
      environment: (name) => {
        const own = session?.environment.get(name);
        if (own !== undefined) return own ?? undefined;
        return server.environment.get(name) ?? undefined;
      },
      loop: (kind) => {
        if (kind === 'S') return server.sortedSessions().map((s) => ({ scope: this.scope(s, s.current, s.current?.active), current: s === session }));
        if (kind === 'W') return (session?.sortedWindows() ?? []).map((w) => ({ scope: this.scope(session, w, w.active), current: w === session?.current }));
        return (window?.panes ?? []).map((p) => ({ scope: this.scope(session, window, p), current: p === window?.active }));
      },
    };
  }

  /** A window's name as shown: automatic-rename windows follow their active pane's program. */
  windowName(window: TmuxWindow): string {
    if (optionString(window.options.get('automatic-rename')) === 'on' && window.active) {
      const format = optionString(window.options.get('automatic-rename-format')) ?? '#{pane_current_command}';
      const name = expandFormat(format, this.scope(window.session, window, window.active));
      if (name !== '') window.name = name;
    }
    return window.name;
  }
}

function serverVariable(server: TmuxServer, name: string): string | undefined {
  switch (name) {
    case 'pid': return String(server.pid);
    case 'version': return TMUX_VERSION;
    case 'socket_path': return server.socketPath;
    case 'start_time': return seconds(server.startTime);
    case 'host': return server.hostName;
    case 'host_short': return server.hostName.split('.')[0] ?? server.hostName;
    case 'sessions': return String(server.sessions.length);
    case 'server_sessions': return String(server.sessions.length);
    case 'switchboard_version': return switchboardVersion();
    case 'client_session': case 'client_name': case 'client_tty': case 'client_termname': return '';
    default: return undefined;
  }
}

function sessionVariable(server: TmuxServer, session: TmuxSession, name: string): string | undefined {
  switch (name) {
    case 'session_name': return session.name;
    case 'session_id': return session.ref;
    case 'session_windows': return String(session.windows.size);
    case 'session_attached': return '0';
    case 'session_many_attached': return '0';
    case 'session_created': return seconds(session.createdAt);
    case 'session_activity': return seconds(session.activityAt);
    case 'session_last_attached': return '';
    case 'session_path': return session.cwd;
    case 'session_group': return '';
    case 'session_grouped': return '0';
    case 'session_group_size': return '';
    case 'session_alerts': return '';
    case 'session_stack': return [session.current?.index, ...session.lastWindows.map((w) => w.index)].filter((n) => n !== undefined).join(',');
    case 'session_format': return '1';
    case 'session_marked': return '0';
    case 'session_active': return '0';
    case 'session_id_number': return String(session.id);
    default:
      if (name === 'session_count') return String(server.sessions.length);
      return undefined;
  }
}

function windowFlags(window: TmuxWindow, raw: boolean): string {
  let flags = '';
  if (window.session.current === window) flags += '*';
  else if (window.session.lastWindows[0] === window) flags += '-';
  if (window.zoomed) flags += 'Z';
  return raw ? flags : flags;
}

function windowVariable(window: TmuxWindow, name: string): string | undefined {
  switch (name) {
    case 'window_id': return window.ref;
    case 'window_index': return String(window.index);
    case 'window_name': return window.name;
    case 'window_active': return flag(window.session.current === window);
    case 'window_panes': return String(window.panes.length);
    case 'window_width': return String(window.sx);
    case 'window_height': return String(window.sy);
    case 'window_layout': return window.layoutString;
    case 'window_visible_layout': return window.layoutString;
    case 'window_zoomed_flag': return flag(window.zoomed);
    case 'window_flags': return windowFlags(window, false);
    case 'window_raw_flags': return windowFlags(window, true);
    case 'window_activity': return seconds(window.activityAt);
    case 'window_activity_flag': case 'window_bell_flag': case 'window_silence_flag': case 'window_marked_flag': return '0';
    case 'window_last_flag': return flag(window.session.lastWindows[0] === window);
    case 'window_start_flag': return flag(window.session.sortedWindows()[0] === window);
    case 'window_end_flag': return flag(window.session.sortedWindows().at(-1) === window);
    case 'window_linked': return '0';
    case 'window_linked_sessions': return '1';
    case 'window_linked_sessions_list': return window.session.name;
    case 'window_bigger': return '0';
    case 'window_offset_x': case 'window_offset_y': return '';
    case 'window_format': return '1';
    case 'window_cell_width': case 'window_cell_height': return '0';
    case 'window_active_sessions': return flag(window.session.current === window);
    case 'window_active_clients': return '0';
    default: return undefined;
  }
}

function paneVariable(scopes: FormatScopes, pane: TmuxPane, name: string): string | undefined {
  const host = pane.host;
  const cell = pane.layoutCell;
  const window = pane.window;
  switch (name) {
    case 'pane_id': return pane.name;
    case 'pane_index': return String(pane.index);
    case 'pane_active': return flag(window.active === pane);
    case 'pane_last': return flag(window.lastPane === pane);
    case 'pane_title': {
      // A title the program sets (OSC 2) replaces the pane's, as in tmux; select-pane -T sets it too.
      const set = host?.windowTitle ?? '';
      if (set !== '' && set !== pane.programTitle) {
        pane.programTitle = set;
        pane.title = set;
      }
      return pane.title;
    }
    case 'pane_width': return String(pane.box?.sx ?? host?.cols ?? 0);
    case 'pane_height': return String(pane.box?.sy ?? host?.rows ?? 0);
    case 'pane_left': return String(pane.box?.xoff ?? 0);
    case 'pane_top': return String(pane.box?.yoff ?? 0);
    case 'pane_right': return String((pane.box?.xoff ?? 0) + (pane.box?.sx ?? 0) - 1);
    case 'pane_bottom': return String((pane.box?.yoff ?? 0) + (pane.box?.sy ?? 0) - 1);
    case 'pane_at_left': return flag((cell?.xoff ?? 0) === 0);
    case 'pane_at_top': return flag((cell?.yoff ?? 0) === 0);
    case 'pane_at_right': return flag((cell?.xoff ?? 0) + (cell?.sx ?? 0) === window.sx);
    case 'pane_at_bottom': return flag((cell?.yoff ?? 0) + (cell?.sy ?? 0) === window.sy);
    case 'pane_dead': return flag(pane.dead !== undefined);
    case 'pane_dead_status': return pane.dead?.exit.exitCode !== null && pane.dead?.exit.exitCode !== undefined ? String(pane.dead.exit.exitCode) : '';
    case 'pane_dead_signal': return pane.dead?.exit.signal ? String(signalNumber(pane.dead.exit.signal)) : '';
    case 'pane_dead_time': return pane.dead ? seconds(pane.dead.time) : '';
    case 'pane_pid': return host ? String(host.pid) : '';
    case 'pane_tty': return host?.ttyName ?? '';
    case 'pane_in_mode': return flag(pane.inMode);
    case 'pane_mode': return pane.inMode ? 'copy-mode' : '';
    case 'pane_synchronized': return flag(optionString(pane.options.get('synchronize-panes')) === 'on');
    case 'pane_pipe': return flag(pane.pipe !== undefined);
    case 'pane_input_off': return '0';
    case 'pane_marked': case 'pane_marked_set': return '0';
    case 'pane_format': return '1';
    case 'pane_start_command': return pane.startCommand;
    case 'pane_start_path': return pane.startPath;
    case 'pane_current_command': {
      if (!host) return '';
      if (!host.alive) return path.basename(pane.startCommand.split(' ')[0] ?? '');
      return host.foreground().name;
    }
    case 'pane_current_path': return host ? host.foreground().cwd : '';
    // Not tmux's: the foreground process's pid, for the herdr front end's process-info.
    case 'switchboard_foreground_pid': return host?.alive ? String(host.foreground().pid) : '';
    case 'pane_tabs': return '';
    case 'history_size': return String(pane.carried.length + (host?.historyLength ?? 0) + (pane.deadLine !== undefined ? 1 : 0));
    case 'history_limit': return optionString(window.session.options.get('history-limit')) ?? '2000';
    case 'history_bytes': return String(historyBytes(pane));
    case 'cursor_x': return String(host?.cursor.x ?? 0);
    case 'cursor_y': return String(host?.cursor.y ?? 0);
    case 'cursor_flag': return flag(host?.cursor.visible ?? true);
    case 'alternate_on': return flag(host?.altScreen ?? false);
    case 'alternate_saved_x': case 'alternate_saved_y': return '0';
    case 'insert_flag': case 'keypad_flag': case 'keypad_cursor_flag': case 'origin_flag': case 'mouse_any_flag': case 'mouse_button_flag': case 'mouse_standard_flag': case 'mouse_all_flag': case 'mouse_utf8_flag': case 'mouse_sgr_flag': return '0';
    case 'wrap_flag': return '1';
    case 'scroll_region_upper': return '0';
    case 'scroll_region_lower': return String((pane.box?.sy ?? 1) - 1);
    case 'scroll_position': return '';
    default: return undefined;
  }
}

const SIGNALS: Readonly<Record<string, number>> = { SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGILL: 4, SIGTRAP: 5, SIGABRT: 6, SIGBUS: 7, SIGFPE: 8, SIGKILL: 9, SIGUSR1: 10, SIGSEGV: 11, SIGUSR2: 12, SIGPIPE: 13, SIGALRM: 14, SIGTERM: 15 };

function signalNumber(name: string): number {
  return SIGNALS[name] ?? 0;
}

/** tmux's history_bytes: 32 bytes a line plus 8 a cell used, over history and screen. */
function historyBytes(pane: TmuxPane): number {
  const host = pane.host;
  const rows = host ? host.captureRows(0, host.historyLength + host.rows, false) : [];
  const all = [...pane.carried, ...rows];
  return all.reduce((sum, row) => sum + 32 + 8 * row.text.length, 0);
}
