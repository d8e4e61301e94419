/**
 * Defects 4, 5 and 6 of issue 11, and the owner-lockout risk: one set of connection limits for
 * every transport (the dashboard's /ws had none), budgets on the dashboard's port and for
 * unauthenticated connections (strangers used every descriptor, and 256 of them locked the owner
 * out of the private socket), and a bounded log for what strangers can make the daemon write.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { connect } from '../../src/index.js';
import { RawClient, resultOf, startTestDaemon } from '../support/daemon.js';
import { cleanEnv, runCli, spawnCli } from '../support/cli.js';
import { tempDir } from '../support/shell.js';
import { flood } from '../support/flood.js';
import { daemonPidOf, exitOf, killMarked, until, waitForOutput } from '../support/processes.js';
import type { Daemon } from '../../src/daemon/index.js';

const web = tempDir('sb-web-');
mkdirSync(path.join(web.dir, 'assets'));
writeFileSync(path.join(web.dir, 'index.html'), '<!doctype html><title>Switchboard</title>');
afterAll(() => web.cleanup());

/** Logs in as a browser does: the cookie, and the page key from the redirect's fragment. */
async function login(loginUrl: string): Promise<{ cookie: string; key: string }> {
  const res = await fetch(loginUrl, { redirect: 'manual' });
  expect(res.status).toBe(302);
  return { cookie: (res.headers.get('set-cookie') ?? '').split(';')[0] ?? '', key: /key=([\w-]+)/.exec(res.headers.get('location') ?? '')?.[1] ?? '' };
}

function openRpcSocket(port: number, auth: { cookie: string; key: string }): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/ws`, ['switchboard', `sb-key.${auth.key}`], { headers: { cookie: auth.cookie, origin: `http://127.0.0.1:${port}` } });
    ws.once('open', () => resolve(ws));
    ws.once('unexpected-response', (_req, res) => reject(new Error(`HTTP ${String(res.statusCode)}`)));
    ws.once('error', reject);
  });
}

/** Replies (by id, in arrival order) on a dashboard socket. */
function replies(ws: WebSocket): unknown[] {
  const got: unknown[] = [];
  ws.on('message', (data: Buffer) => got.push(JSON.parse(data.toString('utf8'))));
  return got;
}

const call = (ws: WebSocket, id: number | string, method: string, params: Record<string, unknown> = {}): void => ws.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));

describe('one set of limits for every transport: the dashboard\u2019s /ws', () => {
  it('disconnects a /ws client that never reads its replies, and serves the others meanwhile', async () => {
    const own = await startTestDaemon({ dashboard: { port: 0, webRoot: web.dir }, limits: { maxOutboundBytes: 8 * 1024 * 1024 } });
    try {
      const { daemon } = own;
      const port = daemon.dashboard?.port ?? 0;
      const pane = daemon.panes.create({ argv: ['bash', '-c', 'for i in $(seq 1 20000); do echo "history line $i with some padding to make it longer"; done; echo END; sleep 60'] });
      const owner = await connect({ home: own.home, env: cleanEnv() });
      await owner.waitFor(pane.id, { pattern: '^END$', flags: 'm' });
      const auth = await login(daemon.dashboardLoginUrl());
      const reader = await openRpcSocket(port, auth);
      const stalled = await openRpcSocket(port, auth);
      const before = daemon.dashboardServer?.clientCount ?? 0;
      stalled.pause();
      // 300 replies of about 600 KB each, in batches of 100: 180 MB if the daemon queued them all.
      for (let b = 0; b < 3; b++) {
        stalled.send(JSON.stringify(Array.from({ length: 100 }, (_, i) => ({ jsonrpc: '2.0', id: b * 100 + i, method: 'get_text', params: { pane_id: pane.id, lines: 10_000 } }))));
      }
      await until(() => (daemon.dashboardServer?.clientCount ?? 0) === before - 1, 'the daemon to drop the client that does not read');
      const got = replies(reader);
      call(reader, 'p', 'ping');
      await until(() => got.length === 1, 'the other client\u2019s reply');
      expect(got[0]).toMatchObject({ id: 'p', result: { pong: true } });
      stalled.terminate();
      reader.close();
      owner.close();
    } finally {
      await own.stop();
    }
  });

  it('caps the requests in flight on /ws as on TCP: 100 wait_for, and a ping behind them waits for room', async () => {
    const own = await startTestDaemon({ dashboard: { port: 0, webRoot: web.dir } });
    try {
      const { daemon } = own;
      const pane = daemon.panes.create({ argv: ['sleep', '60'] });
      const ws = await openRpcSocket(daemon.dashboard?.port ?? 0, await login(daemon.dashboardLoginUrl()));
      const got = replies(ws) as { id: number | string }[];
      for (let i = 0; i < 100; i++) call(ws, i, 'wait_for', { pane_id: pane.id, pattern: 'never', timeout_ms: 500 });
      call(ws, 'ping', 'ping');
      await until(() => got.some((m) => m.id === 'ping'), 'the ping\u2019s reply');
      // Without a cap the ping is answered at once, before any wait ends; with 64 in flight it
      // starts only once the first 64 are done.
      expect(got.findIndex((m) => m.id === 'ping')).toBeGreaterThanOrEqual(64);
      ws.close();
    } finally {
      await own.stop();
    }
  });
});

describe('budgets: strangers never lock the owner out', () => {
  it('gives unauthenticated TCP connections a small budget of their own; the owner gets in over TCP and the socket', async () => {
    // Strangers are not timed out during this test: only the budget can make room.
    const own = await startTestDaemon({ limits: { unauthenticatedTimeoutMs: 120_000 } });
    try {
      const { daemon } = own;
      const strangers = await Promise.all(Array.from({ length: 300 }, () => RawClient.connect(daemon, 'tcp')));
      for (const transport of ['tcp', 'socket'] as const) {
        const owner = await RawClient.connect(daemon, transport);
        expect(resultOf(await owner.call(daemon.token, 'ping'))).toMatchObject({ pong: true });
        owner.close();
      }
      await until(() => strangers.filter((s) => s.isOpen).length <= 32, 'the stranger budget to hold');
      for (const s of strangers) s.close();
    } finally {
      await own.stop();
    }
  });
});

describe.runIf(process.platform === 'linux')('a daemon process under a flood of connections', () => {
  const homes: { dir: string; cleanup: () => void }[] = [];
  afterAll(async () => {
    for (const home of homes) {
      await runCli(home.dir, ['down']);
      await killMarked(home.dir);
      home.cleanup();
    }
  });

  async function daemonProcess(): Promise<{ home: string; child: ReturnType<typeof spawnCli>; log: () => string; dashboardPort: number; rpcPort: number; loginUrl: string }> {
    const home = tempDir('sb-flood-');
    homes.push(home);
    const child = spawnCli(home.dir, ['daemon', '--port', '0', '--dashboard-port', '0', '--log-level', 'debug']);
    let log = '';
    child.stderr?.on('data', (d: Buffer) => (log += d.toString('utf8')));
    const line = await waitForOutput(child, /dashboard: open \S+/);
    await daemonPidOf(home.dir);
    const loginUrl = line.slice('dashboard: open '.length);
    const info = await (await connect({ home: home.dir, env: cleanEnv() })).info();
    return { home: home.dir, child, log: () => log, dashboardPort: info.transports.dashboard?.port ?? 0, rpcPort: info.transports.tcp?.port ?? 0, loginUrl };
  }

  it('holds 20,000 idle dashboard connections to a budget, closes them unauthenticated within seconds, and the owner works throughout', async () => {
    const d = await daemonProcess();
    const floods = [flood('idle', d.dashboardPort, 10_000), flood('idle', d.dashboardPort, 10_000)];
    try {
      await Promise.all(floods.map((f) => f.done));
      expect(floods.reduce((n, f) => n + f.state.opened, 0)).toBe(20_000);
      // Meanwhile: RPC over TCP and the private socket, a new pane, the dashboard's login and /ws.
      for (const preferTcp of [true, false]) {
        const owner = await connect({ home: d.home, env: cleanEnv(), preferTcp });
        const { pane_id } = await owner.createPane({ argv: ['sleep', '30'] });
        expect((await owner.isAlive(pane_id)).alive).toBe(true);
        await owner.remove(pane_id);
        owner.close();
      }
      const ws = await openRpcSocket(d.dashboardPort, await login(d.loginUrl));
      const got = replies(ws);
      call(ws, 1, 'ping');
      await until(() => got.length === 1, 'the /ws ping');
      ws.close();
      // None of the strangers is left once the authentication deadline has passed.
      await until(() => floods.every((f) => f.state.open === 0), 'every idle connection to be closed', 30_000);
    } finally {
      for (const f of floods) f.stop();
    }
  });

  it('writes a handful of lines, not thousands, for 5,000 connections reset before they were accepted', async () => {
    const d = await daemonProcess();
    const before = d.log().split('\n').length;
    const resets = flood('reset', d.rpcPort, 5_000);
    await resets.done;
    resets.stop();
    // The daemon still answers; then count what the resets made it write.
    const owner = await connect({ home: d.home, env: cleanEnv(), preferTcp: true });
    expect((await owner.ping()).pong).toBe(true);
    owner.close();
    const lines = d.log().split('\n').slice(before - 1);
    expect(lines.filter((l) => /refused|peer=undefined/.test(l)).length).toBeLessThanOrEqual(6);
    expect(lines.filter((l) => /connection/.test(l)).length).toBeLessThan(50);
  });

  it('says once, as information, that a port was busy', async () => {
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const busy = (blocker.address() as net.AddressInfo).port;
    const home = tempDir('sb-busy-');
    homes.push(home);
    const child = spawnCli(home.dir, ['daemon', '--port', String(busy), '--no-dashboard', '--log-level', 'debug']);
    let log = '';
    child.stderr?.on('data', (d: Buffer) => (log += d.toString('utf8')));
    await waitForOutput(child, /listening on/);
    child.kill('SIGTERM');
    await exitOf(child);
    blocker.close();
    const mentions = log.split('\n').filter((l) => l.includes(`=${busy}`) || /EADDRINUSE|port busy|server error/.test(l));
    expect(mentions).toHaveLength(1);
    expect(mentions[0]).toMatch(/ info +port busy, using the next free one/);
  });
});

export type { Daemon };
