/**
 * Switchboard's MCP server in an agent CLI's own configuration: Claude Code's ~/.claude.json
 * (`mcpServers`), Codex's config.toml (`[mcp_servers.NAME]`, under CODEX_HOME), Gemini CLI's
 * ~/.gemini/settings.json (`mcpServers`), OpenCode's opencode.json (`mcp`, or the JSON in
 * OPENCODE_CONFIG_CONTENT). Used for an agent's isolated HOME at every sandboxed start, and for the
 * user's own HOME only when asked (`switchboard mcp install|remove`). A file that cannot be read as
 * what it should be is refused with its name, never overwritten; everything else in it is kept.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { SwitchboardError } from '../../core/errors.js';
import type { McpServerCommand } from '../profiles/profile.js';

/** The server's name in every CLI's configuration. */
export const MCP_SERVER_NAME = 'switchboard';
export const MCP_CONFIG_AGENTS = ['claude', 'codex', 'gemini', 'opencode'] as const;
export type McpConfigAgent = (typeof MCP_CONFIG_AGENTS)[number];

/** Set in a team run's agents: `planner` or `worker`, the team tools their MCP server lists. */
export const TEAM_ROLE_ENV = 'SWITCHBOARD_TEAM_ROLE';

/** The variables `switchboard mcp` needs to reach its daemon as the pane it runs in (CLIs that filter their servers' environment are told to pass these). */
export const MCP_PASSED_ENV = ['SWITCHBOARD_RPC_HOST', 'SWITCHBOARD_RPC_PORT', 'SWITCHBOARD_RPC_SOCKET', 'SWITCHBOARD_RPC_TOKEN', 'SWITCHBOARD_PANE_ID', 'SWITCHBOARD_HOME', TEAM_ROLE_ENV];

export function isMcpConfigAgent(name: string): name is McpConfigAgent {
  return (MCP_CONFIG_AGENTS as readonly string[]).includes(name);
}

/** The file `agent` keeps its MCP servers in, for a CLI run with `home` and `env`. */
export function mcpConfigFile(agent: McpConfigAgent, home: string, env: Readonly<Record<string, string | undefined>> = {}): string {
  switch (agent) {
    case 'claude':
      return path.join(home, '.claude.json');
    case 'codex':
      return path.join(env.CODEX_HOME ?? path.join(home, '.codex'), 'config.toml');
    case 'gemini':
      return path.join(home, '.gemini', 'settings.json');
    case 'opencode':
      return path.join(env.XDG_CONFIG_HOME ?? path.join(home, '.config'), 'opencode', 'opencode.json');
  }
}

/** The server's entry in a JSON configuration. */
function jsonServerEntry(agent: Exclude<McpConfigAgent, 'codex'>, server: McpServerCommand): Record<string, unknown> {
  if (agent === 'opencode') return { type: 'local', command: [server.command, ...server.args], enabled: true };
  if (agent === 'claude') return { type: 'stdio', command: server.command, args: server.args, env: {} };
  // Gemini CLI gives its MCP servers its environment without the variables whose names look secret
  // (SWITCHBOARD_RPC_TOKEN), and the server could not find its daemon. Variables named in the entry
  // are passed as given, and Gemini expands `${NAME:-}` in its settings from its own environment
  // when it loads them (empty where the variable is unset).
  return { command: server.command, args: server.args, env: Object.fromEntries(MCP_PASSED_ENV.map((name) => [name, `\${${name}:-}`])) };
}

const tomlString = (s: string): string => JSON.stringify(s);

/** Codex's table for the server (env_vars: Codex passes its servers only a few variables unless told). */
function codexServerTable(server: McpServerCommand): string {
  return [
    `[mcp_servers.${MCP_SERVER_NAME}]`,
    `command = ${tomlString(server.command)}`,
    `args = [${server.args.map(tomlString).join(', ')}]`,
    `env_vars = [${MCP_PASSED_ENV.map(tomlString).join(', ')}]`,
    'startup_timeout_sec = 30',
    'tool_timeout_sec = 3600',
    '',
  ].join('\n');
}

/** `text` (a config.toml) without the server's table; the rest as it was. */
export function withoutCodexTable(text: string): string {
  const lines = text.split('\n');
  const out: string[] = [];
  let inside = false;
  for (const line of lines) {
    const header = /^\s*\[([^\]]+)\]\s*(#.*)?$/.exec(line);
    if (header) inside = header[1]?.trim() === `mcp_servers.${MCP_SERVER_NAME}` || header[1]?.trim().startsWith(`mcp_servers.${MCP_SERVER_NAME}.`) === true;
    if (!inside) out.push(line);
  }
  return out.join('\n');
}

function readJsonObject(file: string): Record<string, unknown> {
  if (!existsSync(file)) return {};
  const text = readFileSync(file, 'utf8');
  if (text.trim() === '') return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new SwitchboardError('INVALID_PARAMS', `${file} is not plain JSON (${(err as Error).message}); add the server by hand, it was left as it was`, { file });
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new SwitchboardError('INVALID_PARAMS', `${file} is not a JSON object; it was left as it was`, { file });
  return parsed as Record<string, unknown>;
}

/** Writes through a temporary file and a rename, so a crash leaves the old file or the new one, never half. */
function writeAtomically(file: string, text: string): void {
  mkdirSync(path.dirname(file), { recursive: true });
  const temp = `${file}.switchboard-${process.pid}.tmp`;
  writeFileSync(temp, text, { mode: 0o600 });
  renameSync(temp, file);
}

const KEY: Record<Exclude<McpConfigAgent, 'codex'>, string> = { claude: 'mcpServers', gemini: 'mcpServers', opencode: 'mcp' };

/** A JSON configuration object with the server added (or replaced), or taken out (`server` undefined). */
export function withJsonServer(agent: Exclude<McpConfigAgent, 'codex'>, config: Record<string, unknown>, server: McpServerCommand | undefined): Record<string, unknown> {
  const key = KEY[agent];
  const existing = config[key];
  const servers: Record<string, unknown> = typeof existing === 'object' && existing !== null && !Array.isArray(existing) ? { ...(existing as Record<string, unknown>) } : {};
  const { [MCP_SERVER_NAME]: _old, ...others } = servers;
  return { ...config, [key]: server ? { ...others, [MCP_SERVER_NAME]: jsonServerEntry(agent, server) } : others };
}

/** Adds (or replaces) the server in `agent`'s configuration file; says which file and whether it changed. */
export function installMcpServer(agent: McpConfigAgent, home: string, server: McpServerCommand, env: Readonly<Record<string, string | undefined>> = {}): { file: string; changed: boolean } {
  return editConfig(agent, mcpConfigFile(agent, home, env), server);
}

/** Takes the server out of `agent`'s configuration file; says which file and whether it changed. */
export function removeMcpServer(agent: McpConfigAgent, home: string, env: Readonly<Record<string, string | undefined>> = {}): { file: string; changed: boolean } {
  return editConfig(agent, mcpConfigFile(agent, home, env), undefined);
}

function editConfig(agent: McpConfigAgent, file: string, server: McpServerCommand | undefined): { file: string; changed: boolean } {
  const before = existsSync(file) ? readFileSync(file, 'utf8') : undefined;
  let after: string;
  if (agent === 'codex') {
    const rest = withoutCodexTable(before ?? '').replace(/\n+$/, '');
    after = server ? `${rest === '' ? '' : `${rest}\n\n`}${codexServerTable(server)}` : rest === '' ? '' : `${rest}\n`;
  } else {
    const config = readJsonObject(file);
    const servers = config[KEY[agent]];
    const present = typeof servers === 'object' && servers !== null && Object.hasOwn(servers, MCP_SERVER_NAME);
    if (!server && !present) return { file, changed: false };
    after = `${JSON.stringify(withJsonServer(agent, config, server), null, 2)}\n`;
  }
  if (before === undefined && server === undefined) return { file, changed: false };
  if (after === before) return { file, changed: false };
  writeAtomically(file, after);
  return { file, changed: true };
}
