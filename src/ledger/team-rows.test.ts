import { describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import { useLedgerFiles } from '../../test/support/ledger-files.js';
import type { TeamEventRow, TeamRunRow } from './team-rows.js';

const { file, open } = useLedgerFiles('sb-team-rows-');

function run(id: string, extra: Partial<TeamRunRow> = {}): TeamRunRow {
  return { id, state: 'running', created_at: 1_000, ended_at: null, record: `sealed board of ${id}`, ...extra };
}

function entry(runId: string, seq: number, kind = 'call'): TeamEventRow {
  return { run_id: runId, seq, ts: 1_000 + seq, kind, record: `sealed ${kind} ${seq}` };
}

// What the team runs' rows do is tested on every store (test/support/ledger-contract.ts); here, SQLite's file and its schema versions.
describe("the ledger's team runs in SQLite", () => {
  it('never lets a recorded entry be rewritten', async () => {
    const at = file();
    const store = open(at);
    await store.teams.put(run('team-1'), [entry('team-1', 1)]);
    const db = new Database(at);
    try {
      expect(() => db.prepare("UPDATE team_events SET record = 'changed'").run()).toThrow(/append-only/);
    } finally {
      db.close();
    }
  });

  it('is added to a schema 2 file, which keeps its asks', async () => {
    const at = file();
    const first = open(at);
    await first.asks.put({ id: 'a1', status: 'done', created_at: 1, ended_at: 2, target_pane: 'p1', asker_pane: null, asker_name: null, delivery: 'none', record: '{}' });
    const db = new Database(at);
    db.exec("DROP TABLE team_runs; DROP TABLE team_events; ALTER TABLE run_status DROP COLUMN node; UPDATE meta SET value = '2' WHERE key = 'schema_version'");
    db.close();
    const store = open(at);
    expect((await store.asks.get('a1'))?.status).toBe('done');
    await store.teams.put(run('team-1'), [entry('team-1', 1)]);
    expect((await store.teams.get('team-1'))?.state).toBe('running');
  });
});
