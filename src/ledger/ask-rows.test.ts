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

// What the asks' rows do is tested on every store (test/support/ledger-contract.ts); here, SQLite's file and its schema versions.
describe("the ledger's asks table in SQLite", () => {
  it('is in a new ledger file, at schema 4 (3 added team runs, 4 moves)', () => {
    const at = file();
    open(at);
    expect(inspect(at)).toEqual({ version: '4', tables: ['asks', 'events', 'meta', 'run_status', 'runs', 'team_events', 'team_runs'] });
  });

  it('is added to a schema 1 file, which keeps its runs', async () => {
    const at = file();
    const old = open(at);
    await old.write({ runs: [spec], events: [] });
    await old.close();
    // What Switchboard before the asks table wrote: the same tables but asks (and team runs, schema 3's, and a run's node, 4's), at version 1.
    const db = new Database(at);
    db.exec("DROP TABLE asks; DROP TABLE team_runs; DROP TABLE team_events; ALTER TABLE run_status DROP COLUMN node; UPDATE meta SET value = '1' WHERE key = 'schema_version'");
    db.close();
    expect(inspect(at)).toEqual({ version: '1', tables: ['events', 'meta', 'run_status', 'runs'] });

    const store = open(at);
    expect(inspect(at)).toEqual({ version: '4', tables: ['asks', 'events', 'meta', 'run_status', 'runs', 'team_events', 'team_runs'] });
    expect((await store.run('run-1'))?.spec).toEqual(spec);
    await store.asks.put(row('a1'));
    expect(await store.asks.get('a1')).toEqual(row('a1'));
    await store.close();
    // Opening it again changes nothing.
    open(at);
    expect(inspect(at).version).toBe('4');
  });

  it('refuses a file of a newer schema, untouched', async () => {
    const at = file();
    await open(at).close();
    const db = new Database(at);
    db.exec("UPDATE meta SET value = '5' WHERE key = 'schema_version'");
    db.close();
    expect(() => new SqliteLedgerStore(at)).toThrow(/written by a newer Switchboard \(schema 5; this one reads 4\)/);
    expect(inspect(at).version).toBe('5');
  });
});
