/**
 * TeamRecord over a ledger whose writes end later, and may fail (PostgreSQL's, over the network):
 * one write of a run at a time, so its record reaches the ledger in order and without a gap even
 * when a write fails after later entries were taken; a failed write tried again; and `settled`
 * waiting for what is under way. Each write here ends when the test says, never after a set time.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Emitter } from '../core/emitter.js';
import type { Logger } from '../core/logger.js';
import type { TeamEventRow, TeamRows, TeamRunRow } from '../ledger/index.js';
import { TeamRecord } from './team-record.js';
import type { Sealer } from './sealed-store.js';
import type { TeamBoard, TeamRecordEntry, TeamRun } from './team-run.js';

/** A write the ledger has been asked for, ended by the test. */
interface PutCall {
  row: TeamRunRow;
  events: readonly TeamEventRow[];
  succeed(): void;
  fail(): void;
}

/** Team rows whose writes wait for the test; what succeeded is kept, in the order it landed. */
class SlowRows implements TeamRows {
  readonly puts: PutCall[] = [];
  readonly landed: TeamEventRow[] = [];
  lastRow: TeamRunRow | undefined;

  put(row: TeamRunRow, events: readonly TeamEventRow[]): Promise<void> {
    return new Promise((resolve, reject) => {
      this.puts.push({
        row,
        events,
        succeed: () => {
          this.landed.push(...events);
          this.lastRow = row;
          resolve();
        },
        fail: () => reject(new Error('the ledger went away')),
      });
    });
  }
  get(): Promise<TeamRunRow | undefined> {
    return Promise.resolve(this.lastRow);
  }
  newest(): Promise<TeamRunRow[]> {
    return Promise.resolve(this.lastRow ? [this.lastRow] : []);
  }
  events(): Promise<TeamEventRow[]> {
    return Promise.resolve([...this.landed]);
  }
  lastSeq(): Promise<number> {
    return Promise.resolve(this.landed.at(-1)?.seq ?? 0);
  }
  inStates(): Promise<TeamRunRow[]> {
    return Promise.resolve([]);
  }

  /** The write asked for `n`th (1-based), once it has been asked for. */
  async nth(n: number): Promise<PutCall> {
    await vi.waitUntil(() => this.puts.length >= n);
    return this.puts[n - 1] as PutCall;
  }
}

const sealer: Sealer = {
  seal: (purpose, value) => JSON.stringify({ purpose, value }),
  unseal: (_purpose, text) => (JSON.parse(text) as { value: unknown }).value,
};

/** A run as TeamRecord sees it: an id, a board, and its two events. */
function fakeRun(id: string): { run: TeamRun; entry(n: number): void; change(): void } {
  const records = new Emitter<TeamRecordEntry>();
  const changes = new Emitter<void>();
  let version = 0;
  const board = (): TeamBoard => ({ id, goal: 'g', preset: 'p', state: 'running', why: '', version, startedAt: new Date(1_000).toISOString(), planner: { role: 'lead', agent: 'a', paneId: null, state: 'idle' }, workers: [], tasks: [], nextStep: null, confirmations: [], calls: [], approvals: [], draft: '', summary: null });
  const run = { id, state: 'running', board, onRecord: records.event, onChange: changes.event } as unknown as TeamRun;
  return {
    run,
    entry: (n) => records.fire({ kind: 'moving', worker: `w${n}` }),
    change: () => {
      version++;
      changes.fire();
    },
  };
}

function keeper(): Logger & { lines: { level: string; msg: string; fields?: Record<string, unknown> }[] } {
  const lines: { level: string; msg: string; fields?: Record<string, unknown> }[] = [];
  const at =
    (level: string) =>
    (msg: string, fields?: Record<string, unknown>): void => {
      lines.push({ level, msg, ...(fields ? { fields } : {}) });
    };
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') } as Logger & { lines: typeof lines };
}

const seqs = (rows: readonly { seq: number }[]): number[] => rows.map((r) => r.seq);

describe('the team record over a ledger whose writes end later', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('writes a run one write at a time: entries taken during a write that fails land after it, in order, with no gap', async () => {
    const rows = new SlowRows();
    const record = new TeamRecord(rows, sealer);
    const r = fakeRun('team-1');
    record.follow(r.run);
    const first = await rows.nth(1);
    expect(seqs(first.events)).toEqual([]);
    r.entry(1);
    r.entry(2);
    // A read asks for a write while the first is under way: it waits for it.
    const reading = record.read('team-1');
    r.entry(3);
    expect(rows.puts).toHaveLength(1);
    first.succeed();
    const second = await rows.nth(2);
    expect(seqs(second.events)).toEqual([1, 2, 3]);
    r.entry(4);
    // A change while the second write is under way, which then fails.
    r.change();
    const flushing = record.entries('team-1', 0, 10);
    second.fail();
    // Tried again at once (a write was asked for meanwhile): the failed entries first, then the new one.
    const third = await rows.nth(3);
    expect(seqs(third.events)).toEqual([1, 2, 3, 4]);
    third.succeed();
    await reading;
    expect(seqs(await flushing)).toEqual([1, 2, 3, 4]);
    expect(seqs(rows.landed)).toEqual([1, 2, 3, 4]);
    await record.settled();
    // Let go of: its board as it stands, once more.
    record.dispose();
    (await rows.nth(4)).succeed();
    await record.settled();
    expect(rows.puts).toHaveLength(4);
  });

  it('tries a failed write again later, says so once, and settles only when nothing is under way', async () => {
    // The retry's wait only: the test moves the clock.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const rows = new SlowRows();
    const logger = keeper();
    const record = new TeamRecord(rows, sealer, { logger });
    const r = fakeRun('team-2');
    record.follow(r.run);
    r.entry(1);
    (await rows.nth(1)).fail();
    await vi.waitUntil(() => logger.lines.length > 0);
    expect(logger.lines).toMatchObject([{ level: 'warn', fields: { run_id: 'team-2' } }]);
    // Nothing asked for a write since: none goes until the retry's time.
    await Promise.resolve();
    expect(rows.puts).toHaveLength(1);
    r.entry(2);
    await vi.advanceTimersByTimeAsync(5_000);
    const retry = await rows.nth(2);
    expect(seqs(retry.events)).toEqual([1, 2]);
    retry.fail();
    await vi.advanceTimersByTimeAsync(5_000);
    const again = await rows.nth(3);
    // Still one warning for the two failures.
    expect(logger.lines.filter((l) => l.level === 'warn')).toHaveLength(1);
    let settled = false;
    const settling = record.settled().then(() => {
      settled = true;
    });
    await Promise.resolve();
    expect(settled).toBe(false);
    again.succeed();
    await settling;
    expect(seqs(rows.landed)).toEqual([1, 2]);
    record.dispose();
    (await rows.nth(4)).succeed();
    await record.settled();
  });

  it('logs what a run let go of could not write, with how many entries are lost', async () => {
    const rows = new SlowRows();
    const logger = keeper();
    const record = new TeamRecord(rows, sealer, { logger });
    const r = fakeRun('team-3');
    record.follow(r.run);
    (await rows.nth(1)).succeed();
    r.entry(1);
    r.entry(2);
    record.dispose();
    const last = await rows.nth(2);
    expect(seqs(last.events)).toEqual([1, 2]);
    last.fail();
    await record.settled();
    expect(logger.lines.filter((l) => l.level === 'error')).toMatchObject([{ fields: { run_id: 'team-3', entries: 2 } }]);
    // Let go of: never tried again.
    expect(rows.puts).toHaveLength(2);
  });
});
