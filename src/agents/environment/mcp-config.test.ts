import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { installMcpServer, mcpConfigFile, removeMcpServer, withoutCodexTable } from './mcp-config.js';

const server = { command: '/usr/bin/node', args: ['/opt/switchboard/dist/cli/main.js', 'mcp'] };
const homes: string[] = [];
const home = (): string => {
  const dir = mkdtempSync(path.join(tmpdir(), 'sb-mcp-config-'));
  homes.push(dir);
  return dir;
};
afterEach(() => {
  for (const dir of homes.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('Switchboard\'s MCP server in an agent CLI\'s configuration', () => {
  it('adds it to Claude Code\'s ~/.claude.json, keeps everything else, and takes it out again', () => {
    const h = home();
    writeFileSync(path.join(h, '.claude.json'), JSON.stringify({ theme: 'dark', mcpServers: { other: { command: 'x' } } }));
    const added = installMcpServer('claude', h, server);
    expect(added).toEqual({ file: path.join(h, '.claude.json'), changed: true });
    const config = JSON.parse(readFileSync(added.file, 'utf8')) as Record<string, unknown>;
    expect(config).toEqual({ theme: 'dark', mcpServers: { other: { command: 'x' }, switchboard: { type: 'stdio', command: server.command, args: server.args, env: {} } } });
    expect(installMcpServer('claude', h, server).changed).toBe(false);
    expect(removeMcpServer('claude', h)).toEqual({ file: added.file, changed: true });
    expect(JSON.parse(readFileSync(added.file, 'utf8'))).toEqual({ theme: 'dark', mcpServers: { other: { command: 'x' } } });
    expect(removeMcpServer('claude', h).changed).toBe(false);
  });

  it('writes Codex\'s table under CODEX_HOME with the variables it must pass, and removes only that table', () => {
    const h = home();
    const codexHome = path.join(h, 'codex-home');
    mkdirSync(codexHome);
    writeFileSync(path.join(codexHome, 'config.toml'), 'model = "gpt"\n\n[mcp_servers.other]\ncommand = "x"\n');
    const added = installMcpServer('codex', h, server, { CODEX_HOME: codexHome });
    expect(added.file).toBe(path.join(codexHome, 'config.toml'));
    const text = readFileSync(added.file, 'utf8');
    expect(text).toContain('[mcp_servers.other]\ncommand = "x"');
    expect(text).toContain('[mcp_servers.switchboard]\ncommand = "/usr/bin/node"\nargs = ["/opt/switchboard/dist/cli/main.js", "mcp"]');
    expect(text).toContain('env_vars = ["SWITCHBOARD_RPC_HOST"');
    // Installing again replaces the table, never doubles it.
    installMcpServer('codex', h, { ...server, command: '/other/node' }, { CODEX_HOME: codexHome });
    expect(readFileSync(added.file, 'utf8').match(/\[mcp_servers\.switchboard\]/g)).toHaveLength(1);
    removeMcpServer('codex', h, { CODEX_HOME: codexHome });
    expect(readFileSync(added.file, 'utf8')).toBe('model = "gpt"\n\n[mcp_servers.other]\ncommand = "x"\n');
    expect(withoutCodexTable('[mcp_servers.switchboard]\na = 1\n[mcp_servers.switchboard.env]\nB = "c"\n[x]\ny = 2')).toBe('[x]\ny = 2');
  });

  it('uses Gemini CLI\'s and OpenCode\'s own keys and files', () => {
    const h = home();
    const gemini = installMcpServer('gemini', h, server);
    expect(gemini.file).toBe(path.join(h, '.gemini', 'settings.json'));
    // The variables the server finds its daemon by, named so that Gemini passes them (it drops those that look secret).
    const passed = { SWITCHBOARD_RPC_HOST: '${SWITCHBOARD_RPC_HOST:-}', SWITCHBOARD_RPC_PORT: '${SWITCHBOARD_RPC_PORT:-}', SWITCHBOARD_RPC_SOCKET: '${SWITCHBOARD_RPC_SOCKET:-}', SWITCHBOARD_RPC_TOKEN: '${SWITCHBOARD_RPC_TOKEN:-}', SWITCHBOARD_PANE_ID: '${SWITCHBOARD_PANE_ID:-}', SWITCHBOARD_HOME: '${SWITCHBOARD_HOME:-}', SWITCHBOARD_TEAM_ROLE: '${SWITCHBOARD_TEAM_ROLE:-}' };
    expect(JSON.parse(readFileSync(gemini.file, 'utf8'))).toEqual({ mcpServers: { switchboard: { command: server.command, args: server.args, env: passed } } });
    const opencode = installMcpServer('opencode', h, server, { XDG_CONFIG_HOME: path.join(h, 'xdg') });
    expect(opencode.file).toBe(path.join(h, 'xdg', 'opencode', 'opencode.json'));
    expect(JSON.parse(readFileSync(opencode.file, 'utf8'))).toEqual({ mcp: { switchboard: { type: 'local', command: [server.command, ...server.args], enabled: true } } });
    expect(mcpConfigFile('opencode', h)).toBe(path.join(h, '.config', 'opencode', 'opencode.json'));
  });

  it('refuses a file that is not plain JSON, naming it, and leaves it as it was', () => {
    const h = home();
    const file = path.join(h, '.gemini', 'settings.json');
    mkdirSync(path.dirname(file));
    writeFileSync(file, '{ // a comment\n "theme": "x" }');
    expect(() => installMcpServer('gemini', h, server)).toThrow(expect.objectContaining({ code: 'INVALID_PARAMS', message: expect.stringContaining(file) as unknown }) as Error);
    expect(readFileSync(file, 'utf8')).toBe('{ // a comment\n "theme": "x" }');
    expect(removeMcpServer('opencode', h).changed).toBe(false);
    expect(existsSync(mcpConfigFile('opencode', h))).toBe(false);
  });
});
