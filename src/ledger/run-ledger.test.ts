import { afterEach, describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import fc from 'fast-check';
import Database from 'better-sqlite3';
import { RunLedger, LEDGER_FILE } from './run-ledger.js';
import { SqliteLedgerStore } from './sqlite-store.js';
import { step, initialState, type RunSpec, type RunState } from './run-model.js';
import { doneEvent, inputEvent, outputEvent, stateEvent, type NewRunEvent, type RunEvent } from './run-events.js';

const dirs: string[] = [];
const ledgers: RunLedger[] = [];
afterEach(async () => {
  for (const l of ledgers.splice(0)) await l.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function home(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'sb-ledger-'));
  dirs.push(dir);
  return path.join(dir, 'home');
}

function open(dir = home(), rawOutput = false): RunLedger {
  const ledger = RunLedger.openSqlite({ home: dir, rawOutput });
  ledgers.push(ledger);
  return ledger;
}

let runCounter = 0;
function spec(extra: Partial<RunSpec> = {}): RunSpec {
  return { id: `run-${++runCounter}`, backend: 'claude', mode: 'stdio', prompt: 'say hello', cwd: '/tmp', policy: 'default', limits: {}, schema_version: 'v2', parent: null, created_at: 1_000 + runCounter, ...extra };
}

const token = (ts: number, text: string): NewRunEvent => ({ type: 'token', ts, data: { text }, compat: { text, status: 'streaming', is_error: false } });

/** Records a whole run: queued → running → streaming → completed, `n` tokens, done. */
function recordRun(ledger: RunLedger, s: RunSpec, n: number, at = 2_000): void {
  ledger.createRun(s);
  let state: RunState = initialState(s.created_at);
  const move = (input: Parameters<typeof step>[1]): void => {
    const next = step(state, input, at);
    state = next.state;
    ledger.append(s.id, stateEvent(next.transition));
  };
  ledger.append(s.id, inputEvent(at, 'prompt', s.prompt));
  move({ type: 'start' });
  move({ type: 'first_output' });
  for (let i = 0; i < n; i++) ledger.append(s.id, token(at, `t${i}`));
  move({ type: 'complete' });
  ledger.append(s.id, doneEvent(at, 'completed', 'finished', ''));
}

describe('the run ledger', () => {
  it('lives in the Switchboard home as a private file in WAL mode', async () => {
    const dir = home();
    const ledger = open(dir);
    recordRun(ledger, spec(), 3);
    await ledger.flush();
    const file = path.join(dir, LEDGER_FILE);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(existsSync(`${file}-wal`)).toBe(true);
    expect(statSync(`${file}-wal`).mode & 0o777).toBe(0o600);
    const db = new Database(file, { readonly: true });
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    db.close();
  });

  it('moves with SWITCHBOARD_HOME', async () => {
    const dir = home();
    const previous = process.env.SWITCHBOARD_HOME;
    process.env.SWITCHBOARD_HOME = dir;
    try {
      const ledger = RunLedger.openSqlite();
      ledgers.push(ledger);
      recordRun(ledger, spec(), 1);
      await ledger.flush();
      expect(statSync(path.join(dir, LEDGER_FILE)).mode & 0o777).toBe(0o600);
    } finally {
      if (previous === undefined) delete process.env.SWITCHBOARD_HOME;
      else process.env.SWITCHBOARD_HOME = previous;
    }
  });

  it('numbers each run\'s events 1, 2, 3… and replays them exactly from any sequence number', async () => {
    const ledger = open();
    const a = spec();
    const b = spec();
    recordRun(ledger, a, 5);
    recordRun(ledger, b, 2);
    const all = await ledger.events(a.id, 0);
    expect(all.map((e) => e.seq)).toEqual(Array.from({ length: all.length }, (_, i) => i + 1));
    expect(all.map((e) => e.type)).toEqual(['input', 'state', 'state', 'token', 'token', 'token', 'token', 'token', 'state', 'done']);
    for (let from = 0; from <= all.length; from++) expect(await ledger.events(a.id, from)).toEqual(all.slice(from));
    const record = await ledger.run(a.id);
    expect(record).toMatchObject({ status: 'completed', reason: 'finished', last_seq: all.length, events: all.length, started_at: 2_000, ended_at: 2_000 });
    expect(record?.spec).toEqual(a);
  });

  it('is append-only: the database refuses to change a recorded event or run', async () => {
    const dir = home();
    const ledger = open(dir);
    recordRun(ledger, spec(), 1);
    await ledger.flush();
    const db = new Database(path.join(dir, LEDGER_FILE));
    expect(() => db.prepare("UPDATE events SET body = '{}'").run()).toThrow(/append-only/);
    expect(() => db.prepare("UPDATE runs SET backend = 'x'").run()).toThrow(/append-only/);
    db.close();
  });

  it("reads a decision an older ledger recorded as the governance's in the one vocabulary: by the policy", async () => {
    const dir = home();
    const first = open(dir);
    const s = spec();
    first.createRun(s);
    const old = { type: 'decision', ts: 1, data: { subject: { tool: 'shell' }, decision: 'deny', rule: 'blocklist', reason: 'blocked', by: 'governance' }, compat: { text: 'blocked', status: 'deny', is_error: true } } as const;
    first.append(s.id, old);
    await first.close();
    const again = open(dir);
    expect((await again.events(s.id)).map((e) => e.data)).toEqual([{ ...old.data, by: 'policy' }]);
  });

  it('does not record raw terminal output unless it is turned on, and numbers without a hole', async () => {
    const off = open();
    const s1 = spec();
    off.createRun(s1);
    expect(off.append(s1.id, outputEvent(1, 'secret on screen'))).toBeUndefined();
    off.append(s1.id, token(1, 'a'));
    expect((await off.events(s1.id)).map((e) => [e.seq, e.type])).toEqual([[1, 'token']]);
    const on = open(home(), true);
    const s2 = spec();
    on.createRun(s2);
    expect(on.append(s2.id, outputEvent(1, 'screen text'))?.seq).toBe(1);
    expect((await on.events(s2.id)).map((e) => e.type)).toEqual(['output']);
  });

  it('keeps what it recorded across a reopen, and knows the runs still in flight', async () => {
    const dir = home();
    const first = open(dir);
    const done = spec();
    const inflight = spec();
    recordRun(first, done, 1);
    first.createRun(inflight);
    first.append(inflight.id, token(5, 'x'));
    await first.close();
    const second = open(dir);
    expect((await second.unfinished()).map((r) => r.spec.id)).toEqual([inflight.id]);
    second.resumeRun(inflight.id, 1);
    expect(second.append(inflight.id, token(6, 'y'))?.seq).toBe(2);
    expect((await second.run(done.id))?.status).toBe('completed');
  });

  it('gives a subscriber the recorded events then the live ones, with no gap and no duplicate, from any point', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 40 }), fc.integer({ min: 0, max: 40 }), fc.integer({ min: 0, max: 60 }), async (before, after, from) => {
        const ledger = open();
        const s = spec();
        ledger.createRun(s);
        for (let i = 0; i < before; i++) ledger.append(s.id, token(i, `b${i}`));
        if (before % 2 === 0) await ledger.flush();
        const got: RunEvent[] = [];
        const ended = new Promise<void>((resolve) => ledger.subscribe(s.id, Math.min(from, before + after), (e) => got.push(e), { onEnd: resolve }));
        for (let i = 0; i < after; i++) {
          ledger.append(s.id, token(i, `a${i}`));
          if (i % 7 === 3) await new Promise((r) => setImmediate(r));
        }
        ledger.append(s.id, doneEvent(9, 'completed', 'finished', ''));
        await ended;
        const start = Math.min(from, before + after);
        expect(got.map((e) => e.seq)).toEqual(Array.from({ length: before + after + 1 - start }, (_, i) => start + i + 1));
        expect(got).toEqual(await ledger.events(s.id, start, 10_000));
      }),
      { numRuns: 40 },
    );
  });

  it('ends a subscription to a finished run after its done, from the store alone', async () => {
    const dir = home();
    const first = open(dir);
    const s = spec();
    recordRun(first, s, 3);
    await first.close();
    const second = open(dir);
    const got: number[] = [];
    await new Promise<void>((resolve) => second.subscribe(s.id, 4, (e) => got.push(e.seq), { onEnd: resolve }));
    expect(got).toEqual([5, 6, 7, 8]);
  });

  it('ends at once, with nothing sent, a subscription that resumes at or past a finished run\u2019s done', async () => {
    const ledger = open();
    const s = spec();
    recordRun(ledger, s, 3);
    const last = (await ledger.events(s.id, 0, 100)).at(-1)?.seq ?? 0;
    expect(last).toBeGreaterThan(0);
    for (const after of [last, last + 5]) {
      const got: number[] = [];
      await new Promise<void>((resolve) => ledger.subscribe(s.id, after, (e) => got.push(e.seq), { onEnd: resolve }));
      expect(got, `resumed after ${after}`).toEqual([]);
    }
  });

  it('removes ended runs by age and by size, never a run in flight', async () => {
    const ledger = open();
    const old = spec({ created_at: 1 });
    const mid = spec({ created_at: 2 });
    const fresh = spec({ created_at: 3 });
    recordRun(ledger, old, 50, 1_000);
    recordRun(ledger, mid, 50, 6_000);
    recordRun(ledger, fresh, 50, 9_000);
    const inflight = spec({ created_at: 0 });
    ledger.createRun(inflight);
    for (let i = 0; i < 200; i++) ledger.append(inflight.id, token(0, `x${i}`));
    expect(await ledger.prune({ maxAgeMs: 5_000 }, 10_500)).toMatchObject({ runs: 1 });
    expect(await ledger.run(old.id)).toBeUndefined();
    expect(await ledger.events(old.id)).toEqual([]);
    const sizes = (await ledger.runs()).runs;
    const freshBytes = sizes.find((r) => r.spec.id === fresh.id)?.bytes ?? 0;
    const inflightBytes = sizes.find((r) => r.spec.id === inflight.id)?.bytes ?? 0;
    // Room for the run in flight and the newest ended one: the older one goes.
    expect(await ledger.prune({ maxBytes: inflightBytes + freshBytes }, 10_500)).toMatchObject({ runs: 1 });
    expect((await ledger.runs()).runs.map((r) => r.spec.id).sort()).toEqual([fresh.id, inflight.id].sort());
    // Even with no room at all, the run in flight stays.
    await ledger.prune({ maxBytes: 0 }, 10_500);
    expect((await ledger.runs()).runs.map((r) => r.spec.id)).toEqual([inflight.id]);
  });

  it('exports runs and their events as JSON lines', async () => {
    const ledger = open();
    const a = spec();
    recordRun(ledger, a, 2);
    const out = new PassThrough();
    const chunks: string[] = [];
    out.on('data', (c: Buffer) => chunks.push(c.toString()));
    const lines = await ledger.exportJsonl(out);
    const parsed = chunks.join('').trim().split('\n').map((l) => JSON.parse(l) as { kind: string; seq?: number; spec?: RunSpec });
    expect(parsed).toHaveLength(lines);
    expect(parsed[0]).toMatchObject({ kind: 'run', spec: a, status: 'completed' });
    expect(parsed.slice(1).map((l) => l.seq)).toEqual([1, 2, 3, 4, 5, 6, 7]);
  });

  it('lists runs newest first, by status and backend, a page at a time', async () => {
    const ledger = open();
    const runs = [spec({ created_at: 10 }), spec({ created_at: 20, backend: 'codex' }), spec({ created_at: 30 })];
    for (const r of runs) recordRun(ledger, r, 0);
    const queued = spec({ created_at: 40 });
    ledger.createRun(queued);
    expect((await ledger.runs()).runs.map((r) => r.spec.created_at)).toEqual([40, 30, 20, 10]);
    expect((await ledger.runs({ status: 'queued' })).runs.map((r) => r.spec.id)).toEqual([queued.id]);
    expect((await ledger.runs({ backend: 'codex' })).runs.map((r) => r.spec.id)).toEqual([runs[1]?.id]);
    expect((await ledger.runs({ limit: 2, before: 30 })).runs.map((r) => r.spec.created_at)).toEqual([20, 10]);
    // A page cut by its count says where the next starts, never inside a millisecond's runs.
    const twins = [spec({ created_at: 50 }), spec({ created_at: 50 })];
    for (const r of twins) ledger.createRun(r);
    const page = await ledger.runs({ limit: 2 });
    expect(page.runs.map((r) => r.spec.created_at)).toEqual([50, 50]);
    expect(page.next_before).toBe(41);
    // Past the byte budget after one run: its twin of the same millisecond still comes with it.
    const cut = await ledger.runs({ limit: 3, maxBytes: 1 });
    expect(cut.runs.map((r) => r.spec.created_at)).toEqual([50, 50]);
    expect(cut.next_before).toBe(41);
    const next = await ledger.runs({ limit: 3, before: 41 });
    expect(next.runs.map((r) => r.spec.created_at)).toEqual([40, 30, 20]);
    expect(next.next_before).toBe(11);
  });

  it('lists a prompt as its first KiB, cut on a character boundary, with its size', async () => {
    const ledger = open();
    const prompt = `a${'€'.repeat(2_000)}`;
    const long = spec({ prompt });
    recordRun(ledger, long, 0);
    const [listed] = (await ledger.runs()).runs;
    expect(listed?.prompt_bytes).toBe(Buffer.byteLength(prompt));
    expect(listed?.prompt_truncated).toBe(true);
    expect(listed?.spec.prompt).toBe(prompt.slice(0, 1 + 341));
    expect((await ledger.run(long.id))?.spec.prompt).toBe(prompt);
  });

  it('refuses events for a run it does not know, or one that is done', () => {
    const ledger = open();
    expect(() => ledger.append('nope', token(1, 'x'))).toThrow(/not live/);
    const s = spec();
    recordRun(ledger, s, 0);
    expect(() => ledger.append(s.id, token(1, 'late'))).toThrow(/not live/);
  });

  it('checks clean', async () => {
    const ledger = new RunLedger({ store: new SqliteLedgerStore(':memory:') });
    ledgers.push(ledger);
    recordRun(ledger, spec(), 10);
    expect(await ledger.check()).toBe('ok');
  });
});
