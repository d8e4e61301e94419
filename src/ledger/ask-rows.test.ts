import { describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import { useLedgerFiles } from '../../test/support/ledger-files.js';
import { SqliteLedgerStore } from './sqlite-store.js';
import type { AskRow } from './ask-rows.js';
import type { RunSpec } from './run-model.js';

const { file, open } = useLedgerFiles('sb-ask-rows-');

function row(id: string, extra: Partial<AskRow> = {}): AskRow {
  return { id, status: 'queued', created_at: 1_000, ended_at: null, target_pane: 'p1', asker_pane: null, asker_name: null, delivery: 'none', record: `{"id":"${id}"}`, ...extra };
}

const spec: RunSpec = { id: 'run-1', backend: 'claude', mode: 'stdio', prompt: 'say hello', cwd: '/tmp', policy: 'default', limits: {}, schema_version: 'v2', parent: null, created_at: 1_000 };

/** What the file says about itself, read with a connection of its own. */
function inspect(at: string): { version: string | undefined; tables: string[] } {
  const db = new Database(at, { readonly: true });
  try {
    const version = db.prepare<[], { value: string }>("SELECT value FROM meta WHERE key = 'schema_version'").get()?.value;
    const tables = db.prepare<[], { name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all().map((t) => t.name);
    return { version, tables };
  } finally {
    db.close();
  }
}

describe("the ledger's asks table", () => {
  it('is in a new ledger file, at schema 3 (which added team runs)', () => {
    const at = file();
    open(at);
    expect(inspect(at)).toEqual({ version: '3', tables: ['asks', 'events', 'meta', 'run_status', 'runs', 'team_events', 'team_runs'] });
  });

  it('is added to a schema 1 file, which keeps its runs', async () => {
    const at = file();
    const old = open(at);
    await old.write({ runs: [spec], events: [] });
    await old.close();
    // What Switchboard before the asks table wrote: the same tables but asks (and team runs, schema 3's), at version 1.
    const db = new Database(at);
    db.exec("DROP TABLE asks; DROP TABLE team_runs; DROP TABLE team_events; UPDATE meta SET value = '1' WHERE key = 'schema_version'");
    db.close();
    expect(inspect(at)).toEqual({ version: '1', tables: ['events', 'meta', 'run_status', 'runs'] });

    const store = open(at);
    expect(inspect(at)).toEqual({ version: '3', tables: ['asks', 'events', 'meta', 'run_status', 'runs', 'team_events', 'team_runs'] });
    expect((await store.run('run-1'))?.spec).toEqual(spec);
    store.asks.put(row('a1'));
    expect(store.asks.get('a1')).toEqual(row('a1'));
    await store.close();
    // Opening it again changes nothing.
    open(at);
    expect(inspect(at).version).toBe('3');
  });

  it('refuses a file of a newer schema, untouched', async () => {
    const at = file();
    await open(at).close();
    const db = new Database(at);
    db.exec("UPDATE meta SET value = '4' WHERE key = 'schema_version'");
    db.close();
    expect(() => new SqliteLedgerStore(at)).toThrow(/written by a newer Switchboard \(schema 4; this one reads 3\)/);
    expect(inspect(at).version).toBe('4');
  });

  it('upserts one row per ask and finds the unsettled ones', () => {
    const store = open(file());
    store.asks.put(row('a1'));
    store.asks.put(row('a1', { status: 'waiting', record: '{"id":"a1","v":2}' }));
    store.asks.putAll([row('a2', { status: 'done', ended_at: 2_000, delivery: 'pending', created_at: 1_001 }), row('a3', { status: 'cancelled', ended_at: 2_000, created_at: 1_002 })]);
    expect(store.asks.get('a1')).toMatchObject({ status: 'waiting', record: '{"id":"a1","v":2}' });
    expect(store.asks.newest(2).map((r) => r.id)).toEqual(['a2', 'a3']);
    expect(store.asks.unsettled(['queued', 'typing', 'waiting'], ['pending', 'delivering']).map((r) => r.id)).toEqual(['a1', 'a2']);
  });

  it('writes a batch all or none', () => {
    const store = open(file());
    // NOT NULL refuses the second row: the first is not written either.
    const bad = { ...row('b2'), record: null } as unknown as AskRow;
    expect(() => store.asks.putAll([row('b1'), bad])).toThrow();
    expect(store.asks.get('b1')).toBeUndefined();
  });

  it('loses asks to retention by age once they have ended, never before', async () => {
    const store = open(file());
    store.asks.putAll([row('old', { status: 'done', ended_at: 1_000 }), row('recent', { status: 'done', ended_at: 9_000 }), row('in-flight', { created_at: 1 })]);
    expect(await store.prune({ maxBytes: 0 }, 10_000)).toMatchObject({ asks: 0 });
    expect(await store.prune({ maxAgeMs: 5_000 }, 10_000)).toMatchObject({ runs: 0, asks: 1 });
    expect(store.asks.newest(10).map((r) => r.id)).toEqual(['in-flight', 'recent']);
  });
});
