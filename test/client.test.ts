import { describe, expect, it } from 'vitest';
import { connect, RpcError, SwitchboardError } from '../src/index.js';
import { useTestDaemon } from './support/daemon.js';
import { BASH_ARGV, BASH_ENV, tempDir } from './support/shell.js';
import { cleanEnv } from './support/cli.js';
import { until } from './support/processes.js';

const t = useTestDaemon();

describe('TypeScript client', () => {
  it('finds the daemon from the runtime file and calls typed methods', async () => {
    const client = await connect({ home: t.home, env: cleanEnv() });
    expect(client.endpoint.source).toBe('runtime file');
    expect(client.endpoint.socketPath).toBe(t.daemon.socketPath);
    const { pane_id } = await client.createPane({ argv: [...BASH_ARGV], env: { ...BASH_ENV }, cwd: t.work, title: 'lib' });
    expect((await client.waitFor(pane_id, { pattern: 'PROMPT\\$' })).matched).toBe(true);
    await client.sendText(pane_id, 'echo from-the-library', { addNewline: true });
    // Wait for the echoed line and the prompt bash prints after it: the line alone can be on screen
    // a moment before the prompt is, and the read below expects both.
    const waited = await client.waitFor(pane_id, { pattern: '^from-the-library\\nPROMPT\\$', flags: 'm' });
    expect(waited).toMatchObject({ matched: true, reason: 'matched', match: 'from-the-library\nPROMPT$' });
    expect((await client.getText(pane_id, { lines: 2 })).text).toBe('from-the-library\nPROMPT$');
    expect((await client.list()).panes.map((p) => p.pane_id)).toContain(pane_id);
    await client.remove(pane_id);
    client.close();
  });

  it('prefers TCP when asked, and finds the daemon from a pane environment', async () => {
    const tcp = await connect({ home: t.home, env: cleanEnv(), preferTcp: true });
    expect((await tcp.ping()).pong).toBe(true);
    tcp.close();
    const fromEnv = await connect({
      env: { SWITCHBOARD_RPC_HOST: '127.0.0.1', SWITCHBOARD_RPC_PORT: String(t.daemon.tcp?.port), SWITCHBOARD_RPC_TOKEN: t.daemon.token },
    });
    expect(fromEnv.endpoint.source).toBe('environment');
    expect((await fromEnv.info()).pid).toBe(process.pid);
    fromEnv.close();
  });

  it('gives panes the variables to call their daemon back (SWITCHBOARD_RPC_* and the seed ENSO_RPC_*)', async () => {
    const client = await connect({ home: t.home, env: cleanEnv() });
    const { pane_id } = await client.createPane({
      argv: ['sh', '-c', 'echo "$SWITCHBOARD_RPC_HOST:$SWITCHBOARD_RPC_PORT $ENSO_RPC_HOST:$ENSO_RPC_PORT ${#SWITCHBOARD_RPC_TOKEN} ${#ENSO_RPC_TOKEN} $SWITCHBOARD_RPC_SOCKET"; sleep 5'],
      cwd: t.work,
    });
    const port = String(t.daemon.tcp?.port);
    const seen = await client.waitFor(pane_id, { pattern: `127\\.0\\.0\\.1:${port} 127\\.0\\.0\\.1:${port} 64 64 /` });
    expect(seen.line).toBe(`127.0.0.1:${port} 127.0.0.1:${port} 64 64 ${t.daemon.socketPath ?? ''}`);
    await client.remove(pane_id);
    client.close();
  });

  it('streams subscriptions to handlers attached before the first notification', async () => {
    const client = await connect({ home: t.home, env: cleanEnv() });
    const { pane_id } = await client.createPane({ argv: ['sh', '-c', 'echo replayed-first; read x; echo "got $x"; exit 9'], cwd: t.work });
    await client.waitFor(pane_id, { pattern: 'replayed-first' });
    let output = '';
    const exited = new Promise<{ exit_code: number | null }>((resolve) => {
      void client.subscribe({ paneId: pane_id, replay: true }, { output: (o) => (output += o.data), exit: resolve });
    });
    await client.sendText(pane_id, 'typed', { addNewline: true });
    expect((await exited).exit_code).toBe(9);
    expect(output).toContain('replayed-first');
    expect(output).toContain('got typed');
    client.close();
  });

  it('sees new panes through a subscription to all panes', async () => {
    const client = await connect({ home: t.home, env: cleanEnv() });
    const created: string[] = [];
    const sub = await client.subscribe({ events: ['exit'] });
    sub.onPaneCreated((p) => created.push(p.pane_id));
    const exits: string[] = [];
    sub.onExit((e) => exits.push(e.pane_id));
    const { pane_id } = await client.createPane({ argv: ['true'], cwd: t.work });
    await until(() => exits.includes(pane_id), 'the exit notification');
    expect(created).toContain(pane_id);
    expect(exits).toContain(pane_id);
    await sub.unsubscribe();
    await client.remove(pane_id);
    client.close();
  });

  it('throws RpcError with the stable code, and a clear error when no daemon runs', async () => {
    const client = await connect({ home: t.home, env: cleanEnv() });
    const err = await client.getText('p00000000').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RpcError);
    expect(err).toMatchObject({ code: 'PANE_NOT_FOUND', rpcErrorCode: -32002, message: 'pane not found: p00000000' });
    client.close();
    await expect(client.ping()).rejects.toMatchObject({ code: 'CONNECTION_FAILED' });
    const nowhere = tempDir();
    const missing = await connect({ home: nowhere.dir, env: cleanEnv() }).catch((e: unknown) => e);
    nowhere.cleanup();
    expect(missing).toBeInstanceOf(SwitchboardError);
    expect(missing).toMatchObject({ code: 'CONNECTION_FAILED', message: 'no daemon running: start one with `switchboard up`' });
    // A wrong token is an error of connect(), where it was given, not of some later call.
    await expect(connect({ home: t.home, env: cleanEnv(), token: 'nope' })).rejects.toMatchObject({ code: 'INVALID_TOKEN', rpcErrorCode: -32001 });
  });
});
