/**
 * The run ledger in PostgreSQL (node-postgres, `pg`): the same tables, rules and replay as the
 * SQLite ledger (`sqlite-store.ts`; the differences and why are in `postgres-schema.ts`), for a
 * controller whose ledger outlives one machine. Each batch is one transaction; writing a batch
 * again records nothing twice (ON CONFLICT DO NOTHING on a run's id and on an event's run and
 * number, and only the events that were new move a run's status), which is what lets a writer
 * retry and `switchboard ledger migrate` run twice. The asks' and team runs' rows go through one
 * queue in call order (`postgres-rows.ts`), as SQLite's synchronous calls are in order by nature.
 * `close` waits for every call under way before the pool ends.
 */
import { once } from 'node:events';
import type { Writable } from 'node:stream';
import type pg from 'pg';
import { SwitchboardError, errorMessage } from '../core/errors.js';
import { silentLogger, type Logger } from '../core/logger.js';
import type { RunEvent } from './run-events.js';
import type { LedgerBatch, LedgerStore, PruneResult, RetentionRule, RunPage, RunQuery, RunRecord } from './ledger-store.js';
import { DEFAULT_LIST_LIMIT, doomedRuns, EVENT_OVERHEAD_BYTES, eventBody, eventPage, listedPage, listedParts, MAX_LIST_LIMIT, statusDeltas, toEvent, toRecord, type EndedRun, type EventRow, type ListedRow, type StatusRow } from './store-records.js';
import { migratePostgres, type MigrationReport } from './postgres-schema.js';
import { inTransaction, OrderedCalls, PostgresAskRows, PostgresTeamRows } from './postgres-rows.js';

/** How long opening waits for a connection before it says the server cannot be reached. */
const CONNECT_TIMEOUT_MS = 10_000;
/** Connections the store holds at most: a batch writer, live readers' catch-ups, the rows' queue. */
const POOL_SIZE = 8;
/** Events read from the database at a time when exporting. */
const EXPORT_PAGE = 1_000;

/**
 * BIGINT columns (times, numbers, sizes) as JavaScript numbers: node-postgres gives strings by
 * default, since a BIGINT can exceed 2^53; the ledger's never do (milliseconds, counts, bytes).
 */
function ledgerTypes(types: typeof pg.types): pg.CustomTypesConfig {
  return { getTypeParser: (oid, format) => (oid === types.builtins.INT8 ? parseBigint : (types.getTypeParser(oid, format) as unknown)) };
}

function parseBigint(value: string): number {
  return Number(value);
}

const STATUS_COLUMNS = 's.status, s.reason, s.message, s.started_at, s.ended_at, s.last_seq, s.events, s.bytes, s.node';
/** A run's events after a number ($1 the run, $2 the number), before their order and limit. */
const SELECT_EVENTS = 'SELECT run_id, seq, ts, type, body FROM events WHERE run_id = $1 AND seq > $2';

/** A row count for LIMIT: a whole number, at least 0 (bound as a parameter, never spliced into the SQL). */
function rowCount(n: number): number {
  return Number.isFinite(n) ? Math.max(0, Math.floor(n)) : 0;
}

export interface PostgresStoreOptions {
  /** The connection URL (postgres://user:password@host:port/database). */
  url: string;
  /** The URL as it may be shown (no password): what errors and logs name. */
  shown: string;
  logger?: Logger;
}

export class PostgresLedgerStore implements LedgerStore {
  readonly asks: PostgresAskRows;
  readonly teams: PostgresTeamRows;
  private readonly calls = new OrderedCalls();
  private closing: Promise<void> | undefined;

  private constructor(
    private readonly pool: pg.Pool,
    /** The database as it may be shown (its URL without the password). */
    readonly shown: string,
    /** What opening found and did to the schema. */
    readonly migration: MigrationReport,
  ) {
    this.asks = new PostgresAskRows(pool, this.calls);
    this.teams = new PostgresTeamRows(pool, this.calls);
  }

  /** Connects, brings the schema up to date (under the migration lock) and gives the store; CONNECTION_FAILED when the server cannot be reached. */
  static async open(options: PostgresStoreOptions): Promise<PostgresLedgerStore> {
    const logger = options.logger ?? silentLogger;
    // node-postgres is loaded by the first PostgreSQL ledger, not by every daemon: a daemon on its
    // SQLite ledger (the default) would hold its 35 modules for nothing (issue 25's memory budget).
    const { default: pg } = await import('pg');
    const pool = new pg.Pool({ connectionString: options.url, max: POOL_SIZE, connectionTimeoutMillis: CONNECT_TIMEOUT_MS, types: ledgerTypes(pg.types), application_name: 'switchboard-ledger' });
    // An idle connection the server drops is an event, not a crash: the pool makes a new one when needed.
    pool.on('error', (err) => logger.warn('a connection to the PostgreSQL ledger failed', { ledger: options.shown, error: err.message }));
    let client: pg.PoolClient;
    try {
      client = await pool.connect();
    } catch (err) {
      await pool.end().catch(() => undefined);
      throw new SwitchboardError('CONNECTION_FAILED', `cannot connect to the run ledger ${options.shown}: ${errorMessage(err)}`, { ledger: options.shown }, { cause: err });
    }
    try {
      const migration = await migratePostgres(client, options.shown);
      client.release();
      return new PostgresLedgerStore(pool, options.shown, migration);
    } catch (err) {
      client.release(true);
      await pool.end().catch(() => undefined);
      if (err instanceof SwitchboardError) throw err;
      throw new SwitchboardError('INTERNAL_ERROR', `cannot bring the run ledger ${options.shown} up to date: ${errorMessage(err)}`, { ledger: options.shown }, { cause: err });
    }
  }

  write(batch: LedgerBatch): Promise<void> {
    return this.calls.track(async () => {
      try {
        await inTransaction(this.pool, (client) => writeBatch(client, batch));
      } catch (err) {
        throw new SwitchboardError('INTERNAL_ERROR', `the run ledger could not record ${batch.events.length} events: ${errorMessage(err)}`, { ledger: this.shown }, { cause: err });
      }
    });
  }

  events(runId: string, afterSeq: number, limit: number, maxBytes?: number): Promise<RunEvent[]> {
    return this.calls.track(() => this.readEvents(runId, afterSeq, limit, maxBytes));
  }

  run(runId: string): Promise<RunRecord | undefined> {
    return this.calls.track(() => this.readRun(runId));
  }

  runs(query: RunQuery): Promise<RunPage> {
    const where: string[] = [];
    const params: (string | number)[] = [];
    const param = (value: string | number): string => {
      params.push(value);
      return `$${params.length}`;
    };
    if (query.status !== undefined) where.push(`s.status = ${param(query.status)}`);
    if (query.backend !== undefined) where.push(`r.backend = ${param(query.backend)}`);
    if (query.before !== undefined) where.push(`r.created_at < ${param(query.before)}`);
    const limit = Math.min(Math.max(1, query.limit ?? DEFAULT_LIST_LIMIT), MAX_LIST_LIMIT);
    const maxBytes = query.maxBytes ?? Number.POSITIVE_INFINITY;
    // The preview columns were written with the run: a list never reads a whole prompt.
    const sql = `SELECT r.listed_spec AS spec, r.prompt_head, r.prompt_bytes, ${STATUS_COLUMNS}
      FROM runs r JOIN run_status s ON s.run_id = r.id ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY r.created_at DESC, r.id DESC LIMIT ${param(rowCount(limit) + 1)}`;
    return this.calls.track(async () => listedPage((await this.pool.query<ListedRow>(sql, params)).rows, limit, maxBytes));
  }

  unfinished(): Promise<RunRecord[]> {
    return this.calls.track(async () => {
      const found = await this.pool.query<StatusRow>(`SELECT r.spec, ${STATUS_COLUMNS} FROM runs r JOIN run_status s ON s.run_id = r.id WHERE s.status IN ('queued', 'running', 'streaming', 'orphaned') ORDER BY r.created_at, r.id`);
      return found.rows.map((row) => toRecord(row));
    });
  }

  prune(rule: RetentionRule, now: number): Promise<PruneResult> {
    return this.calls.track(() =>
      inTransaction(this.pool, async (client) => {
        const ended = (await client.query<EndedRun>("SELECT run_id, ended_at, events, bytes FROM run_status WHERE status IN ('completed', 'failed', 'cancelled') ORDER BY ended_at, run_id")).rows;
        const total = (await client.query<{ total: number | null }>('SELECT sum(bytes)::bigint AS total FROM run_status')).rows[0]?.total ?? 0;
        const doomed = [...doomedRuns(ended, total, rule, now)];
        const byId = new Map(ended.map((r) => [r.run_id, r]));
        const result: PruneResult = { runs: doomed.length, events: 0, bytes: 0, asks: 0, teamRuns: 0 };
        for (const id of doomed) {
          result.events += byId.get(id)?.events ?? 0;
          result.bytes += byId.get(id)?.bytes ?? 0;
        }
        if (doomed.length > 0) {
          await client.query('DELETE FROM events WHERE run_id = ANY($1::text[])', [doomed]);
          await client.query('DELETE FROM run_status WHERE run_id = ANY($1::text[])', [doomed]);
          await client.query('DELETE FROM runs WHERE id = ANY($1::text[])', [doomed]);
        }
        // Asks and team runs by age only, once ended, as in SQLite.
        if (rule.maxAgeMs !== undefined) {
          const before = now - rule.maxAgeMs;
          result.asks = (await client.query('DELETE FROM asks WHERE ended_at IS NOT NULL AND ended_at < $1', [before])).rowCount ?? 0;
          await client.query('DELETE FROM team_events WHERE run_id IN (SELECT id FROM team_runs WHERE ended_at IS NOT NULL AND ended_at < $1)', [before]);
          result.teamRuns = (await client.query('DELETE FROM team_runs WHERE ended_at IS NOT NULL AND ended_at < $1', [before])).rowCount ?? 0;
        }
        return result;
      }),
    );
  }

  exportJsonl(out: Writable, runIds?: readonly string[]): Promise<number> {
    return this.calls.track(async () => {
      const ids = runIds ?? (await this.pool.query<{ id: string }>('SELECT id FROM runs ORDER BY created_at, id')).rows.map((r) => r.id);
      let lines = 0;
      const write = async (value: unknown): Promise<void> => {
        lines++;
        if (!out.write(`${JSON.stringify(value)}\n`)) await once(out, 'drain');
      };
      for (const id of ids) {
        const record = await this.readRun(id);
        if (!record) continue;
        await write({ kind: 'run', ...record });
        for (let after = 0; ; ) {
          const page = await this.readEvents(id, after, EXPORT_PAGE);
          for (const ev of page) await write({ kind: 'event', ...ev });
          if (page.length < EXPORT_PAGE) break;
          after = page[page.length - 1]?.seq ?? after;
        }
      }
      return lines;
    });
  }

  /** A run's events (see `events`), read as part of a call already counted. */
  private async readEvents(runId: string, afterSeq: number, limit: number, maxBytes?: number): Promise<RunEvent[]> {
    if (maxBytes === undefined || !Number.isFinite(maxBytes)) return (await this.pool.query<EventRow>(`${SELECT_EVENTS} ORDER BY seq LIMIT $3`, [runId, afterSeq, rowCount(limit)])).rows.map(toEvent);
    // The budget is kept in the query, so rows past it never leave the server: a page of big
    // events (tool output) does not bring `limit` of them into memory to keep a few. The server
    // counts characters, never more than JavaScript's UTF-16 length that eventPage counts, so it
    // sends the page eventPage would cut, or a little more, and eventPage makes the exact cut.
    const found = await this.pool.query<EventRow>(
      `SELECT run_id, seq, ts, type, body FROM (
         SELECT run_id, seq, ts, type, body, row_number() OVER (ORDER BY seq) AS n,
                sum(char_length(body) + ${EVENT_OVERHEAD_BYTES}) OVER (ORDER BY seq ROWS UNBOUNDED PRECEDING) AS upto
         FROM (${SELECT_EVENTS} ORDER BY seq LIMIT $3) AS page
       ) AS sized WHERE n = 1 OR upto <= $4 ORDER BY seq`,
      [runId, afterSeq, rowCount(limit), Math.floor(maxBytes)],
    );
    return eventPage(found.rows, maxBytes);
  }

  /** A run's record (see `run`), read as part of a call already counted. */
  private async readRun(runId: string): Promise<RunRecord | undefined> {
    const found = await this.pool.query<StatusRow>(`SELECT r.spec, ${STATUS_COLUMNS} FROM runs r JOIN run_status s ON s.run_id = r.id WHERE r.id = $1`, [runId]);
    const row = found.rows[0];
    return row ? toRecord(row) : undefined;
  }

  /**
   * PostgreSQL checks its own pages; this checks what the ledger promises: every run has its
   * status row and the other way round, no event belongs to an unknown run, and each run's counts
   * and last number are its events'.
   */
  check(): Promise<string> {
    return this.calls.track(async () => {
      const problems: string[] = [];
      const count = async (what: string, sql: string): Promise<void> => {
        const n = (await this.pool.query<{ n: number }>(`SELECT count(*)::bigint AS n FROM (${sql}) AS found`)).rows[0]?.n ?? 0;
        if (n > 0) problems.push(`${n} ${what}`);
      };
      await count('runs without a status', 'SELECT r.id FROM runs r LEFT JOIN run_status s ON s.run_id = r.id WHERE s.run_id IS NULL');
      await count('statuses without a run', 'SELECT s.run_id FROM run_status s LEFT JOIN runs r ON r.id = s.run_id WHERE r.id IS NULL');
      await count('events of unknown runs', 'SELECT e.run_id FROM events e LEFT JOIN runs r ON r.id = e.run_id WHERE r.id IS NULL');
      await count(
        'runs whose counts are not their events’',
        `SELECT s.run_id FROM run_status s LEFT JOIN (SELECT run_id, count(*) AS n, max(seq) AS last FROM events GROUP BY run_id) e ON e.run_id = s.run_id
         WHERE s.events <> coalesce(e.n, 0) OR s.last_seq <> coalesce(e.last, 0)`,
      );
      return problems.length === 0 ? 'ok' : problems.join('; ');
    });
  }

  /** Waits for every call under way (a batch, the rows' queue), then ends the pool; later calls are refused (SHUTTING_DOWN). */
  close(): Promise<void> {
    this.closing ??= (async () => {
      // A call made from now on is refused (SHUTTING_DOWN, as a closed RunLedger says) rather than
      // reaching a pool that has ended; the calls under way, made before, are waited for.
      await this.calls.close();
      await this.pool.end();
    })();
    return this.closing;
  }
}

/** One batch: new runs, their moves, then the events not yet recorded, then each run's status moved by those. */
async function writeBatch(client: pg.PoolClient, batch: LedgerBatch): Promise<void> {
  for (const spec of batch.runs) {
    const { listedSpec, promptHead, promptBytes } = listedParts(spec);
    const inserted = await client.query(
      'INSERT INTO runs (id, created_at, backend, parent, spec, listed_spec, prompt_head, prompt_bytes) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (id) DO NOTHING',
      [spec.id, spec.created_at, spec.backend, spec.parent, JSON.stringify(spec), listedSpec, promptHead, promptBytes],
    );
    if (inserted.rowCount === 1) await client.query("INSERT INTO run_status (run_id, status) VALUES ($1, 'queued') ON CONFLICT (run_id) DO NOTHING", [spec.id]);
  }
  for (const move of batch.moves ?? []) await client.query('UPDATE run_status SET node = $2 WHERE run_id = $1', [move.run_id, move.node]);
  if (batch.events.length === 0) return;
  const bodies = new Map<RunEvent, string>(batch.events.map((ev) => [ev, eventBody(ev)]));
  // The whole batch in one statement (columns as arrays); RETURNING says which events were new.
  const inserted = await client.query<{ run_id: string; seq: number }>(
    `INSERT INTO events (run_id, seq, ts, type, body) SELECT * FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::text[], $5::text[])
     ON CONFLICT (run_id, seq) DO NOTHING RETURNING run_id, seq`,
    [batch.events.map((e) => e.run_id), batch.events.map((e) => e.seq), batch.events.map((e) => e.ts), batch.events.map((e) => e.type), batch.events.map((e) => bodies.get(e))],
  );
  const isNew = new Set(inserted.rows.map((r) => `${r.seq} ${r.run_id}`));
  // Each new key once: an event twice in one batch is inserted once, and must count once.
  const recorded = batch.events.filter((e) => isNew.delete(`${e.seq} ${e.run_id}`));
  for (const [runId, d] of statusDeltas(recorded, bodies)) {
    await client.query(
      `UPDATE run_status SET status = coalesce($2, status),
         reason = CASE WHEN $2::text IS NULL THEN reason ELSE $3 END, message = CASE WHEN $2::text IS NULL THEN message ELSE $4 END,
         started_at = coalesce(started_at, $5), ended_at = coalesce($6, ended_at),
         last_seq = greatest(last_seq, $7), events = events + $8, bytes = bytes + $9 WHERE run_id = $1`,
      [runId, d.status ?? null, d.reason ?? null, d.message ?? '', d.started_at ?? null, d.ended_at ?? null, d.last_seq, d.events, d.bytes],
    );
  }
}
