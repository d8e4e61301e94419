/**
 * The ledger's `asks` table: one row per ask between agents, rewritten on every change of the ask
 * (an ask is a small record that changes a handful of times, unlike a run's append-only events).
 * The ledger knows nothing of what an ask is: the asks layer (src/asks/ledger-recorder.ts) hands it
 * rows, the columns it finds asks by, and the whole record as JSON, as the `runs` table keeps a
 * run's spec. Asynchronous, so that a store over the network (PostgreSQL) can keep them too; calls
 * take effect in the order they are made and a read sees every write made before it, so the ask
 * engine records each change as it happens without waiting for it. In SQLite each write is one
 * prepared statement in its own transaction, done before the call returns, with no fsync in WAL mode
 * at synchronous=NORMAL (about 0.2 ms measured on a busy 2-core machine, for an ask that changes
 * some eight times in its life), so no batching as the run ledger does for events by the thousand.
 */
import type Database from 'better-sqlite3';
import { settled } from './settled.js';

/** One ask as the ledger keeps it. */
export interface AskRow {
  id: string;
  status: string;
  created_at: number;
  ended_at: number | null;
  target_pane: string;
  asker_pane: string | null;
  asker_name: string | null;
  delivery: string;
  /** The whole record as JSON (the columns are copies of its fields, for queries). */
  record: string;
}

/**
 * What a store that keeps asks offers (SQLite's: `SqliteAskRows`; PostgreSQL's: `PostgresAskRows`).
 * Calls take effect in the order they are made: a read sees every write called before it.
 */
export interface AskRows {
  /** Writes the ask's row, new or changed. */
  put(row: AskRow): Promise<void>;
  /** Writes several rows atomically: all of them or none. */
  putAll(rows: readonly AskRow[]): Promise<void>;
  get(id: string): Promise<AskRow | undefined>;
  /** The newest `limit` asks by creation, oldest first. */
  newest(limit: number): Promise<AskRow[]>;
  /** Asks with one of `statuses`, or one of `deliveries` (what a daemon that died left unsettled), oldest first. */
  unsettled(statuses: readonly string[], deliveries: readonly string[]): Promise<AskRow[]>;
}

/** The columns, in the order every statement names them. */
export const ASK_COLUMNS = 'id, status, created_at, ended_at, target_pane, asker_pane, asker_name, delivery, record';

export class SqliteAskRows implements AskRows {
  private readonly upsert: Database.Statement<[AskRow]>;
  private readonly selectOne: Database.Statement<[string], AskRow>;
  private readonly selectNewest: Database.Statement<[number], AskRow>;
  private readonly upsertAll: (rows: readonly AskRow[]) => void;

  /** Over a ledger database whose schema has the `asks` table (sqlite-store.ts creates it). */
  constructor(private readonly db: Database.Database) {
    // Who asked, whom and when never change; the status, the end and the record do.
    this.upsert = db.prepare(
      `INSERT INTO asks (${ASK_COLUMNS}) VALUES (@id, @status, @created_at, @ended_at, @target_pane, @asker_pane, @asker_name, @delivery, @record)
       ON CONFLICT (id) DO UPDATE SET status = excluded.status, ended_at = excluded.ended_at, delivery = excluded.delivery, record = excluded.record`,
    );
    this.selectOne = db.prepare(`SELECT ${ASK_COLUMNS} FROM asks WHERE id = ?`);
    // rowid breaks ties between asks made in the same millisecond: it is the order they were first written.
    this.selectNewest = db.prepare(`SELECT ${ASK_COLUMNS} FROM asks ORDER BY created_at DESC, rowid DESC LIMIT ?`);
    this.upsertAll = db.transaction((rows: readonly AskRow[]) => {
      for (const row of rows) this.upsert.run(row);
    });
  }

  put(row: AskRow): Promise<void> {
    return settled(() => void this.upsert.run(row));
  }

  putAll(rows: readonly AskRow[]): Promise<void> {
    return settled(() => this.upsertAll(rows));
  }

  get(id: string): Promise<AskRow | undefined> {
    return settled(() => this.selectOne.get(id));
  }

  newest(limit: number): Promise<AskRow[]> {
    return settled(() => this.selectNewest.all(limit).reverse());
  }

  unsettled(statuses: readonly string[], deliveries: readonly string[]): Promise<AskRow[]> {
    const marks = (n: number): string => Array.from({ length: n }, () => '?').join(', ');
    // Read once per start: not worth a prepared statement of its own.
    const sql = `SELECT ${ASK_COLUMNS} FROM asks WHERE status IN (${marks(statuses.length)}) OR delivery IN (${marks(deliveries.length)}) ORDER BY created_at, rowid`;
    return settled(() => this.db.prepare<string[], AskRow>(sql).all(...statuses, ...deliveries));
  }
}
