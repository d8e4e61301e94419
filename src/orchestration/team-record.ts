/**
 * Team runs in the ledger (issue 24 item 2; seed 003 §9, FR-105): each run's board (goal, preset,
 * plan, workers, state, draft, summary, calls, decisions) in its row, rewritten as the run
 * changes, and the run's record (TeamRecordEntry, every call, decision, held text, answer and
 * change), append-only and numbered. Both are sealed under the home's key: the ledger keeps in the
 * clear only what a run is found by (id, state, times, what kind an entry is). Workers' last lines
 * are not kept (§9.1: no terminal output on disk). A run outlives the daemon here: its board and
 * report are read back after a restart, and a run the daemon left going is recorded as failed.
 *
 * Recording never stands in a run's way: writes are not waited for, so a ledger over the network
 * (PostgreSQL) holds up no run. Each run has one write under way at a time, and what changes
 * meanwhile waits for it: a write that fails keeps its entries at the head of the queue, in their
 * order, and is tried again (every RETRY_MS while the run is followed), so the record never has a
 * gap or an entry out of order. A failure is logged once until a write works again; entries past
 * MAX_PENDING_ENTRIES are dropped and counted (never numbered, so still no gap), and what a run let
 * go of could not write is logged as lost. `settled` waits for every write under way (the daemon,
 * before it closes the ledger).
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
/** A write that failed is tried again this long after, while the run is followed. */
const RETRY_MS = 5_000;
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
  /** Numbered entries not yet in the ledger, in order (those of a failed write back at the head). */
  pending: TeamEventRow[];
  /** The board to write next, sealed when the write was asked for (the run may be gone when it goes out). */
  board: TeamRunRow | undefined;
  /** The last board sealed: what entries that come without a newer one are written with. */
  lastBoard: TeamRunRow | undefined;
  /** The run's write under way, if any: one at a time, so its entries reach the ledger in their order. */
  writing: Promise<void> | undefined;
  /** Writes asked for so far: one asked for while another was under way follows it. */
  asked: number;
  timer: NodeJS.Timeout | undefined;
  subscriptions: DisposableStore;
  failed: boolean;
  /** Let go of (unfollowed, or the daemon closing): what waits is written, and never tried again. */
  stopped: boolean;
  /** Entries dropped since the last that was kept (past MAX_PENDING_ENTRIES): said once. */
  dropped: number;
}

export class TeamRecord implements Disposable {
  private readonly followed = new Map<string, Followed>();
  /** Every run's write under way (runs let go of included), for `settled`. */
  private readonly writes = new Set<Promise<void>>();
  /** Runs let go of whose last write is still under way: a read of one waits for it. */
  private readonly lettingGo = new Map<string, Followed>();
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
      const followed: Followed = { run, nextSeq: undefined, unnumbered: [], pending: [], board: undefined, lastBoard: undefined, writing: undefined, asked: 0, timer: undefined, subscriptions: new DisposableStore(), failed: false, stopped: false, dropped: 0 };
      this.followed.set(run.id, followed);
      followed.subscriptions.add(run.onRecord((entry) => this.take(followed, entry)));
      followed.subscriptions.add(run.onChange(() => this.schedule(followed)));
      // The first write asks the ledger how far the run's record has got, then numbers from there.
      this.write(followed);
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
    await this.flushed(id);
    const row = await this.rows.get(id);
    return row ? this.decode(row) : undefined;
  }

  /** Whether run `id` is recorded (being followed, or in the ledger), without unsealing it. */
  async has(id: string): Promise<boolean> {
    return this.followed.has(id) || (await this.rows.get(id)) !== undefined;
  }

  /** The newest `limit` runs recorded, newest first. */
  async list(limit: number): Promise<RecordedRun[]> {
    await Promise.all([...this.followed.keys()].map((id) => this.flushed(id)));
    return (await this.rows.newest(limit)).map((row) => this.decode(row));
  }

  /** Run `id`'s record after entry `afterSeq`, in order, at most `limit`; KEY_MISMATCH when it cannot be unsealed. */
  async entries(id: string, afterSeq: number, limit: number): Promise<RecordedEntry[]> {
    await this.flushed(id);
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

  /** Writes what waits, now (the daemon is closing; `settled` says when it is in the ledger). */
  dispose(): void {
    for (const followed of [...this.followed.values()]) {
      this.write(followed);
      this.stopFollowing(followed);
    }
  }

  /** Resolves once no write is under way (each has gone into the ledger, or failed and been logged). */
  async settled(): Promise<void> {
    while (this.writes.size > 0) await Promise.allSettled([...this.writes]);
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
    if (followed.pending.length + followed.unnumbered.length >= MAX_PENDING_ENTRIES) {
      // Not numbered: the entries kept and those after them have no gap between them.
      if (followed.dropped++ === 0) this.logger.error('a team run’s record entries are dropped: the ledger has not taken those before them', { run_id: followed.run.id, waiting: MAX_PENDING_ENTRIES });
      return;
    }
    if (followed.dropped > 0) this.logger.warn('a team run’s record is kept again', { run_id: followed.run.id, dropped: followed.dropped });
    followed.dropped = 0;
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

  /** Writes what waits for run `id` and resolves once no write of it is under way (whatever its outcome). */
  private async flushed(id: string): Promise<void> {
    const followed = this.followed.get(id) ?? this.lettingGo.get(id);
    if (!followed) return;
    if (!followed.stopped && (followed.timer !== undefined || followed.pending.length > 0 || followed.unnumbered.length > 0)) this.write(followed);
    while (followed.writing) await followed.writing;
  }

  /** Seals the board as it stands now and has it written, with the entries waiting, after the write under way. */
  private write(followed: Followed): void {
    if (followed.timer !== undefined) clearTimeout(followed.timer);
    followed.timer = undefined;
    followed.asked++;
    try {
      const board = followed.run.board();
      const kept: TeamBoard = { ...board, workers: board.workers.map((w) => ({ ...w, lastLines: [] })) };
      followed.board = { id: followed.run.id, state: board.state, created_at: Date.parse(board.startedAt), ended_at: board.endedAt !== undefined ? Date.parse(board.endedAt) : null, record: this.sealer.seal(boardPurpose(followed.run.id), kept) };
      followed.lastBoard = followed.board;
    } catch (err) {
      // The entries still go, with the last board sealed; without one they wait for the next try.
      this.failed(followed, err);
    }
    this.startWriting(followed);
  }

  /** Starts the run's next write unless one is under way (that one starts the next when it ends). */
  private startWriting(followed: Followed): void {
    if (followed.writing) return;
    const asked = followed.asked;
    const writing = this.writeWaiting(followed).then((written) => {
      followed.writing = undefined;
      this.writes.delete(writing);
      // Asked for while this one was under way: it goes now, whatever this one's outcome.
      if (followed.asked > asked) this.startWriting(followed);
      else if (followed.stopped) {
        if (this.lettingGo.get(followed.run.id) === followed) this.lettingGo.delete(followed.run.id);
        if (!written) this.logger.error('a team run let go of could not be recorded in the ledger: its last board and record entries are lost', { run_id: followed.run.id, entries: followed.pending.length + followed.unnumbered.length });
      } else if (!written) {
        followed.timer ??= setTimeout(() => {
          followed.timer = undefined;
          this.write(followed);
        }, RETRY_MS);
      }
    });
    followed.writing = writing;
    this.writes.add(writing);
  }

  /** One write: the board waiting and every entry waiting; false when it failed (what it held waits again, at the head). Never rejects. */
  private async writeWaiting(followed: Followed): Promise<boolean> {
    try {
      if (followed.nextSeq === undefined) {
        followed.nextSeq = (await this.rows.lastSeq(followed.run.id)) + 1;
        for (const { ts, entry } of followed.unnumbered.splice(0)) this.number(followed, ts, entry);
      }
    } catch (err) {
      this.failed(followed, err);
      return false;
    }
    const row = followed.board ?? (followed.pending.length > 0 ? followed.lastBoard : undefined);
    // Nothing sealed to write the entries with (sealing failed, logged): they wait for the next try.
    if (row === undefined) return followed.pending.length === 0;
    const events = followed.pending.splice(0);
    followed.board = undefined;
    try {
      await this.rows.put(row, events);
      followed.failed = false;
      return true;
    } catch (err) {
      followed.pending.unshift(...events);
      followed.board ??= row;
      this.failed(followed, err);
      return false;
    }
  }

  /** A write that failed: said once until one works again. */
  private failed(followed: Followed, err: unknown): void {
    if (!followed.failed) this.logger.warn('a team run could not be recorded in the ledger (tried again; said once until a write works)', { run_id: followed.run.id, error: err instanceof Error ? err.message : String(err), code: err instanceof SwitchboardError ? err.code : undefined });
    followed.failed = true;
  }

  private stopFollowing(followed: Followed): void {
    if (followed.timer !== undefined) clearTimeout(followed.timer);
    followed.timer = undefined;
    followed.stopped = true;
    followed.subscriptions.dispose();
    this.followed.delete(followed.run.id);
    if (followed.writing) this.lettingGo.set(followed.run.id, followed);
  }
}
