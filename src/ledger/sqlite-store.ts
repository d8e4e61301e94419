/**
 * The run ledger in SQLite (better-sqlite3): one file, `ledger.db` in the Switchboard home, mode
 * 0600 (SQLite gives its -wal and -shm files the database's own mode), in WAL mode so readers never
 * wait for the writer and a killed writer leaves a database that opens clean (the last whole
 * transaction is there, a half-written one is not). Runs and events are append-only (triggers refuse
 * an UPDATE); `run_status` is the index of where each run has got to, kept in the same transaction
 * as the events that move it. Retention deletes whole runs that have ended, never a part of one.
 * Since schema 2 the same file keeps the asks between agents (`asks`, one row per ask rewritten on
 * each change: `ask-rows.ts`); retention by age removes the asks that ended too long ago as well.
 */
import { chmodSync, closeSync, openSync } from 'node:fs';
import { once } from 'node:events';
import type { Writable } from 'node:stream';
import Database from 'better-sqlite3';
import { SwitchboardError, errorMessage } from '../core/errors.js';
import { isWindows } from '../platform/index.js';
import type { RunEvent } from './run-events.js';
import { PROMPT_PREVIEW_BYTES, type LedgerBatch, type LedgerStore, type PruneResult, type RetentionRule, type RunPage, type RunQuery, type RunRecord } from './ledger-store.js';
import { DEFAULT_LIST_LIMIT, doomedRuns, eventBody, eventPage, listedPage, MAX_LIST_LIMIT, MOVED_TO_NODE, statusDeltas, toEvent, toRecord, type EndedRun, type EventRow, type ListedRow, type StatusRow } from './store-records.js';
import { SqliteAskRows } from './ask-rows.js';
import { SqliteTeamRows, TEAM_TABLES } from './team-rows.js';

/** The ledger's schema version, in `meta`: a newer file is refused rather than misread. */
const SCHEMA_VERSION = 4;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (id TEXT PRIMARY KEY, created_at INTEGER NOT NULL, backend TEXT NOT NULL, parent TEXT, spec TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS events (run_id TEXT NOT NULL, seq INTEGER NOT NULL, ts INTEGER NOT NULL, type TEXT NOT NULL, body TEXT NOT NULL, PRIMARY KEY (run_id, seq)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS run_status (run_id TEXT PRIMARY KEY, status TEXT NOT NULL, reason TEXT, message TEXT NOT NULL DEFAULT '', started_at INTEGER, ended_at INTEGER, last_seq INTEGER NOT NULL DEFAULT 0, events INTEGER NOT NULL DEFAULT 0, bytes INTEGER NOT NULL DEFAULT 0);
CREATE INDEX IF NOT EXISTS runs_by_created ON runs (created_at);
CREATE INDEX IF NOT EXISTS status_by_status ON run_status (status);
CREATE TRIGGER IF NOT EXISTS runs_append_only BEFORE UPDATE ON runs BEGIN SELECT RAISE(ABORT, 'the run ledger is append-only'); END;
CREATE TRIGGER IF NOT EXISTS events_append_only BEFORE UPDATE ON events BEGIN SELECT RAISE(ABORT, 'the run ledger is append-only'); END;
`;

/**
 * What each schema version adds to the one before: run in order, in one transaction with the new
 * version number, when a file of an older version (or a new file) is opened.
 */
const MIGRATIONS: Readonly<Record<number, string>> = {
  // The asks between agents: the columns they are found by, the whole record as JSON.
  2: `
CREATE TABLE asks (id TEXT PRIMARY KEY, status TEXT NOT NULL, created_at INTEGER NOT NULL, ended_at INTEGER, target_pane TEXT NOT NULL, asker_pane TEXT, asker_name TEXT, delivery TEXT NOT NULL, record TEXT NOT NULL);
CREATE INDEX asks_by_created ON asks (created_at);
CREATE INDEX asks_by_status ON asks (status);
`,
  // Team runs (seed 003): a row per run with its sealed board, and each run's sealed record.
  3: TEAM_TABLES,
  // Where a run that waited for a slot went, when not to the node it was recorded for (RunMove).
  4: MOVED_TO_NODE,
};

/** A status row as written: by run id, its spec and node aside, with no status when it does not change. */
type StatusParams = Omit<StatusRow, 'spec' | 'status' | 'node'> & { run_id: string; status: string | null };

export interface SqliteStoreOptions {
  /** Don't create the file: fail when it is missing (read-only tools). */
  mustExist?: boolean;
}

export class SqliteLedgerStore implements LedgerStore {
  /** The asks between agents, in the same file. */
  readonly asks: SqliteAskRows;
  /** Team runs and their records, in the same file. */
  readonly teams: SqliteTeamRows;
  private readonly db: Database.Database;
  private readonly insertRun: Database.Statement<[string, number, string, string | null, string]>;
  private readonly insertStatus: Database.Statement<[string]>;
  private readonly insertEvent: Database.Statement<[string, number, number, string, string]>;
  private readonly updateStatus: Database.Statement<[StatusParams]>;
  private readonly moveRun: Database.Statement<[string, string]>;
  private readonly selectEvents: Database.Statement<[string, number, number], EventRow>;
  private readonly selectRun: Database.Statement<[string], StatusRow>;
  private readonly writeTx: (batch: LedgerBatch) => void;

  constructor(
    readonly file: string,
    options: SqliteStoreOptions = {},
  ) {
    if (file !== ':memory:' && !options.mustExist) createPrivateFile(file);
    try {
      this.db = new Database(file, { fileMustExist: options.mustExist ?? false });
    } catch (err) {
      throw new SwitchboardError('INTERNAL_ERROR', `cannot open the run ledger ${file}: ${errorMessage(err)}`, { file }, { cause: err });
    }
    // Before any table: lets retention hand freed pages back to the file system.
    this.db.pragma('auto_vacuum = INCREMENTAL');
    this.db.pragma('journal_mode = WAL');
    // In WAL mode NORMAL loses nothing when the process dies; only a power cut can take the last commits.
    this.db.pragma('synchronous = NORMAL');
    this.db.pragma('busy_timeout = 5000');
    this.db.exec(SCHEMA);
    const version = this.db.prepare<[], { value: string }>("SELECT value FROM meta WHERE key = 'schema_version'").get();
    // A new file has just been given schema 1's tables.
    const found = version ? Number(version.value) : 1;
    if (found > SCHEMA_VERSION) {
      this.db.close();
      throw new SwitchboardError('INTERNAL_ERROR', `the run ledger ${file} was written by a newer Switchboard (schema ${version?.value ?? '?'}; this one reads ${SCHEMA_VERSION})`, { file });
    }
    if (!version || found < SCHEMA_VERSION) this.migrate(found);
    // A batch written again (a writer that retried, a ledger moved twice) records nothing twice.
    this.insertRun = this.db.prepare('INSERT INTO runs (id, created_at, backend, parent, spec) VALUES (?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING');
    this.insertStatus = this.db.prepare("INSERT INTO run_status (run_id, status) VALUES (?, 'queued') ON CONFLICT (run_id) DO NOTHING");
    this.insertEvent = this.db.prepare('INSERT INTO events (run_id, seq, ts, type, body) VALUES (?, ?, ?, ?, ?) ON CONFLICT (run_id, seq) DO NOTHING');
    this.updateStatus = this.db.prepare(
      `UPDATE run_status SET status = coalesce(@status, status),
         reason = CASE WHEN @status IS NULL THEN reason ELSE @reason END, message = CASE WHEN @status IS NULL THEN message ELSE @message END,
         started_at = coalesce(started_at, @started_at), ended_at = coalesce(@ended_at, ended_at),
         last_seq = max(last_seq, @last_seq), events = events + @events, bytes = bytes + @bytes WHERE run_id = @run_id`,
    );
    this.moveRun = this.db.prepare('UPDATE run_status SET node = ? WHERE run_id = ?');
    this.selectEvents = this.db.prepare('SELECT run_id, seq, ts, type, body FROM events WHERE run_id = ? AND seq > ? ORDER BY seq LIMIT ?');
    this.selectRun = this.db.prepare('SELECT r.spec AS spec, s.* FROM runs r JOIN run_status s ON s.run_id = r.id WHERE r.id = ?');
    this.writeTx = this.db.transaction((batch: LedgerBatch) => this.writeNow(batch));
    this.asks = new SqliteAskRows(this.db);
    this.teams = new SqliteTeamRows(this.db);
  }

  write(batch: LedgerBatch): Promise<void> {
    try {
      this.writeTx(batch);
      return Promise.resolve();
    } catch (err) {
      return Promise.reject(new SwitchboardError('INTERNAL_ERROR', `the run ledger could not record ${batch.events.length} events: ${errorMessage(err)}`, { file: this.file }, { cause: err }));
    }
  }

  events(runId: string, afterSeq: number, limit: number, maxBytes?: number): Promise<RunEvent[]> {
    if (maxBytes === undefined) return Promise.resolve(this.selectEvents.all(runId, afterSeq, limit).map(toEvent));
    // Row by row, so that a page stops at the budget without the rows past it being read.
    return Promise.resolve(eventPage(this.selectEvents.iterate(runId, afterSeq, limit), maxBytes));
  }

  run(runId: string): Promise<RunRecord | undefined> {
    const row = this.selectRun.get(runId);
    return Promise.resolve(row ? toRecord(row) : undefined);
  }

  runs(query: RunQuery): Promise<RunPage> {
    const where: string[] = [];
    const params: (string | number)[] = [];
    if (query.status !== undefined) {
      where.push('s.status = ?');
      params.push(query.status);
    }
    if (query.backend !== undefined) {
      where.push('r.backend = ?');
      params.push(query.backend);
    }
    if (query.before !== undefined) {
      where.push('r.created_at < ?');
      params.push(query.before);
    }
    const limit = Math.min(Math.max(1, query.limit ?? DEFAULT_LIST_LIMIT), MAX_LIST_LIMIT);
    const maxBytes = query.maxBytes ?? Number.POSITIVE_INFINITY;
    // The prompt is cut in the query: a list never reads a whole prompt out of the database.
    // substr over the prompt's bytes (a BLOB) may end inside a character; toListedRecord drops that tail.
    const sql = `SELECT json_remove(r.spec, '$.prompt') AS spec, substr(CAST(json_extract(r.spec, '$.prompt') AS BLOB), 1, ${PROMPT_PREVIEW_BYTES}) AS prompt_head,
        octet_length(json_extract(r.spec, '$.prompt')) AS prompt_bytes, s.status, s.reason, s.message, s.started_at, s.ended_at, s.last_seq, s.events, s.bytes, s.node
      FROM runs r JOIN run_status s ON s.run_id = r.id ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY r.created_at DESC, r.id DESC LIMIT ${limit + 1}`;
    return Promise.resolve(listedPage(this.db.prepare<(string | number)[], ListedRow>(sql).iterate(...params), limit, maxBytes));
  }

  unfinished(): Promise<RunRecord[]> {
    const rows = this.db.prepare<[], StatusRow>("SELECT r.spec AS spec, s.* FROM runs r JOIN run_status s ON s.run_id = r.id WHERE s.status IN ('queued', 'running', 'streaming', 'orphaned') ORDER BY r.created_at").all();
    return Promise.resolve(rows.map((r) => toRecord(r)));
  }

  prune(rule: RetentionRule, now: number): Promise<PruneResult> {
    const ended = this.db.prepare<[], EndedRun>("SELECT run_id, ended_at, events, bytes FROM run_status WHERE status IN ('completed', 'failed', 'cancelled') ORDER BY ended_at, run_id").all();
    const total = this.db.prepare<[], { total: number | null }>('SELECT sum(bytes) AS total FROM run_status').get()?.total ?? 0;
    const doomed = doomedRuns(ended, total, rule, now);
    const result: PruneResult = { runs: 0, events: 0, bytes: 0, asks: 0, teamRuns: 0 };
    const byId = new Map(ended.map((r) => [r.run_id, r]));
    const del = this.db.transaction((ids: string[]) => {
      const events = this.db.prepare('DELETE FROM events WHERE run_id = ?');
      const status = this.db.prepare('DELETE FROM run_status WHERE run_id = ?');
      const runs = this.db.prepare('DELETE FROM runs WHERE id = ?');
      for (const id of ids) {
        events.run(id);
        status.run(id);
        runs.run(id);
        const r = byId.get(id);
        result.runs++;
        result.events += r?.events ?? 0;
        result.bytes += r?.bytes ?? 0;
      }
    });
    del([...doomed]);
    // Asks are small next to runs' events: only their age counts. An ask not yet ended stays.
    if (rule.maxAgeMs !== undefined) result.asks = this.db.prepare('DELETE FROM asks WHERE ended_at IS NOT NULL AND ended_at < ?').run(now - rule.maxAgeMs).changes;
    // Team runs as asks: by age, once ended, with their records.
    if (rule.maxAgeMs !== undefined) result.teamRuns = this.pruneTeamRuns(now - rule.maxAgeMs);
    if (result.runs > 0 || result.asks > 0 || result.teamRuns > 0) this.db.pragma('incremental_vacuum');
    return Promise.resolve(result);
  }

  async exportJsonl(out: Writable, runIds?: readonly string[]): Promise<number> {
    const ids = runIds ?? this.db.prepare<[], { id: string }>('SELECT id FROM runs ORDER BY created_at, id').all().map((r) => r.id);
    let lines = 0;
    const write = async (value: unknown): Promise<void> => {
      lines++;
      if (!out.write(`${JSON.stringify(value)}\n`)) await once(out, 'drain');
    };
    for (const id of ids) {
      const row = this.selectRun.get(id);
      if (!row) continue;
      await write({ kind: 'run', ...toRecord(row) });
      // Read in pages: an iterator must not stay open across an await (the connection is shared).
      let after = 0;
      for (;;) {
        const page = this.selectEvents.all(id, after, 1_000);
        for (const ev of page) await write({ kind: 'event', ...toEvent(ev) });
        if (page.length < 1_000) break;
        after = page[page.length - 1]?.seq ?? after;
      }
    }
    return lines;
  }

  check(): Promise<string> {
    const rows = this.db.pragma('integrity_check') as { integrity_check: string }[];
    return Promise.resolve(rows.map((r) => r.integrity_check).join('; '));
  }

  close(): Promise<void> {
    if (this.db.open) this.db.close();
    return Promise.resolve();
  }

  /** Deletes the team runs that ended before `endedBefore`, with their records; how many went. */
  private pruneTeamRuns(endedBefore: number): number {
    return this.db.transaction(() => {
      this.db.prepare('DELETE FROM team_events WHERE run_id IN (SELECT id FROM team_runs WHERE ended_at IS NOT NULL AND ended_at < ?)').run(endedBefore);
      return this.db.prepare('DELETE FROM team_runs WHERE ended_at IS NOT NULL AND ended_at < ?').run(endedBefore).changes;
    })();
  }

  /** Brings a file of schema `from` up to SCHEMA_VERSION, all of it or none. */
  private migrate(from: number): void {
    // IMMEDIATE: the write lock first, then the version read again, so two processes opening an
    // old file at once migrate it once.
    this.db.transaction(() => {
      const now = this.db.prepare<[], { value: string }>("SELECT value FROM meta WHERE key = 'schema_version'").get();
      const start = now ? Number(now.value) : from;
      for (let v = start + 1; v <= SCHEMA_VERSION; v++) {
        const sql = MIGRATIONS[v];
        if (sql !== undefined) this.db.exec(sql);
      }
      if (start < SCHEMA_VERSION || !now) this.db.prepare("INSERT INTO meta (key, value) VALUES ('schema_version', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value").run(String(SCHEMA_VERSION));
    }).immediate();
  }

  private writeNow(batch: LedgerBatch): void {
    for (const spec of batch.runs) {
      if (this.insertRun.run(spec.id, spec.created_at, spec.backend, spec.parent, JSON.stringify(spec)).changes > 0) this.insertStatus.run(spec.id);
    }
    for (const move of batch.moves ?? []) this.moveRun.run(move.node, move.run_id);
    const recorded: RunEvent[] = [];
    const bodies = new Map<RunEvent, string>();
    for (const ev of batch.events) {
      const body = eventBody(ev);
      // Only an event not in the ledger yet moves its run's status and counts.
      if (this.insertEvent.run(ev.run_id, ev.seq, ev.ts, ev.type, body).changes === 0) continue;
      recorded.push(ev);
      bodies.set(ev, body);
    }
    for (const [runId, d] of statusDeltas(recorded, bodies)) {
      this.updateStatus.run({ run_id: runId, status: d.status ?? null, reason: d.reason ?? null, message: d.message ?? '', started_at: d.started_at ?? null, ended_at: d.ended_at ?? null, last_seq: d.last_seq, events: d.events, bytes: d.bytes });
    }
  }
}

/** Creates the database file with mode 0600 before SQLite does (SQLite would use the umask). */
function createPrivateFile(file: string): void {
  closeSync(openSync(file, 'a', 0o600));
  if (!isWindows) chmodSync(file, 0o600);
}

