import { afterEach, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { Emitter } from '../core/emitter.js';
import type { Logger } from '../core/logger.js';
import type { AgentState } from '../agents/index.js';
import { LEDGER_FILE, RunLedger, type AskRows } from '../ledger/index.js';
import { AskEngine } from './engine.js';
import { interruptAsk, LedgerAskRecorder } from './ledger-recorder.js';
import { newAskLife } from './lifecycle.js';
import { MAX_KEPT_ASKS, MemoryAskRecorder } from './memory-recorder.js';
import type { AskDirectory, AskRecord, AskTarget } from './types.js';

const dirs: string[] = [];
const ledgers: RunLedger[] = [];
const engines: AskEngine[] = [];
afterEach(async () => {
  for (const e of engines.splice(0)) e.dispose();
  for (const l of ledgers.splice(0)) await l.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function home(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'sb-ask-ledger-'));
  dirs.push(dir);
  return path.join(dir, 'home');
}

function openLedger(dir: string): RunLedger {
  const ledger = RunLedger.openSqlite({ home: dir });
  ledgers.push(ledger);
  return ledger;
}

/** A daemon's start: the ledger opened, the asks a dead one left settled. */
async function start(dir: string, now?: number, logger?: Logger): Promise<{ ledger: RunLedger; recorder: LedgerAskRecorder; interrupted: string[] }> {
  const ledger = openLedger(dir);
  const rows = ledger.asks;
  if (!rows) throw new Error('the SQLite ledger keeps asks');
  return { ledger, ...(await LedgerAskRecorder.open({ rows, ...(now !== undefined ? { now } : {}), ...(logger ? { logger } : {}) })) };
}

/** A logger that keeps what it was told. */
function keeper(): Logger & { lines: { level: string; msg: string; fields: Record<string, unknown> | undefined }[] } {
  const lines: { level: string; msg: string; fields: Record<string, unknown> | undefined }[] = [];
  const at =
    (level: string) =>
    (msg: string, fields?: Record<string, unknown>): void => {
      lines.push({ level, msg, fields });
    };
  const logger = { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error'), child: () => logger };
  return logger;
}

let counter = 0;
/** A queued ask, ten hex digits as the engine's ids are. */
function ask(extra: Partial<AskRecord> = {}): AskRecord {
  counter++;
  return {
    ...newAskLife(1_000 + counter),
    id: counter.toString(16).padStart(10, '0'),
    from: null,
    target: { paneId: 'p-target', agent: 'codex', title: 'codex' },
    question: `question ${counter}`,
    queuedBehind: 0,
    delivery: 'none',
    deliveredAt: null,
    deliveryError: null,
    ...extra,
  };
}

/** An ask with every field set to something other than its default. */
function everyField(): AskRecord {
  return ask({
    status: 'done',
    createdAt: 1_700_000_000_001,
    startedAt: 1_700_000_000_002,
    typedAt: 1_700_000_000_003,
    endedAt: 1_700_000_000_004,
    reply: 'Paris is the capital of France.\nWith a second line, "quotes" and ünïcödé ✓',
    replySource: 'transcript',
    endSignal: 'event_msg/task_complete',
    endRecordAt: 1_700_000_000_005,
    transcript: '/home/u/.codex/sessions/rollout-1.jsonl',
    error: { code: 'AGENT_ERROR', message: 'kept even on a done ask, as a record may carry it' },
    from: { paneId: 'p-asker', cwd: '/work/asker', name: 'claude' },
    target: { paneId: 'p-target', agent: null, title: 'a pane title' },
    question: 'What is the capital of France?\n  (indented, and a tab\t)',
    queuedBehind: 3,
    delivery: 'failed',
    deliveredAt: 1_700_000_000_006,
    deliveryError: { code: 'PANE_EXITED', message: "the asker's pane exited" },
  });
}

/** The asks table as it is on disk, read with a connection of its own. */
function rawRows(dir: string): Record<string, unknown>[] {
  const db = new Database(path.join(dir, LEDGER_FILE), { readonly: true });
  try {
    return db.prepare('SELECT * FROM asks ORDER BY rowid').all() as Record<string, unknown>[];
  } finally {
    db.close();
  }
}

describe('the ledger ask recorder', () => {
  it('keeps every field of a record, across a close and a reopen of the file', async () => {
    const dir = home();
    const first = await start(dir);
    const full = everyField();
    const bare = ask({ from: { name: 'cli' }, status: 'cancelled', endedAt: 2_000 });
    first.recorder.record(full);
    first.recorder.record(bare);
    await first.ledger.close();

    const again = await start(dir);
    expect(again.interrupted).toEqual([]);
    expect(await again.recorder.get(full.id)).toStrictEqual(full);
    expect(await again.recorder.get(bare.id)).toStrictEqual(bare);
    expect((await again.recorder.list())).toStrictEqual([bare, full]);
    expect(await again.recorder.get('ffffffffff')).toBeUndefined();
  });

  it('rewrites one row per ask on every change, its columns following the record', async () => {
    const dir = home();
    const { recorder } = await start(dir);
    const a = ask({ from: { paneId: 'p-asker', name: 'claude' }, delivery: 'pending' });
    recorder.record(a);
    recorder.record({ ...a, status: 'typing', startedAt: 2_000 });
    recorder.record({ ...a, status: 'waiting', startedAt: 2_000, typedAt: 2_100 });
    const done: AskRecord = { ...a, status: 'done', startedAt: 2_000, typedAt: 2_100, endedAt: 3_000, reply: 'yes', replySource: 'screen', delivery: 'delivering' };
    recorder.record(done);
    expect(await recorder.get(a.id)).toStrictEqual(done);
    const rows = rawRows(dir);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toEqual({ id: a.id, status: 'done', created_at: a.createdAt, ended_at: 3_000, target_pane: 'p-target', asker_pane: 'p-asker', asker_name: 'claude', delivery: 'delivering', record: JSON.stringify(done) });
  });

  it('lists the newest asks by creation, oldest first, whatever order they changed in', async () => {
    const { recorder } = await start(home());
    const asks = Array.from({ length: MAX_KEPT_ASKS + 5 }, () => ask());
    for (const a of asks) recorder.record(a);
    // Two asks made in the same millisecond keep the order they were made in.
    const twin = ask({ createdAt: asks.at(-1)?.createdAt ?? 0 });
    recorder.record(twin);
    // A change to an old ask does not move it.
    recorder.record({ ...asks[10]!, status: 'cancelled', endedAt: 9_999 });
    const listed = (await recorder.list());
    expect(listed).toHaveLength(MAX_KEPT_ASKS);
    expect(listed.map((a) => a.id)).toEqual([...asks.slice(6), twin].map((a) => a.id));
    expect(listed.find((a) => a.id === asks[10]!.id)?.status).toBe('cancelled');
  });

  it('records the asks a dead daemon left in flight as failed (interrupted), and their deliveries as failed, once', async () => {
    const dir = home();
    const first = await start(dir);
    const queued = ask();
    const typing = ask({ status: 'typing', startedAt: 1_500 });
    const waiting = ask({ status: 'waiting', startedAt: 1_500, typedAt: 1_600, delivery: 'pending', from: { paneId: 'p-asker' } });
    const answeredUndelivered = ask({ status: 'done', startedAt: 1_500, typedAt: 1_600, endedAt: 1_700, reply: 'an answer', replySource: 'transcript', delivery: 'delivering', from: { paneId: 'p-asker' } });
    const done = ask({ status: 'done', endedAt: 1_700, reply: 'fine', replySource: 'screen', delivery: 'delivered', deliveredAt: 1_800, from: { paneId: 'p-asker' } });
    const cancelled = ask({ status: 'cancelled', endedAt: 1_700 });
    for (const a of [queued, typing, waiting, answeredUndelivered, done, cancelled]) first.recorder.record(a);
    // The daemon dies: nothing more is written.
    await first.ledger.close();

    const restartedAt = 50_000;
    const logger = keeper();
    const second = await start(dir, restartedAt, logger);
    expect(second.interrupted).toEqual([queued.id, typing.id, waiting.id, answeredUndelivered.id]);
    const interrupted = { code: 'SHUTTING_DOWN', message: expect.stringMatching(/^interrupted: .*stopped before it ended \(a restart found it in flight\)$/) as unknown };
    expect(await second.recorder.get(queued.id)).toStrictEqual({ ...queued, status: 'failed', endedAt: restartedAt, error: interrupted });
    expect(await second.recorder.get(typing.id)).toStrictEqual({ ...typing, status: 'failed', endedAt: restartedAt, error: interrupted });
    const undelivered = { code: 'SHUTTING_DOWN', message: expect.stringMatching(/^interrupted: .*before the outcome was typed into the asker's pane/) as unknown };
    expect(await second.recorder.get(waiting.id)).toStrictEqual({ ...waiting, status: 'failed', endedAt: restartedAt, error: interrupted, delivery: 'failed', deliveryError: undelivered });
    // Answered before the death: the answer stands, only its delivery failed.
    expect(await second.recorder.get(answeredUndelivered.id)).toStrictEqual({ ...answeredUndelivered, delivery: 'failed', deliveryError: undelivered });
    expect(await second.recorder.get(done.id)).toStrictEqual(done);
    expect(await second.recorder.get(cancelled.id)).toStrictEqual(cancelled);
    expect(rawRows(dir).filter((r) => r.id === queued.id)).toMatchObject([{ status: 'failed', ended_at: restartedAt }]);
    await second.ledger.close();

    const third = await start(dir, restartedAt + 1);
    expect(third.interrupted).toEqual([]);
    expect((await third.recorder.get(queued.id))?.endedAt).toBe(restartedAt);
  });

  it('leaves out a row it cannot read (with a warning), refuses to pass it off as an ask, and settles the rest', async () => {
    const dir = home();
    const first = await start(dir);
    const good = ask();
    const broken = ask();
    const mismatched = ask({ status: 'waiting' });
    for (const a of [good, broken, mismatched]) first.recorder.record(a);
    await first.ledger.close();
    const db = new Database(path.join(dir, LEDGER_FILE));
    db.prepare('UPDATE asks SET record = ? WHERE id = ?').run('{"id": "cut short', broken.id);
    // The row's status column says one thing, its record another.
    db.prepare("UPDATE asks SET status = 'queued' WHERE id = ?").run(mismatched.id);
    db.close();

    const logger = keeper();
    const second = await start(dir, 60_000, logger);
    expect(second.interrupted).toEqual([good.id]);
    expect((await second.recorder.list()).map((a) => a.id)).toEqual([good.id]);
    await expect(second.recorder.get(broken.id)).rejects.toMatchObject({ code: 'INTERNAL_ERROR', message: expect.stringMatching(/ask 0.* cannot be read: its JSON does not parse/) as unknown });
    await expect(second.recorder.get(mismatched.id)).rejects.toMatchObject({ code: 'INTERNAL_ERROR', message: expect.stringMatching(/its status \(waiting\) is not an ask's, or not its row's \(queued\)/) as unknown });
    const warned = logger.lines.filter((l) => l.level === 'warn').map((l) => l.fields?.ask);
    expect(warned).toEqual(expect.arrayContaining([broken.id, mismatched.id]));
  });

  it('never throws when the ledger cannot write; it says so once until a write succeeds, and names what it lost', async () => {
    const logger = keeper();
    const { ledger, recorder } = await start(home(), undefined, logger);
    await ledger.close();
    const [a, b] = [ask(), ask()];
    expect(() => recorder.record(a)).not.toThrow();
    expect(() => recorder.record(b)).not.toThrow();
    // Every write ended (and the failed ones were tried once more): what failed is said once, then what is lost.
    await recorder.settled();
    const errors = logger.lines.filter((l) => l.level === 'error');
    expect(errors).toHaveLength(2);
    expect(errors[1]?.fields).toEqual({ asks: [a.id, b.id] });
  });

  it('writes again, with the next change, the last change of an ask the ledger refused; an older refused change never overwrites a newer one', async () => {
    const dir = home();
    const { ledger } = await start(dir);
    const rows = ledger.asks;
    if (!rows) throw new Error('the SQLite ledger keeps asks');
    // The ledger refuses writes while `down`, a turn later (as one over the network does).
    let down = true;
    const flaky: AskRows = {
      put: async (row) => {
        await Promise.resolve();
        if (down) throw new Error('the ledger went away');
        return rows.put(row);
      },
      putAll: (r) => rows.putAll(r),
      get: (id) => rows.get(id),
      newest: (n) => rows.newest(n),
      unsettled: (s, d) => rows.unsettled(s, d),
    };
    const logger = keeper();
    const { recorder } = await LedgerAskRecorder.open({ rows: flaky, logger });
    const a = ask();
    recorder.record(a);
    const aWaiting: AskRecord = { ...a, status: 'waiting', startedAt: 2_000, typedAt: 2_100 };
    recorder.record(aWaiting);
    const b = ask();
    recorder.record(b);
    await recorder.settled();
    // Refused, but not forgotten: the recorder answers with the last change.
    expect(await recorder.get(a.id)).toStrictEqual(aWaiting);
    expect(rawRows(dir)).toEqual([]);
    down = false;
    const c = ask();
    recorder.record(c);
    await recorder.settled();
    expect(rawRows(dir).map((r) => [r.id, r.status])).toEqual([
      [a.id, 'waiting'],
      [b.id, 'queued'],
      [c.id, 'queued'],
    ]);
    expect(await recorder.get(a.id)).toStrictEqual(aWaiting);
    expect(logger.lines.filter((l) => l.level === 'error')).toHaveLength(2);
  });
});

describe('interruptAsk', () => {
  it('ends only what was under way, by the lifecycle', () => {
    const finished = ask({ status: 'timed_out', endedAt: 5, error: { code: 'TIMEOUT', message: 'no reply' } });
    expect(interruptAsk(finished, 10)).toStrictEqual(finished);
    const delivered = ask({ status: 'failed', endedAt: 5, delivery: 'delivered', deliveredAt: 6 });
    expect(interruptAsk(delivered, 10)).toStrictEqual(delivered);
    expect(interruptAsk(ask(), 10)).toMatchObject({ status: 'failed', endedAt: 10, error: { code: 'SHUTTING_DOWN' }, delivery: 'none', deliveryError: null });
  });
});

/** A pane that stays busy: asks for it wait in its line. */
class BusyTarget implements AskTarget {
  readonly id = 'p-busy';
  readonly title = 'busy';
  readonly agent = 'codex';
  readonly cwd = '/work';
  readonly alive = true;
  readonly state: AgentState = 'thinking';
  readonly stateSince = Date.now();
  readonly dialogOpen = false;
  private readonly changes = new Emitter<void>();
  onStateChange(listener: () => void) {
    return this.changes.event(listener);
  }
  onExit(listener: () => void) {
    return this.changes.event(listener);
  }
  prompt(): Promise<void> {
    return Promise.reject(new Error('never typed into: it is busy'));
  }
  transcript() {
    return undefined;
  }
  screenReply(): string | null {
    return null;
  }
}

const directory: AskDirectory = {
  list: () => [new BusyTarget()],
  get: (id) => (id === 'p-busy' ? new BusyTarget() : undefined),
};

describe('the ask engine over the ledger', () => {
  it('records each change there, and a new engine after a restart finds the asks, the one left in flight interrupted', async () => {
    const dir = home();
    const first = await start(dir);
    const engine = new AskEngine({ directory, recorder: first.recorder });
    const cancelled = await engine.cancel(engine.ask({ target: 'p-busy', question: 'never mind' }).id);
    const pending = engine.ask({ target: 'p-busy', question: 'What is the largest planet?', from: { name: 'cli' } });
    expect(rawRows(dir).map((r) => [r.id, r.status])).toEqual([
      [cancelled.id, 'cancelled'],
      [pending.id, 'queued'],
    ]);
    // The daemon dies with the ask in its line: the ledger is gone before the engine could say more.
    await first.ledger.close();
    engine.dispose();

    const second = await start(dir);
    expect(second.interrupted).toEqual([pending.id]);
    const after = new AskEngine({ directory, recorder: second.recorder });
    engines.push(after);
    expect(await after.get(pending.id)).toMatchObject({ status: 'failed', question: 'What is the largest planet?', from: { name: 'cli' }, error: { code: 'SHUTTING_DOWN' } });
    expect(await after.wait(pending.id)).toMatchObject({ status: 'failed' });
    expect(await after.cancel(cancelled.id)).toStrictEqual(cancelled);
    expect((await after.list()).map((a) => [a.id, a.status])).toEqual([
      [cancelled.id, 'cancelled'],
      [pending.id, 'failed'],
    ]);
  });

  it('moves what a memory recorder kept into the ledger when told to keep asks there', async () => {
    const dir = home();
    const engine = new AskEngine({ directory, recorder: new MemoryAskRecorder() });
    engines.push(engine);
    const early = engine.ask({ target: 'p-busy', question: 'asked before the ledger opened' });
    const { recorder } = await start(dir);
    await engine.keepAsksIn(recorder);
    const later = engine.ask({ target: 'p-busy', question: 'asked after' });
    expect(rawRows(dir).map((r) => r.id)).toEqual([early.id, later.id]);
    expect((await engine.list()).map((a) => a.id)).toEqual([early.id, later.id]);
  });
});
