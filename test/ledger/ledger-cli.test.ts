/**
 * `switchboard ledger migrate` and `--ledger` from the built CLI, against a real PostgreSQL
 * server: a home's SQLite ledger copied with its counts printed, twice with nothing doubled; a
 * refusal while a daemon runs on the home; a ledger value that is not one, and a wrong password,
 * each refused with its stable code and never with the password in what is printed; and a daemon
 * given the URL in $SWITCHBOARD_LEDGER that keeps its runs there and hands it to no pane.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RunLedger } from '../../src/ledger/run-ledger.js';
import { cleanEnv, runCli } from '../support/cli.js';
import { startDaemonProcess, startTestDaemon } from '../support/daemon.js';
import { connect } from '../../src/client/index.js';
import { readRuntimeFile } from '../../src/daemon/index.js';
import { isProcessRunning } from '../../src/platform/index.js';
import { until } from '../support/processes.js';
import { recordRun, spec } from '../support/ledger-contract.js';
import { startPostgres, type PostgresServer } from '../support/postgres-server.js';
import { tempDir } from '../support/shell.js';

let server: PostgresServer;
const scratch = tempDir('sb-ledger-cli-');
beforeAll(async () => {
  server = await startPostgres();
});
afterAll(async () => {
  await server.stop();
  scratch.cleanup();
});

/** A home whose SQLite ledger has `runs` ended runs of 3 tokens each (8 events a run) and an ask. */
async function populatedHome(name: string, runs: number): Promise<string> {
  const home = path.join(scratch.dir, name);
  mkdirSync(home, { mode: 0o700 });
  const ledger = RunLedger.openSqlite({ home });
  for (let i = 0; i < runs; i++) recordRun(ledger, spec(), 3);
  await ledger.flush();
  await ledger.asks?.put({ id: 'a1', status: 'done', created_at: 1, ended_at: 2, target_pane: 'p1', asker_pane: null, asker_name: null, delivery: 'none', record: '{"id":"a1"}' });
  await ledger.close();
  return home;
}

async function count(url: string, table: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`)).rows[0]?.n ?? -1;
  } finally {
    await client.end();
  }
}

describe('switchboard ledger migrate', () => {
  it('copies a home’s ledger into PostgreSQL, says what it copied, and copies nothing twice when run again', { timeout: 60_000 }, async () => {
    const home = await populatedHome('home-copied', 5);
    const url = await server.createDatabase();
    const first = await runCli(home, ['ledger', 'migrate', '--to', url]);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toContain('5 runs, 40 events (1 transactions), 1 asks, 0 team runs');
    expect(first.stdout).not.toContain(server.password);
    expect(first.stdout).toContain(`postgres://switchboard:***@127.0.0.1:${server.port}/`);
    const again = await runCli(home, ['ledger', 'migrate', '--json'], { env: { ...cleanEnv(), SWITCHBOARD_LEDGER: url } });
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ status: 'ok', runs: 5, events: 40, asks: 1 });
    expect(await count(url, 'runs')).toBe(5);
    expect(await count(url, 'events')).toBe(40);
    expect(await count(url, 'asks')).toBe(1);
  });

  it('refuses while a daemon runs on the home, with CONFLICT, and copies nothing', { timeout: 60_000 }, async () => {
    const home = await populatedHome('home-busy', 1);
    const daemon = await startTestDaemon({ home, bridge: false });
    try {
      const url = await server.createDatabase();
      const refused = await runCli(home, ['ledger', 'migrate', '--to', url, '--json']);
      expect(refused.code).toBe(1);
      expect(JSON.parse(refused.stdout)).toMatchObject({ status: 'error', error: { code: 'CONFLICT' } });
      expect(refused.stderr).toMatch(/a daemon is running on .* stop it with `switchboard down` first/);
      // Refused before it connected: the database has no ledger tables.
      await expect(count(url, 'runs')).rejects.toThrow(/does not exist/);
    } finally {
      await daemon.stop();
    }
  });

  it('refuses a ledger value that is not sqlite or a postgres:// URL, and a wrong password, without printing the password', { timeout: 60_000 }, async () => {
    const home = await populatedHome('home-refusing', 1);
    const notPostgres = await runCli(home, ['ledger', 'migrate', '--to', 'mysql://someone:hunter2-secret@127.0.0.1/db', '--json']);
    expect(notPostgres.code).toBe(1);
    expect(JSON.parse(notPostgres.stdout)).toMatchObject({ status: 'error', error: { code: 'INVALID_PARAMS' } });
    expect(notPostgres.stdout + notPostgres.stderr).not.toContain('hunter2-secret');
    const daemon = await runCli(home, ['daemon', '--ledger', 'postgres://someone:hunter2-secret@127.0.0.1:1', '--no-tcp', '--no-socket', '--no-dashboard']);
    expect(daemon.code).toBe(1);
    expect(daemon.stderr).toMatch(/names no database/);
    expect(daemon.stderr).not.toContain('hunter2-secret');
    const wrong = new URL(server.url('postgres'));
    wrong.password = 'hunter2-secret';
    const refused = await runCli(home, ['ledger', 'migrate', '--to', wrong.href, '--json']);
    expect(refused.code).toBe(1);
    expect(JSON.parse(refused.stdout)).toMatchObject({ status: 'error', error: { code: 'CONNECTION_FAILED' } });
    expect(refused.stdout + refused.stderr).not.toContain('hunter2-secret');
  });
});

describe('switchboard daemon with its ledger in PostgreSQL', () => {
  it('records its runs there, names it without the password, and gives no pane the URL', { timeout: 60_000 }, async () => {
    const home = path.join(scratch.dir, 'home-daemon');
    mkdirSync(home, { mode: 0o700 });
    const url = await server.createDatabase();
    const daemon = await startDaemonProcess(home, { ...cleanEnv(), SWITCHBOARD_LEDGER: url });
    const client = await connect({ home });
    try {
      const info = await client.info();
      expect(info.bridge).toMatchObject({ on: true, ledger: expect.stringMatching(/^postgres:\/\/switchboard:\*\*\*@127\.0\.0\.1:\d+\/ledger_\d+$/) as unknown });
      // A pane's program sees the daemon's environment: the ledger's URL is not in it.
      const pane = await client.createPane({ argv: ['sh', '-c', 'echo "ledger=[${SWITCHBOARD_LEDGER:-none}]"; sleep 30'], cwd: scratch.dir });
      await client.waitFor(pane.pane_id, { pattern: 'ledger=\\[', timeoutMs: 20_000 });
      const text = (await client.getText(pane.pane_id)).text;
      expect(text).toContain('ledger=[none]');
      expect(text).not.toContain(server.password);
      await client.kill(pane.pane_id);
      // A run refused at admission is recorded all the same (failed, policy): in PostgreSQL.
      const backend = (await client.runBackends()).backends[0]?.name ?? 'claude';
      await expect(client.runSubmit({ backend, prompt: 'hello', cwd: '/' })).rejects.toMatchObject({ code: 'FORBIDDEN' });
      const listed = (await client.runList()).runs;
      expect(listed).toHaveLength(1);
      expect(listed[0]).toMatchObject({ status: 'failed' });
      expect(await count(url, 'runs')).toBe(1);
      expect(await count(url, 'events')).toBeGreaterThan(0);
    } finally {
      client.close();
      await daemon.stop();
    }
    // Its schema was made there by the daemon.
    expect(await count(url, 'meta')).toBe(1);
  });

  it('is what `up --ledger` starts, the URL kept off the daemon\u2019s command line', { timeout: 60_000 }, async () => {
    const home = path.join(scratch.dir, 'home-up');
    mkdirSync(home, { mode: 0o700 });
    const url = await server.createDatabase();
    const up = await runCli(home, ['up', '--ledger', url, '--port', '0', '--no-dashboard']);
    const pid = readRuntimeFile(home)?.pid;
    try {
      expect(up.code, up.stderr).toBe(0);
      const client = await connect({ home });
      try {
        const info = await client.info();
        expect(info.pid).toBe(pid);
        expect((info.bridge as { ledger?: string }).ledger).toContain(`127.0.0.1:${server.port}`);
        expect(readFileSync(`/proc/${info.pid}/cmdline`, 'utf8')).not.toContain(server.password);
      } finally {
        client.close();
      }
    } finally {
      const down = await runCli(home, ['down']);
      // Whatever `down` said, the daemon `up` started is gone before the test ends (by its pid if it must be).
      if (pid !== undefined && isProcessRunning(pid) && down.code !== 0) process.kill(pid, 'SIGKILL');
      if (pid !== undefined) await until(() => !isProcessRunning(pid), `daemon ${pid} to exit`);
      expect(down.code, down.stderr).toBe(0);
    }
    expect(await count(url, 'meta')).toBe(1);
  });
});
