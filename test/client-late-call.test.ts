/**
 * A library client connected now and called later still works. The daemon closes a connection that
 * makes no authenticated request within its limit (10 s by default; short here), which is right for
 * strangers and wrong for a client that simply has nothing to ask yet (an MCP server started with
 * its CLI, called a turn later). connect() shows the token at once. The test waits for the daemon
 * to close a raw connection opened after the client's (an event, not a guessed delay) before it calls.
 */
import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { connect } from '../src/index.js';
import { cleanEnv } from './support/cli.js';
import { useTestDaemon } from './support/daemon.js';

const t = useTestDaemon({ limits: { unauthenticatedTimeoutMs: 300 } });

/** Resolves once the daemon closes a connection that never sends a request. */
function idleConnectionClosed(): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(t.daemon.socketPath ?? '');
    socket.on('error', reject);
    socket.on('close', () => resolve());
  });
}

describe('a client that calls long after it connected', () => {
  it('keeps its connection past the limit for unauthenticated ones, over the socket and over TCP', async () => {
    const local = await connect({ home: t.home, env: cleanEnv() });
    const tcp = await connect({ home: t.home, env: cleanEnv(), preferTcp: true });
    const closed: string[] = [];
    local.onClose(() => closed.push('local'));
    tcp.onClose(() => closed.push('tcp'));
    try {
      await idleConnectionClosed();
      expect((await local.list()).panes).toEqual([]);
      expect((await tcp.ping()).pong).toBe(true);
      expect(closed).toEqual([]);
    } finally {
      local.close();
      tcp.close();
    }
  });
});
