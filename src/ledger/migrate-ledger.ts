/**
 * Moves one ledger's contents into another (`switchboard ledger migrate`: a single machine's
 * SQLite ledger into PostgreSQL): every run and its events, read through the source's own export
 * (the whole record, not a list's preview) and written in batches of about BATCH_EVENTS events,
 * each batch one transaction; then the asks and the team runs with their records. Safe to run
 * again, or after a run that stopped half-way: the target records no run, event, ask or team
 * record twice (events and runs by their keys, asks by upsert, a team run's record from the number
 * past what the target has). At the end each run's count of events in the target is checked
 * against the source's.
 */
import { Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { SwitchboardError } from '../core/errors.js';
import type { LedgerStore, RunMove, RunRecord } from './ledger-store.js';
import type { RunEvent } from './run-events.js';
import type { RunSpec } from './run-model.js';

/** Events written per transaction, about (a run's events may end a batch a little past it). */
const BATCH_EVENTS = 5_000;
/** Team run record entries read at a time. */
const TEAM_EVENTS_PAGE = 1_000;
/** Asks and team runs are read whole: a bound far past any real ledger's count. */
const ALL_ROWS = Number.MAX_SAFE_INTEGER;

/** What a migration copied: rows read from the source and written (again, harmlessly, when the target had them). */
export interface LedgerMigration {
  runs: number;
  events: number;
  asks: number;
  teamRuns: number;
  /** Team run record entries the target did not have yet (those it had are not read). */
  teamEvents: number;
  /** Transactions written for runs and events. */
  batches: number;
}

/** Copies `source` into `target`; INTERNAL_ERROR when a run's events do not all arrive. */
export async function migrateLedger(source: LedgerStore, target: LedgerStore, options: { batchEvents?: number } = {}): Promise<LedgerMigration> {
  const result: LedgerMigration = { runs: 0, events: 0, asks: 0, teamRuns: 0, teamEvents: 0, batches: 0 };
  const batcher = new RunBatcher(target, options.batchEvents ?? BATCH_EVENTS, result);
  // The stream never fails (a failed batch would leave the export waiting for a drain): the first
  // failure is kept, the rest of the export passes through unwritten, and the failure is thrown after.
  let failure: Error | undefined;
  const into = new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      if (failure !== undefined) return done();
      batcher.take(chunk.toString()).then(
        () => done(),
        (err: unknown) => {
          failure = err instanceof Error ? err : new Error(String(err));
          done();
        },
      );
    },
  });
  await source.exportJsonl(into);
  // The export is done writing, not the stream taking: lines may still wait in its buffer.
  into.end();
  await finished(into);
  if (failure !== undefined) throw failure;
  await batcher.flush();
  await copyAsks(source, target, result);
  await copyTeamRuns(source, target, result);
  const short: string[] = [];
  for (const [id, events] of batcher.expected) {
    const there = await target.run(id);
    if (!there || there.events !== events) short.push(`${id} (${there?.events ?? 0} of ${events} events)`);
  }
  if (short.length > 0) throw new SwitchboardError('INTERNAL_ERROR', `the target ledger does not hold every run's events after the copy: ${short.slice(0, 5).join(', ')}${short.length > 5 ? `, and ${short.length - 5} more` : ''}`, { runs: short.length });
  return result;
}

/** Turns the export's lines into batches of runs and their events, written one after another. */
class RunBatcher {
  /** Each run's count of events in the source, for the check at the end. */
  readonly expected = new Map<string, number>();
  private runs: RunSpec[] = [];
  /** Each run's node as the source has it: a run copied before, and moved since, is moved in the target too. */
  private moves: RunMove[] = [];
  private events: RunEvent[] = [];
  private partial = '';

  constructor(
    private readonly target: LedgerStore,
    private readonly batchEvents: number,
    private readonly result: LedgerMigration,
  ) {}

  /** Takes some of the export's text (whole lines or not), writing a batch whenever one is full. */
  async take(text: string): Promise<void> {
    const lines = (this.partial + text).split('\n');
    this.partial = lines.pop() ?? '';
    for (const line of lines) {
      if (line === '') continue;
      const parsed = JSON.parse(line) as ({ kind: 'run' } & RunRecord) | ({ kind: 'event' } & RunEvent);
      if (parsed.kind === 'run') {
        this.runs.push(parsed.spec);
        if (parsed.spec.node !== undefined) this.moves.push({ run_id: parsed.spec.id, node: parsed.spec.node });
        this.expected.set(parsed.spec.id, parsed.events);
        this.result.runs++;
      } else {
        const { kind: _kind, ...event } = parsed;
        this.events.push(event);
        this.result.events++;
      }
      if (this.events.length >= this.batchEvents) await this.flush();
    }
  }

  /** Writes what is waiting as one batch. */
  async flush(): Promise<void> {
    if (this.runs.length === 0 && this.events.length === 0) return;
    const batch = { runs: this.runs, moves: this.moves, events: this.events };
    this.runs = [];
    this.moves = [];
    this.events = [];
    await this.target.write(batch);
    this.result.batches++;
  }
}

async function copyAsks(source: LedgerStore, target: LedgerStore, result: LedgerMigration): Promise<void> {
  if (!source.asks) return;
  if (!target.asks) throw new SwitchboardError('INVALID_PARAMS', 'the target ledger keeps no asks');
  const asks = await source.asks.newest(ALL_ROWS);
  await target.asks.putAll(asks);
  result.asks = asks.length;
}

async function copyTeamRuns(source: LedgerStore, target: LedgerStore, result: LedgerMigration): Promise<void> {
  if (!source.teams) return;
  if (!target.teams) throw new SwitchboardError('INVALID_PARAMS', 'the target ledger keeps no team runs');
  // Oldest first, so that the target's order of first writes (its tie-break) is the source's.
  const runs = (await source.teams.newest(ALL_ROWS)).reverse();
  for (const run of runs) {
    // A record entry the target has is never written again (its number is its key).
    let after = await target.teams.lastSeq(run.id);
    for (;;) {
      const page = await source.teams.events(run.id, after, TEAM_EVENTS_PAGE);
      try {
        await target.teams.put(run, page);
        result.teamEvents += page.length;
      } catch (err) {
        // Another migrator wrote these entries between our look and our write: nothing is missing.
        if ((await target.teams.lastSeq(run.id)) < (page.at(-1)?.seq ?? 0)) throw err;
      }
      if (page.length < TEAM_EVENTS_PAGE) break;
      after = page[page.length - 1]?.seq ?? after;
    }
    result.teamRuns++;
  }
}
