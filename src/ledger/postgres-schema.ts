/**
 * The run ledger's schema in PostgreSQL: the SQLite ledger's tables and rules (`sqlite-store.ts`,
 * `ask-rows.ts`, `team-rows.ts`), version for version, so a ledger moves between the two and
 * replays the same. Where PostgreSQL differs, on purpose:
 * - times, sequence numbers and sizes are BIGINT (SQLite's INTEGER is 64-bit; milliseconds since
 *   the epoch do not fit PostgreSQL's 32-bit INTEGER);
 * - `runs` also keeps what a list shows of a run (its spec without the prompt, the prompt's first
 *   PROMPT_PREVIEW_BYTES and its size), written with the run: PostgreSQL's JSON functions refuse a
 *   `\u0000` in a prompt, and a list must never read a whole prompt;
 * - `asks` and `team_runs` have a `pos` identity column in place of SQLite's rowid, the order rows
 *   were first written, which breaks ties between rows made in the same millisecond.
 *
 * Migrations are numbered as SQLite's are, one per version, each in a transaction of its own with
 * the new version number, all under one advisory lock: two controllers starting on one database at
 * once migrate it once, the second waiting for the first and then finding nothing left to do.
 */
import type { PoolClient } from 'pg';
import { SwitchboardError } from '../core/errors.js';
import { MOVED_TO_NODE } from './store-records.js';

/** The ledger's schema version, in `meta`: a newer database is refused rather than misread (as SQLite's file is). */
export const POSTGRES_SCHEMA_VERSION = 4;

/**
 * The advisory lock every migration is done under: one number for "the Switchboard ledger's
 * schema" (PostgreSQL's advisory locks are named by a 64-bit key; this one spells "SWBDLEDG").
 */
const MIGRATION_LOCK_KEY = '6005341489226662983';

const META = 'CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)';

/** What each version adds to the one before (1: a new database's runs and events). */
const MIGRATIONS: Readonly<Record<number, string>> = {
  1: `
CREATE TABLE runs (id TEXT PRIMARY KEY, created_at BIGINT NOT NULL, backend TEXT NOT NULL, parent TEXT, spec TEXT NOT NULL,
  listed_spec TEXT NOT NULL, prompt_head BYTEA NOT NULL, prompt_bytes BIGINT NOT NULL);
CREATE TABLE events (run_id TEXT NOT NULL, seq BIGINT NOT NULL, ts BIGINT NOT NULL, type TEXT NOT NULL, body TEXT NOT NULL, PRIMARY KEY (run_id, seq));
CREATE TABLE run_status (run_id TEXT PRIMARY KEY, status TEXT NOT NULL, reason TEXT, message TEXT NOT NULL DEFAULT '', started_at BIGINT, ended_at BIGINT,
  last_seq BIGINT NOT NULL DEFAULT 0, events BIGINT NOT NULL DEFAULT 0, bytes BIGINT NOT NULL DEFAULT 0);
CREATE INDEX runs_by_created ON runs (created_at);
CREATE INDEX status_by_status ON run_status (status);
CREATE FUNCTION switchboard_refuse_update() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION '%', TG_ARGV[0]; END $$;
CREATE TRIGGER runs_append_only BEFORE UPDATE ON runs FOR EACH ROW EXECUTE FUNCTION switchboard_refuse_update('the run ledger is append-only');
CREATE TRIGGER events_append_only BEFORE UPDATE ON events FOR EACH ROW EXECUTE FUNCTION switchboard_refuse_update('the run ledger is append-only');
`,
  2: `
CREATE TABLE asks (id TEXT PRIMARY KEY, status TEXT NOT NULL, created_at BIGINT NOT NULL, ended_at BIGINT, target_pane TEXT NOT NULL, asker_pane TEXT, asker_name TEXT,
  delivery TEXT NOT NULL, record TEXT NOT NULL, pos BIGINT GENERATED ALWAYS AS IDENTITY);
CREATE INDEX asks_by_created ON asks (created_at);
CREATE INDEX asks_by_status ON asks (status);
`,
  3: `
CREATE TABLE team_runs (id TEXT PRIMARY KEY, state TEXT NOT NULL, created_at BIGINT NOT NULL, ended_at BIGINT, record TEXT NOT NULL, pos BIGINT GENERATED ALWAYS AS IDENTITY);
CREATE INDEX team_runs_by_created ON team_runs (created_at);
CREATE TABLE team_events (run_id TEXT NOT NULL, seq BIGINT NOT NULL, ts BIGINT NOT NULL, kind TEXT NOT NULL, record TEXT NOT NULL, PRIMARY KEY (run_id, seq));
CREATE TRIGGER team_events_append_only BEFORE UPDATE ON team_events FOR EACH ROW EXECUTE FUNCTION switchboard_refuse_update('a team run''s record is append-only');
`,
  // Where a run that waited for a slot went, when not to the node it was recorded for (RunMove).
  4: MOVED_TO_NODE,
};

/** What migrating did: the version found, and the versions applied (none when another process had done it). */
export interface MigrationReport {
  from: number;
  applied: number[];
}

/**
 * Brings the database `client` is connected to up to POSTGRES_SCHEMA_VERSION, one version per
 * transaction, under the advisory lock; refuses (INTERNAL_ERROR, untouched) a database of a newer
 * schema. `where` names the database in messages (its URL without the password).
 */
export async function migratePostgres(client: PoolClient, where: string): Promise<MigrationReport> {
  await client.query('SELECT pg_advisory_lock($1::bigint)', [MIGRATION_LOCK_KEY]);
  try {
    await client.query(META);
    const from = await versionOf(client);
    if (from > POSTGRES_SCHEMA_VERSION) {
      throw new SwitchboardError('INTERNAL_ERROR', `the run ledger ${where} was written by a newer Switchboard (schema ${from}; this one reads ${POSTGRES_SCHEMA_VERSION})`, { ledger: where });
    }
    const applied: number[] = [];
    for (let version = from + 1; version <= POSTGRES_SCHEMA_VERSION; version++) {
      const sql = MIGRATIONS[version];
      if (sql === undefined) throw new SwitchboardError('INTERNAL_ERROR', `no migration to schema ${version} of the run ledger`);
      await client.query('BEGIN');
      try {
        await client.query(sql);
        await client.query("INSERT INTO meta (key, value) VALUES ('schema_version', $1) ON CONFLICT (key) DO UPDATE SET value = excluded.value", [String(version)]);
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK');
        throw err;
      }
      applied.push(version);
    }
    return { from, applied };
  } finally {
    await client.query('SELECT pg_advisory_unlock($1::bigint)', [MIGRATION_LOCK_KEY]);
  }
}

/** The schema version recorded in `meta` (0: a new database). */
async function versionOf(client: PoolClient): Promise<number> {
  const found = await client.query<{ value: string }>("SELECT value FROM meta WHERE key = 'schema_version'");
  const value = found.rows[0]?.value;
  return value === undefined ? 0 : Number(value);
}
