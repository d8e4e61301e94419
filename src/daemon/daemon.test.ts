import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { connect } from '../client/index.js';
import { resultSchemas } from '../protocol/methods.js';
import { readRuntimeFile, runtimeFilePath } from './runtime-file.js';
import { Daemon } from './daemon.js';

/**
 * The composition root in-process, on its local socket only (no TCP port, no pane started: the
 * process tests under test/ drive real panes and CLIs).
 */
describe('the daemon', () => {
  const homes: string[] = [];
  const daemons: Daemon[] = [];
  afterEach(async () => {
    for (const daemon of daemons.splice(0)) await daemon.close();
    for (const home of homes.splice(0)) rmSync(home, { recursive: true, force: true });
  });

  async function start(): Promise<Daemon> {
    const home = mkdtempSync(path.join(tmpdir(), 'sb-daemon-'));
    homes.push(home);
    const daemon = await Daemon.start({ home, port: false, checkResults: true });
    daemons.push(daemon);
    return daemon;
  }

  it('builds the services once, and every transport works on them', async () => {
    const daemon = await start();
    expect(daemon.services.panes).toBe(daemon.panes);
    expect(daemon.services.logs).toBe(daemon.logs);
    expect(daemon.services.daemon).toBe(daemon);
    daemon.logs.logs.open({ id: 'r1', kind: 'run', title: 'a run', spill: false });
    const client = await connect({ home: daemon.home, env: {} });
    try {
      const { sessions } = await client.logSessions();
      expect(sessions.map((s) => s.session_id)).toEqual(['r1']);
      const info = await client.info();
      expect(resultSchemas.info.safeParse(info).success).toBe(true);
      expect(info.transports).toEqual({ socket: daemon.socketPath });
      await expect(client.dashboardLogin()).rejects.toMatchObject({ code: 'CONFLICT', rpcErrorCode: -32013 });
    } finally {
      client.close();
    }
  });

  it('publishes a private runtime file with the owner’s token, and removes it when it stops', async () => {
    const daemon = await start();
    const file = runtimeFilePath(daemon.home);
    if (process.platform !== 'win32') expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readRuntimeFile(daemon.home)).toMatchObject({ pid: process.pid, token: daemon.token, socket: daemon.socketPath });
    await daemon.close();
    expect(readRuntimeFile(daemon.home)).toBeUndefined();
  });
});
