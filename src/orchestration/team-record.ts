/**
 * Team runs in the ledger (issue 24 item 2; seed 003 §9, FR-105): each run's board (goal, preset,
 * plan, workers, state, draft, summary, calls, decisions) in its row, rewritten as the run
 * changes, and the run's record (TeamRecordEntry, every call, decision, held text, answer and
 * change), append-only and numbered. Both are sealed under the home's key: the ledger keeps in the
 * clear only what a run is found by (id, state, times, what kind an entry is). Workers' last lines
 * are not kept (§9.1: no terminal output on disk). A run outlives the daemon here: its board and
 * report are read back after a restart, and a run the daemon left going is recorded as failed.
 *
 * Recording never stands in a run's way: a write that fails is logged, and the run goes on. Writes
 * are not waited for (the ledger's rows keep them in order, and a read after a write sees it), so a
 * ledger over the network (PostgreSQL) holds up no run.
 */
import type { Disposable } from '../core/disposable.js';
import { DisposableStore } from '../core/disposable.js';
import { SwitchboardError } from '../core/errors.js';
import { silentLogger, type Logger } from '../core/logger.js';
import type { TeamEventRow, TeamRows, TeamRunRow } from '../ledger/index.js';
import type { Sealer } from './sealed-store.js';
import type { TeamBoard, TeamRecordEntry, TeamRun } from './team-run.js';
import { teamEnded, type TeamState } from './team-state.js';

/** What a board or an entry is sealed for, bound into its tag: a sealed text moved to another run or place does not open. */
const boardPurpose = (runId: string): string => `switchboard team run board v1 ${runId}`;
const entryPurpose = (runId: string, seq: number): string => `switchboard team run record v1 ${runId} ${seq}`;
/** Entries a run keeps while the ledger will not take them. */
const MAX_PENDING_ENTRIES = 10_000;
/** A run's board is written at most this often while it goes (and at once when it ends). */
const BOARD_WRITE_MS = 1_000;
/** Entries a read gives at most. */
const MAX_ENTRIES_PAGE = 500;
/** The states of a run that is going: one left in them by a daemon that stopped is over. */
const GOING: readonly TeamState[] = ['starting', 'running', 'paused'];

/** A recorded entry as it is read back. */
export interface RecordedEntry {
  seq: number;
  ts: number;
  entry: TeamRecordEntry;
}

/** A recorded run read back: its last board, or, when it cannot be unsealed, why. */
export type RecordedRun = { id: string; state: TeamState; board: TeamBoard } | { id: string; state: TeamState; sealed: string };

interface Followed {
  run: TeamRun;
  /** Undefined until the ledger said how far the run's record has got (entries wait unnumbered meanwhile). */
  nextSeq: number | undefined;
  unnumbered: { ts: number; entry: TeamRecordEntry }[];
  pending: TeamEventRow[];
  timer: NodeJS.Timeout | undefined;
  subscriptions: DisposableStore;
  failed: boolean;
}

export class TeamRecord implements Disposable {
  private readonly followed = new Map<string, Followed>();
  private readonly logger: Logger;
  private readonly beforeFirstSeal: () => void;
  private prepared = false;

  /** `beforeFirstSeal`: what must be done before anything is sealed (and may throw: each run is then left unrecorded, logged). */
  constructor(
    private readonly rows: TeamRows,
    private readonly sealer: Sealer,
    options: { logger?: Logger; beforeFirstSeal?: () => void } = {},
  ) {
    this.logger = options.logger ?? silentLogger;
    this.beforeFirstSeal = options.beforeFirstSeal ?? (() => undefined);
  }

  /** Records `run` from now until it ends: its board as it changes, and every entry of its record. */
  follow(run: TeamRun): void {
    try {
      // Nothing is sealed before the marker is there: without it a new key could be made over the rows.
      if (!this.prepared) {
        this.beforeFirstSeal();
        this.prepared = true;
      }
      const followed: Followed = { run, nextSeq: undefined, unnumbered: [], pending: [], timer: undefined, subscriptions: new DisposableStore(), failed: false };
      this.followed.set(run.id, followed);
      followed.subscriptions.add(run.onRecord((entry) => this.take(followed, entry)));
      followed.subscriptions.add(run.onChange(() => this.schedule(followed)));
      this.write(followed);
      this.rows.lastSeq(run.id).then(
        (last) => {
          followed.nextSeq = last + 1;
          for (const { ts, entry } of followed.unnumbered.splice(0)) this.number(followed, ts, entry);
          if (this.followed.get(run.id) === followed) this.write(followed);
        },
        (err: unknown) => this.logger.warn('a team run goes unrecorded: the ledger cannot say how far its record got', { run_id: run.id, error: err instanceof Error ? err.message : String(err) }),
      );
    } catch (err) {
      this.logger.warn('a team run goes unrecorded: the ledger cannot take it', { run_id: run.id, error: err instanceof Error ? err.message : String(err) });
    }
  }

  /** Stops recording run `id` (its daemon lets go of it), after writing what waits. */
  unfollow(id: string): void {
    const followed = this.followed.get(id);
    if (!followed) return;
    this.write(followed);
    this.stopFollowing(followed);
  }

  /** Run `id` as recorded (undefined when the ledger has no such run). */
  async read(id: string): Promise<RecordedRun | undefined> {
    this.flush(id);
    const row = await this.rows.get(id);
    return row ? this.decode(row) : undefined;
  }

  /** Whether run `id` is recorded (being followed, or in the ledger), without unsealing it. */
  async has(id: string): Promise<boolean> {
    return this.followed.has(id) || (await this.rows.get(id)) !== undefined;
  }

  /** The newest `limit` runs recorded, newest first. */
  async list(limit: number): Promise<RecordedRun[]> {
    for (const id of this.followed.keys()) this.flush(id);
    return (await this.rows.newest(limit)).map((row) => this.decode(row));
  }

  /** Run `id`'s record after entry `afterSeq`, in order, at most `limit`; KEY_MISMATCH when it cannot be unsealed. */
  async entries(id: string, afterSeq: number, limit: number): Promise<RecordedEntry[]> {
    this.flush(id);
    return (await this.rows.events(id, afterSeq, Math.min(limit, MAX_ENTRIES_PAGE))).map((row) => ({
      seq: row.seq,
      ts: row.ts,
      entry: this.sealer.unseal(entryPurpose(id, row.seq), row.record, `entry ${row.seq} of team run ${id}`) as TeamRecordEntry,
    }));
  }

  /**
   * Runs a daemon that stopped left going are over: each is recorded as failed, with why. Called
   * once as the daemon starts, before any run of its own. Returns their ids.
   */
  async settleInterrupted(now = Date.now()): Promise<string[]> {
    const why = 'the daemon stopped while the run was going';
    const settled: string[] = [];
    for (const row of await this.rows.inStates(GOING)) {
      const from = row.state as TeamState;
      let record = row.record;
      try {
        const board = this.sealer.unseal(boardPurpose(row.id), row.record, `team run ${row.id} in the ledger`) as TeamBoard;
        record = this.sealer.seal(boardPurpose(row.id), { ...board, state: 'failed', why, endedAt: new Date(now).toISOString(), confirmations: [] });
      } catch (err) {
        // Its board stays as sealed; the row's state says how it ended all the same.
        this.logger.warn('a team run left going is recorded as failed, its board unread', { run_id: row.id, error: err instanceof Error ? err.message : String(err) });
      }
      const entry: TeamRecordEntry = { kind: 'state', from, to: 'failed', why };
      const events = this.sealedEntry(row.id, (await this.rows.lastSeq(row.id)) + 1, now, entry);
      await this.rows.put({ ...row, state: 'failed', ended_at: now, record }, events ? [events] : []);
      settled.push(row.id);
    }
    return settled;
  }

  /** Writes what waits, now (the daemon is closing). */
  dispose(): void {
    for (const followed of [...this.followed.values()]) {
      this.write(followed);
      this.stopFollowing(followed);
    }
  }

  /** A row read back: the row's state stands over its board's (a settled run's board may be unreadable). */
  private decode(row: TeamRunRow): RecordedRun {
    const state = row.state as TeamState;
    try {
      const board = this.sealer.unseal(boardPurpose(row.id), row.record, `team run ${row.id} in the ledger`) as TeamBoard;
      return { id: row.id, state, board: { ...board, state } };
    } catch (err) {
      return { id: row.id, state, sealed: err instanceof Error ? err.message : String(err) };
    }
  }

  private take(followed: Followed, entry: TeamRecordEntry): void {
    if (followed.nextSeq === undefined) followed.unnumbered.push({ ts: Date.now(), entry });
    else this.number(followed, Date.now(), entry);
  }

  /** Seals the entry under the run's next number and queues it for the next write. */
  private number(followed: Followed, ts: number, entry: TeamRecordEntry): void {
    if (followed.nextSeq === undefined) return;
    const row = this.sealedEntry(followed.run.id, followed.nextSeq, ts, entry);
    if (!row) return;
    followed.nextSeq++;
    followed.pending.push(row);
  }

  private sealedEntry(runId: string, seq: number, ts: number, entry: TeamRecordEntry): TeamEventRow | undefined {
    try {
      return { run_id: runId, seq, ts, kind: entry.kind, record: this.sealer.seal(entryPurpose(runId, seq), entry) };
    } catch (err) {
      this.logger.warn('a team run’s record entry could not be sealed', { run_id: runId, kind: entry.kind, error: err instanceof Error ? err.message : String(err) });
      return undefined;
    }
  }

  private schedule(followed: Followed): void {
    // Once ended, a change is rare and final (an answer arriving late): written at once.
    if (teamEnded(followed.run.state)) {
      this.write(followed);
      return;
    }
    followed.timer ??= setTimeout(() => {
      followed.timer = undefined;
      this.write(followed);
    }, BOARD_WRITE_MS);
  }

  private flush(id: string): void {
    const followed = this.followed.get(id);
    if (followed && (followed.timer !== undefined || followed.pending.length > 0)) this.write(followed);
  }

  private write(followed: Followed): void {
    if (followed.timer !== undefined) clearTimeout(followed.timer);
    followed.timer = undefined;
    const run = followed.run;
    const events = followed.pending.splice(0);
    const failed = (err: unknown): void => {
      // Kept for the next write, in order (the numbers have no gap), up to a cap past which the run goes unrecorded.
      if (followed.pending.length + events.length <= MAX_PENDING_ENTRIES) followed.pending.unshift(...events);
      // Logged once until a write works again; the run goes on unrecorded meanwhile.
      if (!followed.failed) this.logger.warn('a team run could not be recorded in the ledger', { run_id: run.id, error: err instanceof Error ? err.message : String(err), code: err instanceof SwitchboardError ? err.code : undefined });
      followed.failed = true;
    };
    try {
      const board = run.board();
      const kept: TeamBoard = { ...board, workers: board.workers.map((w) => ({ ...w, lastLines: [] })) };
      const row: TeamRunRow = { id: run.id, state: board.state, created_at: Date.parse(board.startedAt), ended_at: board.endedAt !== undefined ? Date.parse(board.endedAt) : null, record: this.sealer.seal(boardPurpose(run.id), kept) };
      this.rows.put(row, events).then(() => {
        followed.failed = false;
      }, failed);
    } catch (err) {
      failed(err);
    }
  }

  private stopFollowing(followed: Followed): void {
    if (followed.timer !== undefined) clearTimeout(followed.timer);
    followed.timer = undefined;
    followed.subscriptions.dispose();
    this.followed.delete(followed.run.id);
  }
}
