/**
 * `switchboard mcp` answers a call that comes long after the CLI started it. Agent CLIs start their
 * MCP servers when they start, and the first call may come a turn later; the daemon closes a
 * connection that sends no authenticated request within its limit (10 s by default). A connection
 * made at the server's start was gone when Codex called `ask` ("connection closed by the daemon");
 * the client library now shows its token as it connects, and the server connects at the first call
 * and again after a connection closed (a daemon restarted). Here the daemon's
 * limit is short, and the test waits for the daemon to close an idle connection opened after the
 * server's start (an event, not a guessed delay) before it calls.
 */
import net from 'node:net';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { describe, expect, it } from 'vitest';
import { CLI, cleanEnv } from '../support/cli.js';
import { useTestDaemon } from '../support/daemon.js';

const ctx = useTestDaemon({ limits: { unauthenticatedTimeoutMs: 300 } });

/** Resolves once the daemon closes a connection that never sends a request. */
function idleConnectionClosed(): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(path.join(ctx.home, 'switchboard.sock'));
    socket.on('error', reject);
    socket.on('close', () => resolve());
  });
}

describe('switchboard mcp on stdio', { timeout: 60_000 }, () => {
  it('answers a first call made after the daemon has closed the connections left idle since its start', async () => {
    const mcp = new Client({ name: 'late-call-test', version: '1.0.0' });
    const transport = new StdioClientTransport({ command: process.execPath, args: [CLI, '--home', ctx.home, 'mcp'], env: cleanEnv() as Record<string, string>, cwd: ctx.work, stderr: 'pipe' });
    await mcp.connect(transport);
    try {
      // Opened after the server answered initialize, so any connection it made at its start is older
      // and was closed no later than this one.
      await idleConnectionClosed();
      const listed = await mcp.callTool({ name: 'list_agents', arguments: {} });
      expect(listed.isError, JSON.stringify(listed)).toBeFalsy();
      // And again: one connection serves the calls that follow.
      expect((await mcp.callTool({ name: 'list_agents', arguments: {} })).isError).toBeFalsy();
    } finally {
      await mcp.close();
    }
  });
});
