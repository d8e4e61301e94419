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

describe("the ledger's team runs", () => {
  it('keeps one row per run, rewritten, and its record append-only and numbered', () => {
    const store = open(file());
    store.teams.put(run('team-1'), [entry('team-1', 1, 'state'), entry('team-1', 2)]);
    store.teams.put(run('team-1', { state: 'completed', ended_at: 5_000, record: 'the last board' }), [entry('team-1', 3, 'decision')]);
    store.teams.put(run('team-2', { created_at: 2_000 }), []);
    expect(store.teams.get('team-1')).toEqual(run('team-1', { state: 'completed', ended_at: 5_000, record: 'the last board' }));
    expect(store.teams.newest(10).map((r) => r.id)).toEqual(['team-2', 'team-1']);
    expect(store.teams.events('team-1', 1, 10).map((e) => `${e.seq} ${e.kind}`)).toEqual(['2 call', '3 decision']);
    expect(store.teams.events('team-1', 0, 1)).toEqual([entry('team-1', 1, 'state')]);
    expect(store.teams.lastSeq('team-1')).toBe(3);
    expect(store.teams.lastSeq('team-9')).toBe(0);
    expect(store.teams.inStates(['starting', 'running', 'paused']).map((r) => r.id)).toEqual(['team-2']);
  });

  it('writes a row and its entries all or none, and never takes an entry twice or rewrites one', () => {
    const at = file();
    const store = open(at);
    store.teams.put(run('team-1'), [entry('team-1', 1)]);
    // The same number again: the row's change is not written either.
    expect(() => store.teams.put(run('team-1', { state: 'paused' }), [entry('team-1', 2), entry('team-1', 1)])).toThrow();
    expect(store.teams.get('team-1')?.state).toBe('running');
    expect(store.teams.lastSeq('team-1')).toBe(1);
    const db = new Database(at);
    try {
      expect(() => db.prepare("UPDATE team_events SET record = 'changed'").run()).toThrow(/append-only/);
    } finally {
      db.close();
    }
  });

  it('is added to a schema 2 file, which keeps its asks', () => {
    const at = file();
    const first = open(at);
    first.asks.put({ id: 'a1', status: 'done', created_at: 1, ended_at: 2, target_pane: 'p1', asker_pane: null, asker_name: null, delivery: 'none', record: '{}' });
    const db = new Database(at);
    db.exec("DROP TABLE team_runs; DROP TABLE team_events; UPDATE meta SET value = '2' WHERE key = 'schema_version'");
    db.close();
    const store = open(at);
    expect(store.asks.get('a1')?.status).toBe('done');
    store.teams.put(run('team-1'), [entry('team-1', 1)]);
    expect(store.teams.get('team-1')?.state).toBe('running');
  });

  it('loses team runs to retention by age once they have ended, with their records, never before', async () => {
    const store = open(file());
    store.teams.put(run('old', { state: 'completed', ended_at: 1_000 }), [entry('old', 1), entry('old', 2)]);
    store.teams.put(run('recent', { state: 'failed', ended_at: 9_000 }), [entry('recent', 1)]);
    store.teams.put(run('going', { created_at: 1 }), [entry('going', 1)]);
    expect(await store.prune({ maxBytes: 0 }, 10_000)).toMatchObject({ teamRuns: 0 });
    expect(await store.prune({ maxAgeMs: 5_000 }, 10_000)).toMatchObject({ teamRuns: 1 });
    expect(store.teams.newest(10).map((r) => r.id)).toEqual(['recent', 'going']);
    expect(store.teams.events('old', 0, 10)).toEqual([]);
    expect(store.teams.lastSeq('going')).toBe(1);
  });
});
