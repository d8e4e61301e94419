/**
 * The asks' and team runs' rows in PostgreSQL (`ask-rows.ts`, `team-rows.ts` say what they are).
 * Their callers record without waiting (an ask's change, a team board's write), so the rows keep
 * SQLite's order by a queue of their own: each call starts once the one before it has ended, so a
 * read sees every write called before it and two changes of one ask land in the order made.
 */
import type pg from 'pg';
import { SwitchboardError } from '../core/errors.js';
import type { AskRow, AskRows } from './ask-rows.js';
import { ASK_COLUMNS } from './ask-rows.js';
import type { TeamEventRow, TeamRows, TeamRunRow } from './team-rows.js';
import { TEAM_EVENT_COLUMNS, TEAM_RUN_COLUMNS } from './team-rows.js';

/** The store's calls under way (so `close` can wait for them), and a queue for those that must keep their order. */
export class OrderedCalls {
  private readonly underWay = new Set<Promise<unknown>>();
  private tail: Promise<unknown> = Promise.resolve();
  private closed = false;

  /** Runs `work` now, counted until it ends; SHUTTING_DOWN once the store is closing. */
  track<T>(work: () => Promise<T>): Promise<T> {
    if (this.closed) return Promise.reject(new SwitchboardError('SHUTTING_DOWN', 'the run ledger is closed'));
    const call = work();
    this.underWay.add(call);
    const forget = (): void => {
      this.underWay.delete(call);
    };
    call.then(forget, forget);
    return call;
  }

  /** Runs `work` once every call queued before it has ended (whatever their outcome), counted until it ends. */
  inOrder<T>(work: () => Promise<T>): Promise<T> {
    if (this.closed) return Promise.reject(new SwitchboardError('SHUTTING_DOWN', 'the run ledger is closed'));
    const call = this.tail.then(work, work);
    this.tail = call.catch(() => undefined);
    return this.track(() => call);
  }

  /** Refuses every call from now on (those under way go on), then resolves once none is under way. */
  async close(): Promise<void> {
    this.closed = true;
    await this.drain();
  }

  /** Resolves once no call is under way (calls made while waiting included). */
  private async drain(): Promise<void> {
    while (this.underWay.size > 0) await Promise.allSettled([...this.underWay]);
  }
}

/** Rows numbered `$1, $2, …` from `first`, for a statement of `count` parameters. */
const marks = (count: number, first = 1): string => Array.from({ length: count }, (_, i) => `$${first + i}`).join(', ');

const UPSERT_ASK = `INSERT INTO asks (${ASK_COLUMNS}) VALUES (${marks(9)})
  ON CONFLICT (id) DO UPDATE SET status = excluded.status, ended_at = excluded.ended_at, delivery = excluded.delivery, record = excluded.record`;

function askParams(row: AskRow): unknown[] {
  return [row.id, row.status, row.created_at, row.ended_at, row.target_pane, row.asker_pane, row.asker_name, row.delivery, row.record];
}

export class PostgresAskRows implements AskRows {
  constructor(
    private readonly pool: pg.Pool,
    private readonly calls: OrderedCalls,
  ) {}

  put(row: AskRow): Promise<void> {
    return this.calls.inOrder(async () => {
      await this.pool.query(UPSERT_ASK, askParams(row));
    });
  }

  putAll(rows: readonly AskRow[]): Promise<void> {
    return this.calls.inOrder(() =>
      inTransaction(this.pool, async (client) => {
        for (const row of rows) await client.query(UPSERT_ASK, askParams(row));
      }),
    );
  }

  get(id: string): Promise<AskRow | undefined> {
    return this.calls.inOrder(async () => (await this.pool.query<AskRow>(`SELECT ${ASK_COLUMNS} FROM asks WHERE id = $1`, [id])).rows[0]);
  }

  newest(limit: number): Promise<AskRow[]> {
    // pos breaks ties between asks made in the same millisecond: the order they were first written.
    return this.calls.inOrder(async () => (await this.pool.query<AskRow>(`SELECT ${ASK_COLUMNS} FROM asks ORDER BY created_at DESC, pos DESC LIMIT $1`, [limit])).rows.reverse());
  }

  unsettled(statuses: readonly string[], deliveries: readonly string[]): Promise<AskRow[]> {
    return this.calls.inOrder(async () => (await this.pool.query<AskRow>(`SELECT ${ASK_COLUMNS} FROM asks WHERE status = ANY($1::text[]) OR delivery = ANY($2::text[]) ORDER BY created_at, pos`, [statuses, deliveries])).rows);
  }
}

export class PostgresTeamRows implements TeamRows {
  constructor(
    private readonly pool: pg.Pool,
    private readonly calls: OrderedCalls,
  ) {}

  put(row: TeamRunRow, events: readonly TeamEventRow[]): Promise<void> {
    return this.calls.inOrder(() =>
      inTransaction(this.pool, async (client) => {
        await client.query(
          `INSERT INTO team_runs (${TEAM_RUN_COLUMNS}) VALUES (${marks(5)})
           ON CONFLICT (id) DO UPDATE SET state = excluded.state, ended_at = excluded.ended_at, record = excluded.record`,
          [row.id, row.state, row.created_at, row.ended_at, row.record],
        );
        // No ON CONFLICT here: an entry's number taken twice is a recorder's mistake, and fails the whole put (as in SQLite).
        for (const e of events) await client.query(`INSERT INTO team_events (${TEAM_EVENT_COLUMNS}) VALUES (${marks(5)})`, [e.run_id, e.seq, e.ts, e.kind, e.record]);
      }),
    );
  }

  get(id: string): Promise<TeamRunRow | undefined> {
    return this.calls.inOrder(async () => (await this.pool.query<TeamRunRow>(`SELECT ${TEAM_RUN_COLUMNS} FROM team_runs WHERE id = $1`, [id])).rows[0]);
  }

  newest(limit: number): Promise<TeamRunRow[]> {
    return this.calls.inOrder(async () => (await this.pool.query<TeamRunRow>(`SELECT ${TEAM_RUN_COLUMNS} FROM team_runs ORDER BY created_at DESC, pos DESC LIMIT $1`, [limit])).rows);
  }

  events(runId: string, afterSeq: number, limit: number): Promise<TeamEventRow[]> {
    return this.calls.inOrder(async () => (await this.pool.query<TeamEventRow>(`SELECT ${TEAM_EVENT_COLUMNS} FROM team_events WHERE run_id = $1 AND seq > $2 ORDER BY seq LIMIT $3`, [runId, afterSeq, limit])).rows);
  }

  lastSeq(runId: string): Promise<number> {
    return this.calls.inOrder(async () => (await this.pool.query<{ last: number | null }>('SELECT max(seq) AS last FROM team_events WHERE run_id = $1', [runId])).rows[0]?.last ?? 0);
  }

  inStates(states: readonly string[]): Promise<TeamRunRow[]> {
    return this.calls.inOrder(async () => (await this.pool.query<TeamRunRow>(`SELECT ${TEAM_RUN_COLUMNS} FROM team_runs WHERE state = ANY($1::text[]) ORDER BY created_at, pos`, [states])).rows);
  }
}

/** `work` in one transaction on one connection of `pool`. */
export async function inTransaction<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken = false;
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {
      broken = true;
    });
    throw err;
  } finally {
    client.release(broken);
  }
}
