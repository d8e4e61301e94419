/**
 * The Run Ledger (seed 004): every run and every event of it, numbered per run (1, 2, 3, … with no
 * gap), kept by a LedgerStore. Appending is synchronous and cheap: the event is numbered, handed to
 * live readers at once, and queued; the queue goes to the store in one transaction per turn of the
 * event loop (or sooner when it is long), which is what makes tens of thousands of events a second
 * possible. A reader subscribes from any sequence number and gets the recorded events, then the
 * live ones, with no gap and no duplicate, ending with the run's `done`.
 *
 * Raw terminal output is not recorded unless `rawOutput` is on (seed 003's privacy rule): an
 * `output` event is then dropped before it is numbered, so the numbering has no hole.
 */
import path from 'node:path';
import type { Writable } from 'node:stream';
import { Emitter } from '../core/emitter.js';
import type { Disposable } from '../core/disposable.js';
import { SwitchboardError, errorMessage } from '../core/errors.js';
import { silentLogger, type Logger } from '../core/logger.js';
import { ensurePrivateDir, switchboardHome } from '../platform/index.js';
import type { RunSpec } from './run-model.js';
import type { NewRunEvent, RunEvent } from './run-events.js';
import type { LedgerBatch, LedgerStore, PruneResult, RetentionRule, RunPage, RunMove, RunQuery, RunRecord } from './ledger-store.js';
import type { TeamRows } from './team-rows.js';
import type { AskRows } from './ask-rows.js';
import { SqliteLedgerStore } from './sqlite-store.js';

/** The ledger's file in the Switchboard home ($SWITCHBOARD_HOME moves it). */
export const LEDGER_FILE = 'ledger.db';
/** Past this many queued events, a write goes out at once instead of at the end of the turn. */
const FLUSH_AT_EVENTS = 8_192;
/** Events read from the store at a time when a reader catches up. */
const REPLAY_PAGE = 1_000;
/** While the store refuses writes, how long before the queued events are tried again. */
const RETRY_MS = 1_000;
/** Events kept for a store that refuses writes; past this the oldest are dropped (and logged). */
const MAX_UNWRITTEN_EVENTS = 200_000;

export interface RunLedgerOptions {
  store: LedgerStore;
  /** Record raw terminal output (`output` events); off by default. */
  rawOutput?: boolean;
  logger?: Logger;
}

export interface SubscribeOptions {
  /**
   * Called once after the run's `done` was delivered, or at once after the catch-up when the run had
   * ended before and the reader resumed at or past its `done` (not when the subscription is disposed).
   */
  onEnd?: () => void;
  /** Called once if reading the recorded events fails; nothing is delivered after it. */
  onError?: (err: Error) => void;
}

/** The ledger's side of a run not yet ended: its next event number and its live readers. */
interface RunTail {
  nextSeq: number;
  emitter: Emitter<RunEvent>;
}

export class RunLedger {
  private readonly store: LedgerStore;
  private readonly logger: Logger;
  private readonly rawOutput: boolean;
  private readonly live = new Map<string, RunTail>();
  private pendingRuns: RunSpec[] = [];
  private pendingEvents: RunEvent[] = [];
  private pendingMoves: RunMove[] = [];
  /** Cancels the write scheduled for the end of this turn (or, while failing, for RETRY_MS from now). */
  private scheduled: (() => void) | undefined;
  private writing: Promise<void> = Promise.resolve();
  /** The last write failed (its batch waits for the next): said once, and tried again every RETRY_MS rather than every turn. */
  private failing = false;
  private closed = false;
  /** Closing: a write that fails now is not tried again. */
  private closing = false;

  constructor(options: RunLedgerOptions) {
    this.store = options.store;
    this.rawOutput = options.rawOutput ?? false;
    this.logger = options.logger ?? silentLogger;
  }

  /** The ledger in SQLite at `<home>/ledger.db` (home: $SWITCHBOARD_HOME or ~/.switchboard, made private). */
  static openSqlite(options: { home?: string; file?: string; rawOutput?: boolean; logger?: Logger } = {}): RunLedger {
    const home = options.home ?? switchboardHome();
    const file = options.file ?? path.join(home, LEDGER_FILE);
    if (options.file === undefined) ensurePrivateDir(home);
    return new RunLedger({ store: new SqliteLedgerStore(file), rawOutput: options.rawOutput ?? false, logger: options.logger ?? silentLogger });
  }

  get recordsRawOutput(): boolean {
    return this.rawOutput;
  }

  /** Where the store keeps asks between agents (undefined for a store that does not). */
  get asks(): AskRows | undefined {
    return this.store.asks;
  }

  /** Where the store keeps team runs (undefined for a store that does not). */
  get teams(): TeamRows | undefined {
    return this.store.teams;
  }

  /** Records a new run (its events follow with `append`). */
  createRun(spec: RunSpec): void {
    this.assertOpen();
    if (this.live.has(spec.id)) throw new SwitchboardError('INVALID_PARAMS', `run ${spec.id} is already in the ledger`, { run_id: spec.id });
    this.live.set(spec.id, { nextSeq: 1, emitter: new Emitter() });
    this.pendingRuns.push(spec);
    this.schedule();
  }

  /**
   * Records that run `runId`, not yet on any node, goes to `node` instead of the one it was
   * recorded for (RunMove): its record says so once written, and so does every read after this call.
   */
  moveRun(runId: string, node: string): void {
    this.assertOpen();
    if (!this.live.has(runId)) throw notLive(runId);
    this.pendingMoves.push({ run_id: runId, node });
    this.schedule();
  }

  /** Takes up a run recorded by an earlier service (to record how it ended): its numbering goes on from `lastSeq`. */
  resumeRun(runId: string, lastSeq: number): void {
    this.assertOpen();
    if (!this.live.has(runId)) this.live.set(runId, { nextSeq: lastSeq + 1, emitter: new Emitter() });
  }

  /**
   * Numbers an event, gives it to live readers and queues it for the store. Undefined for raw
   * output when it is not recorded. A `done` is the run's last event: the run stops being live.
   */
  append(runId: string, event: NewRunEvent): RunEvent | undefined {
    this.assertOpen();
    if (event.type === 'output' && !this.rawOutput) return undefined;
    const run = this.live.get(runId);
    if (!run) throw notLive(runId);
    const recorded: RunEvent = { run_id: runId, seq: run.nextSeq++, ts: event.ts, type: event.type, data: event.data, compat: event.compat };
    this.take(run, recorded);
    return recorded;
  }

  /**
   * Records an event numbered elsewhere (a cluster node runs the run and numbers its events; the
   * controller's ledger takes them as they come), with its own number, once: an event at or below
   * the last one taken is one this ledger has (a delivery again) and is ignored (false). One past
   * a gap is taken, the numbers skipped left out (they were never stored: the intake fetched the gap
   * and found nothing). Live readers get it as an appended one, and the store writes it ON CONFLICT
   * DO NOTHING on (run_id, seq), so its `state` events move the run's status and its `done` ends the
   * run here as on the node. The run must be live here (createRun, or resumeRun after a restart):
   * INVALID_PARAMS otherwise. Raw output is kept as the node sent it (the node's policy recorded it).
   */
  ingest(event: RunEvent): boolean {
    this.assertOpen();
    const run = this.live.get(event.run_id);
    if (!run) throw notLive(event.run_id);
    if (!Number.isInteger(event.seq) || event.seq < 1) throw new SwitchboardError('INVALID_PARAMS', `event ${String(event.seq)} of run ${event.run_id} has no sequence number`, { run_id: event.run_id });
    if (event.seq < run.nextSeq) return false;
    if (event.seq > run.nextSeq) this.logger.warn('a run event came after a gap: the numbers between were never stored', { run_id: event.run_id, from: run.nextSeq, to: event.seq - 1 });
    run.nextSeq = event.seq + 1;
    this.take(run, { run_id: event.run_id, seq: event.seq, ts: event.ts, type: event.type, data: event.data, compat: event.compat });
    return true;
  }

  /** A numbered event into the queue for the store and to the run's live readers; a `done` ends the run. */
  private take(run: RunTail, recorded: RunEvent): void {
    const runId = recorded.run_id;
    this.pendingEvents.push(recorded);
    if (recorded.type === 'done') this.live.delete(runId);
    try {
      run.emitter.fire(recorded);
    } catch (err) {
      this.logger.warn('a run event reader failed', { run_id: runId, error: errorMessage(err) });
    }
    if (recorded.type === 'done') run.emitter.dispose();
    if (this.pendingEvents.length >= FLUSH_AT_EVENTS && !this.failing) void this.flush().catch(() => undefined);
    else this.schedule();
  }

  /** True while the run can still get events in this ledger. */
  isLive(runId: string): boolean {
    return this.live.has(runId);
  }

  /**
   * Writes everything queued; resolves once it is in the store. A write that fails rejects this
   * flush and keeps its batch, ahead of what came since, for the next one: the store records a
   * batch written again once (a run by its id, an event by its run and number), so nothing is lost
   * to a store that was away for a while, and no run's events reach it out of order.
   */
  flush(): Promise<void> {
    this.unschedule();
    if (this.pendingRuns.length === 0 && this.pendingMoves.length === 0 && this.pendingEvents.length === 0) return this.writing;
    // Writes go out one after another, in order, whatever the store's own timing; each takes what
    // is queued when its turn comes, so one queued behind a failed write takes that write's batch too.
    const result = this.writing.then(() => this.writeQueued());
    // A failed write fails the flushes that asked for it, not every later one.
    this.writing = result.catch(() => undefined);
    return result;
  }

  /** A run's recorded events after `afterSeq` (everything appended so far included). */
  async events(runId: string, afterSeq = 0, limit = REPLAY_PAGE, maxBytes?: number): Promise<RunEvent[]> {
    await this.flush();
    return this.store.events(runId, afterSeq, limit, maxBytes);
  }

  async run(runId: string): Promise<RunRecord | undefined> {
    await this.flush();
    return this.store.run(runId);
  }

  /** A page of runs, newest first, prompts as previews. */
  async runs(query: RunQuery = {}): Promise<RunPage> {
    await this.flush();
    return this.store.runs(query);
  }

  async unfinished(): Promise<RunRecord[]> {
    await this.flush();
    return this.store.unfinished();
  }

  /**
   * Every event of the run after `afterSeq`, recorded then live, each once and in order, ending
   * after `done`. The live listener is attached before the store is read, and anything it hears
   * that the read already delivered is skipped by its number: no gap, no duplicate.
   */
  subscribe(runId: string, afterSeq: number, listener: (event: RunEvent) => void, options: SubscribeOptions = {}): Disposable {
    let last = afterSeq;
    let held: RunEvent[] | null = [];
    let stopped = false;
    const deliver = (event: RunEvent): void => {
      if (stopped || event.seq <= last) return;
      last = event.seq;
      listener(event);
      if (event.type === 'done') {
        stop();
        options.onEnd?.();
      }
    };
    const liveRun = this.live.get(runId);
    const sub = liveRun?.emitter.event((event) => {
      if (held) held.push(event);
      else deliver(event);
    });
    const stop = (): void => {
      stopped = true;
      sub?.dispose();
    };
    const catchUp = async (): Promise<void> => {
      await this.flush();
      for (;;) {
        const page = await this.store.events(runId, last, REPLAY_PAGE);
        for (const event of page) deliver(event);
        if (stopped || page.length < REPLAY_PAGE) break;
      }
      const waiting = held ?? [];
      held = null;
      for (const event of waiting) deliver(event);
      // A run that was over before this subscription (no live numbering) has nothing more to send:
      // a reader that resumed at or past its `done` ends here instead of waiting forever.
      if (!liveRun && !stopped) {
        stop();
        options.onEnd?.();
      }
    };
    catchUp().catch((err: unknown) => {
      if (stopped) return;
      stop();
      options.onError?.(err instanceof Error ? err : new Error(String(err)));
    });
    return { dispose: stop };
  }

  prune(rule: RetentionRule, now = Date.now()): Promise<PruneResult> {
    return this.flush().then(() => this.store.prune(rule, now));
  }

  /** The ledger as JSON lines (every run, or those named): see LedgerStore.exportJsonl. */
  async exportJsonl(out: Writable, runIds?: readonly string[]): Promise<number> {
    await this.flush();
    return this.store.exportJsonl(out, runIds);
  }

  check(): Promise<string> {
    return this.flush().then(() => this.store.check());
  }

  /** Writes what is queued and closes the store. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closing = true;
    await this.flush().catch(() => {
      this.logger.error('the run ledger closes with events it could not write: they are lost', { events: this.pendingEvents.length, runs: this.pendingRuns.length });
    });
    this.closed = true;
    for (const run of this.live.values()) run.emitter.dispose();
    this.live.clear();
    await this.store.close();
  }

  private async writeQueued(): Promise<void> {
    if (this.pendingRuns.length === 0 && this.pendingMoves.length === 0 && this.pendingEvents.length === 0) return;
    const batch = { runs: this.pendingRuns, moves: this.pendingMoves, events: this.pendingEvents } satisfies LedgerBatch;
    this.pendingRuns = [];
    this.pendingMoves = [];
    this.pendingEvents = [];
    try {
      await this.store.write(batch);
    } catch (err) {
      this.pendingRuns = [...batch.runs, ...this.pendingRuns];
      this.pendingMoves = [...batch.moves, ...this.pendingMoves];
      this.pendingEvents = [...batch.events, ...this.pendingEvents];
      const dropped = this.dropPastBound();
      if (!this.failing) this.logger.error('the run ledger could not write (kept and written again; said once until a write works)', { events: batch.events.length, runs: batch.runs.length, error: errorMessage(err) });
      if (dropped > 0) this.logger.error('the run ledger dropped events it could not write: more were waiting than it keeps', { dropped, kept: this.pendingEvents.length });
      this.failing = true;
      // Tried again later even if nothing more is appended (unless this was the last try, at close).
      if (!this.closing) this.schedule();
      throw err;
    }
    if (this.failing) this.logger.info('the run ledger writes again', { events: batch.events.length });
    this.failing = false;
  }

  /** Past MAX_UNWRITTEN_EVENTS waiting, the oldest go (how many is returned and logged): memory stays bounded while a store is away. */
  private dropPastBound(): number {
    const over = this.pendingEvents.length - MAX_UNWRITTEN_EVENTS;
    if (over <= 0) return 0;
    this.pendingEvents = this.pendingEvents.slice(over);
    return over;
  }

  private schedule(): void {
    if (this.scheduled) return;
    const write = (): void => {
      this.scheduled = undefined;
      this.flush().catch(() => undefined);
    };
    // While the store refuses writes, the next try waits a while instead of coming every turn.
    if (this.failing) {
      const timer = setTimeout(write, RETRY_MS);
      this.scheduled = () => clearTimeout(timer);
    } else {
      const immediate = setImmediate(write);
      this.scheduled = () => clearImmediate(immediate);
    }
  }

  private unschedule(): void {
    this.scheduled?.();
    this.scheduled = undefined;
  }

  private assertOpen(): void {
    if (this.closed) throw new SwitchboardError('SHUTTING_DOWN', 'the run ledger is closed');
  }
}

function notLive(runId: string): SwitchboardError {
  return new SwitchboardError('INVALID_PARAMS', `run ${runId} is not live in this ledger (unknown, or already done)`, { run_id: runId });
}
