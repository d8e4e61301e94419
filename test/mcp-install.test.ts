/**
 * `switchboard mcp install|remove --agent NAME`: the user's own configuration of that CLI changes
 * only on request, and the command says which file it changed.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CLI, cleanEnv, runCli } from './support/cli.js';
import { tempDir } from './support/shell.js';

const made = tempDir('sb-mcp-install-');
afterAll(() => made.cleanup());

describe('switchboard mcp install and remove', () => {
  it('adds the server to the named CLI\'s own file, says which, and takes it out again', async () => {
    const env = { ...cleanEnv(), HOME: made.dir };
    const sbHome = path.join(made.dir, '.switchboard');
    const added = await runCli(sbHome, ['mcp', 'install', '--agent', 'claude'], { env });
    const file = path.join(made.dir, '.claude.json');
    expect(added, added.stderr).toMatchObject({ code: 0, stdout: `added the switchboard MCP server to ${file}\n` });
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ mcpServers: { switchboard: { type: 'stdio', command: process.execPath, args: [CLI, 'mcp'], env: {} } } });
    expect((await runCli(sbHome, ['mcp', 'install', '--agent', 'claude'], { env })).stdout).toBe(`${file} already has the switchboard MCP server\n`);
    const removed = await runCli(sbHome, ['mcp', 'remove', '--agent', 'claude'], { env });
    expect(removed).toMatchObject({ code: 0, stdout: `removed the switchboard MCP server from ${file}\n` });
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ mcpServers: {} });
    const bad = await runCli(sbHome, ['mcp', 'install', '--agent', 'vim'], { env });
    expect(bad.code).toBe(64);
    expect(bad.stderr).toMatch(/--agent must be one of claude, codex, gemini, opencode/);
  });
});
