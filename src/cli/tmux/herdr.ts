/**
 * A `herdr`-compatible front end for the subcommands CCB 8.x calls on native Windows (chosen with
 * CCB_HERDR_EXE): `--version`, `status --json`, `workspace …`, `pane list|get|current|split|run|
 * send-text|send-keys|read|close|process-info`, `pane report-agent|release-agent|…`. Herdr's
 * workspaces, tabs and panes are the tmux front end's sessions, windows and panes in a namespace of
 * their own, so they are ordinary Switchboard panes. Replies are Herdr's JSON shapes
 * (`{"id", "result": {"type", …}}`; errors `{"id", "error": {"code", "message"}}` on stderr).
 */

/** Runs one tmux command line (through the daemon) and returns what it printed. */
export type TmuxRunner = (argv: string[]) => Promise<{ stdout: string; stderr: string; exitCode: number }>;

export interface HerdrResult {
  stdout: string;
  stderr: string;
  exitCode: number;
}

/** The version and socket protocol the front end answers as (CCB 8.x requires Herdr 0.8.0 or later). */
const HERDR_VERSION = '0.9.0';
const HERDR_PROTOCOL = 21;
/** The tmux namespace Herdr's objects live in. */
export const HERDR_SOCKET_LABEL = 'switchboard-herdr';

type AgentStatus = 'idle' | 'working' | 'blocked' | 'done' | 'unknown';
const AGENT_STATES: readonly AgentStatus[] = ['idle', 'working', 'blocked', 'done', 'unknown'];

/** Herdr's PaneInfo. */
interface HerdrPaneInfo {
  pane_id: string;
  terminal_id: string;
  workspace_id: string;
  tab_id: string;
  focused: boolean;
  agent_status: AgentStatus;
  revision: number;
  cwd: string | null;
  foreground_cwd: string | null;
  agent: string | null;
  label: string | null;
  title: string | null;
}

interface HerdrTabInfo {
  tab_id: string;
  workspace_id: string;
  number: number;
  label: string;
  focused: boolean;
  pane_count: number;
  agent_status: AgentStatus;
}

interface HerdrWorkspaceInfo {
  workspace_id: string;
  number: number;
  label: string;
  focused: boolean;
  pane_count: number;
  tab_count: number;
  active_tab_id: string;
  agent_status: AgentStatus;
}

const SEP = '\u001f';
/** The fields read for every pane, in one list-panes call. */
const PANE_FIELDS = ['session_id', 'session_name', 'window_index', 'window_name', 'window_active', 'pane_id', 'pane_active', 'pane_current_path', 'pane_start_path', 'pane_title', '@herdr_agent', '@herdr_status', '@herdr_label', 'pane_pid', 'pane_current_command', 'pane_tty', 'switchboard_foreground_pid'] as const;
type PaneRow = Record<(typeof PANE_FIELDS)[number], string>;
const PANE_FORMAT = PANE_FIELDS.map((f) => `#{${f}}`).join(SEP);

const workspaceId = (sessionId: string): string => `w${Number(sessionId.replace('$', '')) + 1}`;
const tabId = (row: Pick<PaneRow, 'session_id' | 'window_index'>): string => `${workspaceId(row.session_id)}:t${Number(row.window_index) + 1}`;
const herdrPaneId = (row: Pick<PaneRow, 'session_id' | 'pane_id'>): string => `${workspaceId(row.session_id)}:p${Number(row.pane_id.replace('%', '')) + 1}`;

/** The tmux pane (%N) a Herdr pane id (w1:p3, or a bare p3) names. */
export function tmuxPaneOf(id: string): string | undefined {
  const match = /^(?:w\d+:)?p(\d+)$/.exec(id);
  return match ? `%${Number(match[1]) - 1}` : undefined;
}

/** The tmux session ($N) a Herdr workspace id names. */
function tmuxSessionOf(id: string): string | undefined {
  const match = /^w(\d+)$/.exec(id);
  return match ? `$${Number(match[1]) - 1}` : undefined;
}

function parseRows(text: string): PaneRow[] {
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => {
      const values = line.split(SEP);
      return Object.fromEntries(PANE_FIELDS.map((f, i) => [f, values[i] ?? ''])) as PaneRow;
    });
}

/** Herdr's PaneInfo for one pane row. */
function paneInfoOf(row: PaneRow): HerdrPaneInfo {
  const status = AGENT_STATES.includes(row['@herdr_status'] as AgentStatus) ? (row['@herdr_status'] as AgentStatus) : 'unknown';
  return {
    pane_id: herdrPaneId(row),
    terminal_id: `t${Number(row.pane_id.replace('%', '')) + 1}`,
    workspace_id: workspaceId(row.session_id),
    tab_id: tabId(row),
    focused: row.pane_active === '1' && row.window_active === '1',
    agent_status: status,
    revision: 0,
    cwd: row.pane_start_path || null,
    foreground_cwd: row.pane_current_path || null,
    agent: row['@herdr_agent'] || null,
    label: row['@herdr_label'] || null,
    title: row.pane_title || null,
  };
}

/** Herdr's TabInfo and WorkspaceInfo from the pane rows. */
function workspacesOf(rows: PaneRow[]): { workspaces: HerdrWorkspaceInfo[]; tabs: HerdrTabInfo[] } {
  const tabs = new Map<string, HerdrTabInfo>();
  const workspaces = new Map<string, HerdrWorkspaceInfo>();
  for (const row of rows) {
    const ws = workspaceId(row.session_id);
    const tab = tabId(row);
    const t = tabs.get(tab) ?? { tab_id: tab, workspace_id: ws, number: Number(row.window_index) + 1, label: row.window_name, focused: row.window_active === '1', pane_count: 0, agent_status: 'unknown' as AgentStatus };
    t.pane_count += 1;
    tabs.set(tab, t);
    const w = workspaces.get(ws) ?? { workspace_id: ws, number: Number(row.session_id.replace('$', '')) + 1, label: row.session_name, focused: false, pane_count: 0, tab_count: 0, active_tab_id: tab, agent_status: 'unknown' as AgentStatus };
    w.pane_count += 1;
    if (row.window_active === '1') w.active_tab_id = tab;
    workspaces.set(ws, w);
  }
  for (const w of workspaces.values()) w.tab_count = [...tabs.values()].filter((t) => t.workspace_id === w.workspace_id).length;
  const first = [...workspaces.values()][0];
  if (first) first.focused = true;
  return { workspaces: [...workspaces.values()], tabs: [...tabs.values()] };
}

/** Herdr's key-combo names as tmux key names: enter, esc, ctrl+c, alt+x, shift+tab, f1, minus. */
export function tmuxKeyOf(combo: string): string {
  const named: Record<string, string> = { enter: 'Enter', return: 'Enter', esc: 'Escape', escape: 'Escape', tab: 'Tab', backspace: 'BSpace', space: 'Space', left: 'Left', right: 'Right', up: 'Up', down: 'Down', home: 'Home', end: 'End', pageup: 'PPage', pagedown: 'NPage', delete: 'DC', insert: 'IC', minus: '-', plus: '+', backtick: '`' };
  if (/^[cC]-./.test(combo)) return combo;
  const parts = combo.split('+');
  let key = parts.pop() ?? '';
  key = named[key.toLowerCase()] ?? (/^f\d{1,2}$/i.test(key) ? key.toUpperCase() : key);
  let prefix = '';
  for (const mod of parts.map((p) => p.toLowerCase())) {
    if (mod === 'ctrl' || mod === 'control') prefix += 'C-';
    else if (mod === 'alt' || mod === 'meta' || mod === 'option') prefix += 'M-';
    else if (mod === 'shift') prefix += 'S-';
  }
  if (prefix === 'S-' && key === 'Tab') return 'BTab';
  return prefix + key;
}

class HerdrError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

interface Parsed {
  positionals: string[];
  options: Map<string, string[]>;
}

/** Long options (`--name value`, `--name=value`, flags) and positionals. */
function parseOptions(args: string[], flags: readonly string[]): Parsed {
  const positionals: string[] = [];
  const options = new Map<string, string[]>();
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg === '--') {
      positionals.push(...args.slice(i + 1));
      break;
    }
    if (arg.startsWith('--')) {
      const eq = arg.indexOf('=');
      const name = eq === -1 ? arg.slice(2) : arg.slice(2, eq);
      const value = eq !== -1 ? arg.slice(eq + 1) : flags.includes(name) ? '' : (args[++i] ?? '');
      options.set(name, [...(options.get(name) ?? []), value]);
    } else positionals.push(arg);
  }
  return { positionals, options };
}

const one = (p: Parsed, name: string): string | undefined => p.options.get(name)?.at(-1);

/** Runs one herdr command line over the tmux front end. */
export class HerdrFrontEnd {
  constructor(
    private readonly tmux: TmuxRunner,
    private readonly env: Readonly<Record<string, string | undefined>>,
    private readonly socketShown: string,
    /** True when the daemon behind the front end answers. */
    private readonly probe: () => Promise<boolean>,
  ) {}

  async run(argv: string[]): Promise<HerdrResult> {
    const [first, ...rest] = argv;
    if (first === undefined || first === '--version' || first === '-V' || first === 'version') return { stdout: `herdr ${HERDR_VERSION}\n`, stderr: '', exitCode: 0 };
    try {
      const result = await this.dispatch(first, rest);
      if (typeof result === 'string') return { stdout: result, stderr: '', exitCode: 0 };
      if ('raw' in result) return { stdout: `${JSON.stringify(result.raw)}\n`, stderr: '', exitCode: 0 };
      return { stdout: `${JSON.stringify({ id: `cli:${[first, rest[0] ?? ''].join(':')}`, result })}\n`, stderr: '', exitCode: 0 };
    } catch (err) {
      const error = err instanceof HerdrError ? err : new HerdrError('internal_error', err instanceof Error ? err.message : String(err));
      return { stdout: '', stderr: `${JSON.stringify({ id: `cli:${first}`, error: { code: error.code, message: error.message } })}\n`, exitCode: 1 };
    }
  }

  private async tmuxOk(argv: string[]): Promise<string> {
    const out = await this.tmux(argv);
    if (out.exitCode !== 0) {
      const message = out.stderr.trim();
      const code = /can't find pane/.test(message) ? 'pane_not_found' : /can't find session|no server running|error connecting/.test(message) ? 'workspace_not_found' : 'tmux_error';
      throw new HerdrError(code, message || 'failed');
    }
    return out.stdout;
  }

  private async rows(filter?: (row: PaneRow) => boolean): Promise<PaneRow[]> {
    const out = await this.tmux(['list-panes', '-a', '-F', PANE_FORMAT]);
    if (out.exitCode !== 0) return [];
    const rows = parseRows(out.stdout);
    return filter ? rows.filter(filter) : rows;
  }

  private async row(id: string): Promise<PaneRow> {
    const pane = tmuxPaneOf(id);
    const found = pane ? (await this.rows((r) => r.pane_id === pane))[0] : undefined;
    if (!found) throw new HerdrError('pane_not_found', `pane ${id} not found`);
    return found;
  }

  /** The pane a command names: a positional id, --pane, or --current (the caller's pane). */
  private paneArg(p: Parsed): string {
    const given = p.positionals[0] ?? one(p, 'pane');
    if (given !== undefined && given !== '') return given;
    const current = this.env.HERDR_PANE_ID ?? (this.env.TMUX_PANE ? `p${Number(this.env.TMUX_PANE.replace('%', '')) + 1}` : undefined);
    if (current === undefined) throw new HerdrError('pane_not_found', 'no pane given and not inside a pane');
    return current;
  }

  private async dispatch(group: string, args: string[]): Promise<object | string> {
    const [verb = '', ...rest] = args;
    if (group === 'status') return this.status();
    if (group === 'workspace') return this.workspace(verb, parseOptions(rest, ['focus', 'no-focus', 'group']));
    if (group === 'pane') return this.pane(verb, parseOptions(rest, ['focus', 'no-focus', 'current', 'ansi', 'raw', 'toggle', 'on', 'off', 'clear']));
    if (group === 'tab' && verb === 'list') {
      const { tabs } = workspacesOf(await this.rows());
      return { type: 'tab_list', tabs };
    }
    throw new HerdrError('unsupported', `herdr ${group} ${verb} is not supported by the Switchboard front end`);
  }

  private async status(): Promise<object> {
    const running = await this.probe();
    return { raw: { server: { running, compatible: running, version: HERDR_VERSION, protocol: HERDR_PROTOCOL, socket: this.socketShown, capabilities: { live_handoff: false } }, client: { version: HERDR_VERSION, protocol: HERDR_PROTOCOL } } };
  }

  private async workspace(verb: string, p: Parsed): Promise<object> {
    switch (verb) {
      case 'list': {
        const { workspaces } = workspacesOf(await this.rows());
        return { type: 'workspace_list', workspaces };
      }
      case 'create': {
        const label = one(p, 'label');
        const env = (p.options.get('env') ?? []).flatMap((e) => ['-e', e]);
        const cwd = one(p, 'cwd') ?? this.env.PWD ?? '.';
        const name = label ?? `workspace-${Date.now().toString(36)}`;
        const paneId = (await this.tmuxOk(['new-session', '-d', '-s', name, '-n', label ?? 'main', '-c', cwd, '-e', 'HERDR_ENV=1', ...env, '-P', '-F', '#{pane_id}'])).trim();
        await this.tmuxOk(['set-option', '-p', '-t', paneId, '@herdr_label', label ?? '']);
        const rows = await this.rows();
        const row = rows.find((r) => r.pane_id === paneId);
        if (!row) throw new HerdrError('internal_error', 'the new workspace vanished');
        const { workspaces, tabs } = workspacesOf(rows);
        return { type: 'workspace_created', workspace: workspaces.find((w) => w.workspace_id === workspaceId(row.session_id)), tab: tabs.find((t) => t.tab_id === tabId(row)), root_pane: paneInfoOf(row) };
      }
      case 'get': {
        const id = p.positionals[0] ?? '';
        const workspace = workspacesOf(await this.rows()).workspaces.find((w) => w.workspace_id === id);
        if (!workspace) throw new HerdrError('workspace_not_found', `workspace ${id} not found`);
        return { type: 'workspace_info', workspace };
      }
      case 'close': {
        const session = tmuxSessionOf(p.positionals[0] ?? '');
        if (!session) throw new HerdrError('workspace_not_found', `workspace ${p.positionals[0] ?? ''} not found`);
        await this.tmuxOk(['kill-session', '-t', session]);
        return { type: 'ok' };
      }
      case 'rename': {
        const session = tmuxSessionOf(p.positionals[0] ?? '');
        if (!session) throw new HerdrError('workspace_not_found', `workspace ${p.positionals[0] ?? ''} not found`);
        await this.tmuxOk(['rename-session', '-t', session, p.positionals[1] ?? '']);
        return { type: 'ok' };
      }
      case 'focus':
      case 'report-metadata':
        return { type: 'ok' };
      default:
        throw new HerdrError('unsupported', `herdr workspace ${verb} is not supported by the Switchboard front end`);
    }
  }

  private async pane(verb: string, p: Parsed): Promise<object | string> {
    switch (verb) {
      case 'list': {
        const workspace = one(p, 'workspace');
        const rows = await this.rows((r) => workspace === undefined || workspaceId(r.session_id) === workspace);
        return { type: 'pane_list', panes: rows.map(paneInfoOf) };
      }
      case 'get':
        return { type: 'pane_info', pane: paneInfoOf(await this.row(this.paneArg(p))) };
      case 'current':
        return { type: 'pane_current', pane: paneInfoOf(await this.row(this.paneArg(p))) };
      case 'split': {
        const row = await this.row(this.paneArg(p));
        const direction = one(p, 'direction') ?? 'right';
        if (direction !== 'right' && direction !== 'down') throw new HerdrError('invalid_params', `direction must be right or down, not ${direction}`);
        const ratio = one(p, 'ratio');
        const size = ratio !== undefined && Number(ratio) > 0 && Number(ratio) < 1 ? ['-l', `${Math.round((1 - Number(ratio)) * 100)}%`] : [];
        const env = (p.options.get('env') ?? []).flatMap((e) => ['-e', e]);
        const cwd = one(p, 'cwd');
        const created = (await this.tmuxOk(['split-window', direction === 'right' ? '-h' : '-v', ...(p.options.has('focus') ? [] : ['-d']), ...size, '-t', row.pane_id, ...(cwd ? ['-c', cwd] : []), '-e', 'HERDR_ENV=1', ...env, '-P', '-F', '#{pane_id}'])).trim();
        const newRow = (await this.rows((r) => r.pane_id === created))[0];
        if (!newRow) throw new HerdrError('internal_error', 'the new pane vanished');
        return { type: 'pane_info', pane: paneInfoOf(newRow) };
      }
      case 'run':
      case 'send-text': {
        const row = await this.row(p.positionals[0] ?? '');
        const text = p.positionals.slice(1).join(' ');
        if (verb === 'run') {
          // Submitted as a paste (bracketed when the program asked) and Enter, as herdr's pane run does.
          await this.tmuxOk(['set-buffer', '-b', 'switchboard-herdr', text, ';', 'paste-buffer', '-p', '-d', '-b', 'switchboard-herdr', '-t', row.pane_id, ';', 'send-keys', '-t', row.pane_id, 'Enter']);
        } else await this.tmuxOk(['send-keys', '-l', '-t', row.pane_id, text]);
        return { type: 'ok' };
      }
      case 'send-keys': {
        const row = await this.row(p.positionals[0] ?? '');
        await this.tmuxOk(['send-keys', '-t', row.pane_id, ...p.positionals.slice(1).map(tmuxKeyOf)]);
        return { type: 'ok' };
      }
      case 'read': {
        const row = await this.row(p.positionals[0] ?? '');
        const source = (one(p, 'source') ?? 'recent').replace('_', '-');
        const ansi = p.options.has('ansi') || one(p, 'format') === 'ansi';
        const lines = one(p, 'lines');
        const args = ['capture-pane', '-p', '-t', row.pane_id];
        if (ansi && source !== 'detection') args.push('-e');
        if (source === 'recent' || source === 'recent-unwrapped') args.push('-S', `-${lines ?? '80'}`);
        if (source === 'recent-unwrapped') args.push('-J');
        let text = await this.tmuxOk(args);
        text = text.replace(/\n+$/, '\n');
        if (lines !== undefined && (source === 'visible' || source === 'detection')) text = `${text.split('\n').filter((_, i, all) => i < all.length - 1).slice(-Number(lines)).join('\n')}\n`;
        return text;
      }
      case 'close': {
        const row = await this.row(p.positionals[0] ?? '');
        await this.tmuxOk(['kill-pane', '-t', row.pane_id]);
        return { type: 'ok' };
      }
      case 'process-info': {
        const row = await this.row(this.paneArg(p));
        const fgPid = Number(row.switchboard_foreground_pid) || Number(row.pane_pid);
        return {
          type: 'pane_process_info',
          process_info: {
            pane_id: herdrPaneId(row),
            shell_pid: Number(row.pane_pid) || null,
            foreground_process_group_id: fgPid || null,
            foreground_processes: row.pane_current_command ? [{ pid: fgPid, name: row.pane_current_command, cwd: row.pane_current_path || null }] : [],
            tty: row.pane_tty || null,
          },
        };
      }
      case 'report-agent': {
        const row = await this.row(p.positionals[0] ?? '');
        const state = one(p, 'state') ?? 'unknown';
        if (!AGENT_STATES.includes(state as AgentStatus)) throw new HerdrError('invalid_params', `unknown state ${state}`);
        await this.tmuxOk(['set-option', '-p', '-t', row.pane_id, '@herdr_agent', one(p, 'agent') ?? '', ';', 'set-option', '-p', '-t', row.pane_id, '@herdr_status', state]);
        return { type: 'ok' };
      }
      case 'release-agent': {
        const row = await this.row(p.positionals[0] ?? '');
        await this.tmuxOk(['set-option', '-p', '-u', '-t', row.pane_id, '@herdr_agent', ';', 'set-option', '-p', '-u', '-t', row.pane_id, '@herdr_status']);
        return { type: 'ok' };
      }
      case 'rename': {
        const row = await this.row(p.positionals[0] ?? '');
        const label = p.options.has('clear') ? '' : (p.positionals[1] ?? '');
        await this.tmuxOk(['set-option', '-p', '-t', row.pane_id, '@herdr_label', label, ';', 'select-pane', '-t', row.pane_id, '-T', label]);
        return { type: 'ok' };
      }
      case 'report-agent-session':
      case 'report-metadata':
      case 'clear-agent-authority':
      case 'focus':
      case 'zoom':
        await this.row(this.paneArg(p));
        return { type: 'ok' };
      default:
        throw new HerdrError('unsupported', `herdr pane ${verb} is not supported by the Switchboard front end`);
    }
  }
}
