/**
 * The run ledger on a real PostgreSQL server (test/support/postgres-server.ts): every store's
 * contract (test/support/ledger-contract.ts), then what is PostgreSQL's own: the schema versions
 * and their lock, the append-only rules, a SQLite ledger moved into it (counts and replay equal,
 * twice, and by two migrators at once), and the password kept out of what it says.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { isSwitchboardError } from '../../src/core/errors.js';
import { parseLedgerLocation } from '../../src/ledger/ledger-location.js';
import { migrateLedger } from '../../src/ledger/migrate-ledger.js';
import { PostgresLedgerStore } from '../../src/ledger/postgres-store.js';
import { POSTGRES_SCHEMA_VERSION } from '../../src/ledger/postgres-schema.js';
import { RunLedger } from '../../src/ledger/run-ledger.js';
import { SqliteLedgerStore } from '../../src/ledger/sqlite-store.js';
import type { LedgerStore } from '../../src/ledger/ledger-store.js';
import { describeLedgerStore, recordRun, spec, token } from '../support/ledger-contract.js';
import { startPostgres, type PostgresServer } from '../support/postgres-server.js';
import { until } from '../support/processes.js';

let server: PostgresServer;
beforeAll(async () => {
  server = await startPostgres();
});
afterAll(async () => {
  await server.stop();
});

/** A store on the database at `url`. */
function openAt(url: string): Promise<PostgresLedgerStore> {
  const location = parseLedgerLocation(url);
  if (location.kind !== 'postgres') throw new Error('not a PostgreSQL URL');
  return PostgresLedgerStore.open({ url: location.url, shown: location.shown });
}

describeLedgerStore('PostgreSQL', async () => {
  const url = await server.createDatabase();
  return { open: () => openAt(url) };
});

describe('the run ledger in PostgreSQL', () => {
  const closing: { close(): Promise<void> | void }[] = [];
  const dirs: string[] = [];
  afterEach(async () => {
    for (const c of closing.splice(0).reverse()) await c.close();
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  async function store(url: string): Promise<PostgresLedgerStore> {
    const opened = await openAt(url);
    closing.push(opened);
    return opened;
  }

  async function sql(url: string): Promise<pg.Client> {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    closing.push({ close: () => client.end() });
    return client;
  }

  /** A SQLite ledger with runs (one in flight), asks and a team run with its record. */
  async function populatedSqlite(): Promise<{ file: string; runIds: string[] }> {
    const dir = mkdtempSync(path.join(tmpdir(), 'sb-pg-move-'));
    dirs.push(dir);
    const file = path.join(dir, 'ledger.db');
    const ledger = new RunLedger({ store: new SqliteLedgerStore(file) });
    const runIds: string[] = [];
    for (let i = 0; i < 12; i++) {
      const s = spec({ created_at: 100 + (i % 4), prompt: `prompt ${i} ${'€'.repeat(i * 100)}` });
      recordRun(ledger, s, 40 + i);
      runIds.push(s.id);
    }
    const going = spec({ created_at: 500, node: 'n1' });
    ledger.createRun(going);
    for (let i = 0; i < 30; i++) ledger.append(going.id, token(600 + i, `g${i}`));
    runIds.push(going.id);
    await ledger.flush();
    const asks = ledger.asks;
    const teams = ledger.teams;
    if (!asks || !teams) throw new Error('SQLite keeps asks and team runs');
    await asks.putAll(['a1', 'a2', 'a3'].map((id, i) => ({ id, status: i === 0 ? 'waiting' : 'done', created_at: 10, ended_at: i === 0 ? null : 20, target_pane: 'p1', asker_pane: null, asker_name: 'cli', delivery: 'none', record: `{"id":"${id}"}` })));
    await teams.put({ id: 'team-1', state: 'completed', created_at: 5, ended_at: 9, record: 'sealed board' }, Array.from({ length: 7 }, (_, i) => ({ run_id: 'team-1', seq: i + 1, ts: 6, kind: 'call', record: `sealed ${i}` })));
    await ledger.close();
    return { file, runIds };
  }

  /** Everything a reader sees of a ledger: each run's record and every event, the asks, the team runs and their records. */
  async function everything(ledgerStore: LedgerStore, runIds: readonly string[]): Promise<unknown> {
    const runs = [];
    for (const id of runIds) runs.push({ record: await ledgerStore.run(id), events: await ledgerStore.events(id, 0, 100_000) });
    const page = await ledgerStore.runs({ limit: 1_000 });
    const teams = (await ledgerStore.teams?.newest(100)) ?? [];
    return {
      runs,
      listed: page.runs,
      unfinished: (await ledgerStore.unfinished()).map((r) => r.spec.id),
      asks: await ledgerStore.asks?.newest(100),
      teams,
      teamEvents: await ledgerStore.teams?.events('team-1', 0, 100),
    };
  }

  it(`creates schema ${POSTGRES_SCHEMA_VERSION} once, by one of two stores opening a new database at once`, async () => {
    const url = await server.createDatabase();
    const [a, b] = await Promise.all([store(url), store(url)]);
    const applied = [a.migration.applied, b.migration.applied].sort((x, y) => y.length - x.length);
    expect(applied).toEqual([[1, 2, 3, 4], []]);
    const client = await sql(url);
    expect((await client.query("SELECT value FROM meta WHERE key = 'schema_version'")).rows).toEqual([{ value: String(POSTGRES_SCHEMA_VERSION) }]);
    // A third finds nothing to do.
    expect((await store(url)).migration).toEqual({ from: POSTGRES_SCHEMA_VERSION, applied: [] });
  });

  it('refuses a database of a newer schema, untouched', async () => {
    const url = await server.createDatabase();
    await (await store(url)).close();
    const client = await sql(url);
    await client.query("UPDATE meta SET value = '5' WHERE key = 'schema_version'");
    await expect(openAt(url)).rejects.toThrow(/written by a newer Switchboard \(schema 5; this one reads 4\)/);
    expect((await client.query("SELECT value FROM meta WHERE key = 'schema_version'")).rows[0]).toEqual({ value: '5' });
  });

  it('is append-only: the database refuses to change a recorded event, run or team record', async () => {
    const url = await server.createDatabase();
    const ledger = new RunLedger({ store: await store(url) });
    recordRun(ledger, spec(), 1);
    await ledger.flush();
    await ledger.teams?.put({ id: 't', state: 'running', created_at: 1, ended_at: null, record: 'x' }, [{ run_id: 't', seq: 1, ts: 1, kind: 'call', record: 'y' }]);
    const client = await sql(url);
    await expect(client.query("UPDATE events SET body = '{}'")).rejects.toThrow(/append-only/);
    await expect(client.query("UPDATE runs SET backend = 'x'")).rejects.toThrow(/append-only/);
    await expect(client.query("UPDATE team_events SET record = 'z'")).rejects.toThrow(/append-only/);
  });

  it('takes a SQLite ledger whole: the same counts and the same replay, and again with nothing twice', async () => {
    const { file, runIds } = await populatedSqlite();
    const source = new SqliteLedgerStore(file, { mustExist: true });
    closing.push(source);
    const url = await server.createDatabase();
    const target = await store(url);
    // Small batches, so that runs and their events cross batch boundaries.
    const first = await migrateLedger(source, target, { batchEvents: 100 });
    // Each whole run: its input, four changes of state, its tokens and done; then the run in flight's 30.
    const totalEvents = Array.from({ length: 12 }, (_, i) => 40 + i + 5).reduce((a, b) => a + b, 0) + 30;
    expect(first).toEqual({ runs: 13, events: totalEvents, asks: 3, teamRuns: 1, teamEvents: 7, batches: Math.ceil(totalEvents / 100) });
    expect(await everything(target, runIds)).toEqual(await everything(source, runIds));
    // The run in flight goes to another node (it had waited for a slot) before the copy is made again.
    const going = runIds.at(-1) ?? '';
    await source.write({ runs: [], moves: [{ run_id: going, node: 'n2' }], events: [] });
    const second = await migrateLedger(source, target, { batchEvents: 100 });
    expect((await target.run(going))?.spec.node).toBe('n2');
    expect(second).toMatchObject({ runs: 13, events: totalEvents, asks: 3, teamRuns: 1, teamEvents: 0 });
    expect(await everything(target, runIds)).toEqual(await everything(source, runIds));
    const client = await sql(url);
    expect((await client.query<{ n: number }>('SELECT count(*)::int AS n FROM events')).rows[0]?.n).toBe(totalEvents);
    expect(await target.check()).toBe('ok');
  });

  it('takes a SQLite ledger from two migrators at once, each run and event once', async () => {
    const { file, runIds } = await populatedSqlite();
    const url = await server.createDatabase();
    const sources = [new SqliteLedgerStore(file, { mustExist: true }), new SqliteLedgerStore(file, { mustExist: true })];
    closing.push(...sources);
    const targets = await Promise.all([store(url), store(url)]);
    const results = await Promise.all([migrateLedger(sources[0]!, targets[0], { batchEvents: 50 }), migrateLedger(sources[1]!, targets[1], { batchEvents: 50 })]);
    for (const r of results) expect(r).toMatchObject({ runs: 13, asks: 3, teamRuns: 1 });
    // Between them every team record entry was copied, none twice (the one behind found some there, or lost the race and failed the put whole).
    expect(await everything(targets[0], runIds)).toEqual(await everything(sources[0]!, runIds));
    expect(await targets[1].check()).toBe('ok');
  });

  it('holds no connection once closed, after calls under way, and none after an open it refused', async () => {
    const url = await server.createDatabase();
    const admin = await sql(url);
    const ours = async (): Promise<number> => (await admin.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'switchboard-ledger'")).rows[0]?.n ?? -1;
    const opened = await openAt(url);
    const ledger = new RunLedger({ store: opened });
    const s = spec();
    recordRun(ledger, s, 20);
    // Calls still under way when close is called: it waits for them, then ends the pool.
    const reading = ledger.events(s.id, 0, 1_000);
    const asking = opened.asks.newest(10);
    await ledger.close();
    expect((await reading).length).toBe(25);
    expect(await asking).toEqual([]);
    await expect(opened.run(s.id)).rejects.toMatchObject({ code: 'SHUTTING_DOWN' });
    await expect(opened.asks.get('a1')).rejects.toMatchObject({ code: 'SHUTTING_DOWN' });
    // A backend ends a moment after its client has gone: waited for, not timed.
    await until(async () => (await ours()) === 0, 'the store’s connections to end');
    await admin.query("UPDATE meta SET value = '99' WHERE key = 'schema_version'");
    await expect(openAt(url)).rejects.toMatchObject({ code: 'INTERNAL_ERROR' });
    await until(async () => (await ours()) === 0, 'the refused store’s connection to end');
  });

  it('says where it failed without the password, with a stable code', async () => {
    const url = new URL(server.url('postgres'));
    url.password = 'not-the-password-9f3e';
    const refused = await openAt(url.href).catch((err: unknown) => err);
    expect(isSwitchboardError(refused, 'CONNECTION_FAILED')).toBe(true);
    const message = refused instanceof Error ? `${refused.message} ${JSON.stringify((refused as { details?: unknown }).details)}` : '';
    expect(message).toContain(`127.0.0.1:${server.port}`);
    expect(message).not.toContain('not-the-password-9f3e');
    expect(message).not.toContain(server.password);
  });
});
