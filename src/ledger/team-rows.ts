/**
 * The ledger's team runs (schema 3, issue 24 item 2): one row per team run, rewritten as the run
 * changes (its board: goal, plan, workers, state, draft), and the run's record, append-only and
 * numbered (every tool call, decision, held text, delivery and change of state). The ledger knows
 * nothing of what a team run is: orchestration/team-record.ts hands it rows whose `record` is
 * sealed (seed 003 §9: a run's metadata is kept encrypted), and only the columns it is found by
 * in the clear. Asynchronous and in order, as the asks' rows are (`ask-rows.ts`): a run changes a
 * few times a second at most, and the recorder coalesces its board writes.
 */
import type Database from 'better-sqlite3';
import { settled } from './settled.js';

/** A team run as the ledger keeps it. */
export interface TeamRunRow {
  id: string;
  /** The run's state (starting, running, paused, completed, failed, cancelled). */
  state: string;
  created_at: number;
  ended_at: number | null;
  /** The run's board, sealed: the ledger never reads it. */
  record: string;
}

/** One entry of a team run's record. */
export interface TeamEventRow {
  run_id: string;
  /** 1, 2, 3, … per run, with no gap. */
  seq: number;
  ts: number;
  /** What happened (`call`, `decision`, `state`, …), in the clear for finding; the rest is sealed. */
  kind: string;
  record: string;
}

/**
 * What a store that keeps team runs offers (SQLite's: `SqliteTeamRows`; PostgreSQL's:
 * `PostgresTeamRows`). Calls take effect in the order they are made: a read sees every write
 * called before it.
 */
export interface TeamRows {
  /** Writes a run's row, new or changed, and its new record entries, in one transaction (an entry's number taken twice fails it all). */
  put(row: TeamRunRow, events: readonly TeamEventRow[]): Promise<void>;
  get(id: string): Promise<TeamRunRow | undefined>;
  /** The newest `limit` runs by creation, newest first. */
  newest(limit: number): Promise<TeamRunRow[]>;
  /** The run's record entries after `afterSeq`, in order, at most `limit`. */
  events(runId: string, afterSeq: number, limit: number): Promise<TeamEventRow[]>;
  /** The highest entry number recorded for the run (0: none). */
  lastSeq(runId: string): Promise<number>;
  /** Runs whose state is one of `states` (what a daemon that died left going), oldest first. */
  inStates(states: readonly string[]): Promise<TeamRunRow[]>;
}

export const TEAM_RUN_COLUMNS = 'id, state, created_at, ended_at, record';
export const TEAM_EVENT_COLUMNS = 'run_id, seq, ts, kind, record';

/** What schema 3 adds to the ledger file (sqlite-store.ts runs it). */
export const TEAM_TABLES = `
CREATE TABLE team_runs (id TEXT PRIMARY KEY, state TEXT NOT NULL, created_at INTEGER NOT NULL, ended_at INTEGER, record TEXT NOT NULL);
CREATE INDEX team_runs_by_created ON team_runs (created_at);
CREATE TABLE team_events (run_id TEXT NOT NULL, seq INTEGER NOT NULL, ts INTEGER NOT NULL, kind TEXT NOT NULL, record TEXT NOT NULL, PRIMARY KEY (run_id, seq)) WITHOUT ROWID;
CREATE TRIGGER team_events_append_only BEFORE UPDATE ON team_events BEGIN SELECT RAISE(ABORT, 'a team run''s record is append-only'); END;
`;

export class SqliteTeamRows implements TeamRows {
  private readonly upsert: Database.Statement<[TeamRunRow]>;
  private readonly insertEvent: Database.Statement<[TeamEventRow]>;
  private readonly selectOne: Database.Statement<[string], TeamRunRow>;
  private readonly selectNewest: Database.Statement<[number], TeamRunRow>;
  private readonly selectEvents: Database.Statement<[string, number, number], TeamEventRow>;
  private readonly selectLastSeq: Database.Statement<[string], { last: number | null }>;
  private readonly write: (row: TeamRunRow, events: readonly TeamEventRow[]) => void;

  /** Over a ledger database whose schema has the team tables (sqlite-store.ts creates them). */
  constructor(private readonly db: Database.Database) {
    // When a run was made never changes; its state, end and board do.
    this.upsert = db.prepare(
      `INSERT INTO team_runs (${TEAM_RUN_COLUMNS}) VALUES (@id, @state, @created_at, @ended_at, @record)
       ON CONFLICT (id) DO UPDATE SET state = excluded.state, ended_at = excluded.ended_at, record = excluded.record`,
    );
    this.insertEvent = db.prepare(`INSERT INTO team_events (${TEAM_EVENT_COLUMNS}) VALUES (@run_id, @seq, @ts, @kind, @record)`);
    this.selectOne = db.prepare(`SELECT ${TEAM_RUN_COLUMNS} FROM team_runs WHERE id = ?`);
    this.selectNewest = db.prepare(`SELECT ${TEAM_RUN_COLUMNS} FROM team_runs ORDER BY created_at DESC, rowid DESC LIMIT ?`);
    this.selectEvents = db.prepare(`SELECT ${TEAM_EVENT_COLUMNS} FROM team_events WHERE run_id = ? AND seq > ? ORDER BY seq LIMIT ?`);
    this.selectLastSeq = db.prepare('SELECT max(seq) AS last FROM team_events WHERE run_id = ?');
    this.write = db.transaction((row: TeamRunRow, events: readonly TeamEventRow[]) => {
      this.upsert.run(row);
      for (const event of events) this.insertEvent.run(event);
    });
  }

  put(row: TeamRunRow, events: readonly TeamEventRow[]): Promise<void> {
    return settled(() => this.write(row, events));
  }

  get(id: string): Promise<TeamRunRow | undefined> {
    return settled(() => this.selectOne.get(id));
  }

  newest(limit: number): Promise<TeamRunRow[]> {
    return settled(() => this.selectNewest.all(limit));
  }

  events(runId: string, afterSeq: number, limit: number): Promise<TeamEventRow[]> {
    return settled(() => this.selectEvents.all(runId, afterSeq, limit));
  }

  lastSeq(runId: string): Promise<number> {
    return settled(() => this.selectLastSeq.get(runId)?.last ?? 0);
  }

  inStates(states: readonly string[]): Promise<TeamRunRow[]> {
    if (states.length === 0) return Promise.resolve([]);
    // Read once per start: not worth a prepared statement of its own.
    const sql = `SELECT ${TEAM_RUN_COLUMNS} FROM team_runs WHERE state IN (${states.map(() => '?').join(', ')}) ORDER BY created_at, rowid`;
    return settled(() => this.db.prepare<string[], TeamRunRow>(sql).all(...states));
  }
}
