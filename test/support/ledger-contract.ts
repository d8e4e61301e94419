/**
 * What every LedgerStore must do, as one suite run against each store (SQLite beside the code in
 * src/ledger/run-ledger.test.ts, PostgreSQL in test/ledger/postgres-store.test.ts): numbering and
 * replay through the RunLedger, a batch written twice recorded once, subscriptions, retention,
 * export, lists and their pages, the asks' rows and the team runs' rows. What only one store has
 * (SQLite's file and its mode, PostgreSQL's migration lock) is tested beside that store.
 */
import { PassThrough } from 'node:stream';
import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { AskRow } from '../../src/ledger/ask-rows.js';
import type { LedgerStore, RunRecord } from '../../src/ledger/ledger-store.js';
import { RunLedger } from '../../src/ledger/run-ledger.js';
import { doneEvent, inputEvent, outputEvent, stateEvent, type NewRunEvent, type RunEvent } from '../../src/ledger/run-events.js';
import { initialState, step, type RunSpec, type RunState } from '../../src/ledger/run-model.js';
import type { TeamEventRow, TeamRunRow } from '../../src/ledger/team-rows.js';

/** One ledger's place (a file, a database): each `open` is a new store over the same contents. */
interface StorePlace {
  open(): Promise<LedgerStore>;
}

/** Where the suite gets a new, empty place for each test. */
export type NewPlace = () => Promise<StorePlace>;

/** A store with the asks' and team runs' rows (both stores have them). */
type FullStore = LedgerStore & Required<Pick<LedgerStore, 'asks' | 'teams'>>;

let runCounter = 0;
export function spec(extra: Partial<RunSpec> = {}): RunSpec {
  return { id: `run-${++runCounter}`, backend: 'claude', mode: 'stdio', prompt: 'say hello', cwd: '/tmp', policy: 'default', limits: {}, schema_version: 'v2', parent: null, created_at: 1_000 + runCounter, ...extra };
}

export const token = (ts: number, text: string): NewRunEvent => ({ type: 'token', ts, data: { text }, compat: { text, status: 'streaming', is_error: false } });

/** Records a whole run: queued → running → streaming → completed, `n` tokens, done. */
export function recordRun(ledger: RunLedger, s: RunSpec, n: number, at = 2_000): void {
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

function askRow(id: string, extra: Partial<AskRow> = {}): AskRow {
  return { id, status: 'queued', created_at: 1_000, ended_at: null, target_pane: 'p1', asker_pane: null, asker_name: null, delivery: 'none', record: `{"id":"${id}"}`, ...extra };
}

function teamRun(id: string, extra: Partial<TeamRunRow> = {}): TeamRunRow {
  return { id, state: 'running', created_at: 1_000, ended_at: null, record: `sealed board of ${id}`, ...extra };
}

function teamEntry(runId: string, seq: number, kind = 'call'): TeamEventRow {
  return { run_id: runId, seq, ts: 1_000 + seq, kind, record: `sealed ${kind} ${seq}` };
}

function full(store: LedgerStore): FullStore {
  if (!store.asks || !store.teams) throw new Error('this store keeps no asks or team runs');
  return store as FullStore;
}

/** The suite, for the store `name`, over places from `newPlace`. */
export function describeLedgerStore(name: string, newPlace: NewPlace): void {
  describe(`the run ledger on ${name}`, () => {
    const ledgers: RunLedger[] = [];
    const stores: LedgerStore[] = [];
    afterEach(async () => {
      for (const l of ledgers.splice(0)) await l.close();
      for (const s of stores.splice(0)) await s.close();
    });

    /** A ledger over a store at `place` (a new place by default), closed after the test. */
    async function open(place?: StorePlace, rawOutput = false): Promise<RunLedger> {
      const at = place ?? (await newPlace());
      const ledger = new RunLedger({ store: await at.open(), rawOutput });
      ledgers.push(ledger);
      return ledger;
    }

    /** A bare store (no RunLedger in front), closed after the test. */
    async function store(place?: StorePlace): Promise<FullStore> {
      const opened = await (place ?? (await newPlace())).open();
      stores.push(opened);
      return full(opened);
    }

    it("numbers each run's events 1, 2, 3… and replays them exactly from any sequence number", async () => {
      const ledger = await open();
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

    it('records a batch written twice once: no event twice, the same counts, the same replay', async () => {
      const db = await store();
      const s = spec();
      const events: RunEvent[] = [token(5, 'a'), token(6, 'b'), { ...stateEvent({ from: 'queued', to: 'running', at: 7, reason: null, message: '' }) }].map((e, i) => ({ ...e, run_id: s.id, seq: i + 1 }));
      await db.write({ runs: [s], events });
      const once = { record: await db.run(s.id), events: await db.events(s.id, 0, 100) };
      await db.write({ runs: [s], events });
      // Overlapping: the last event again, and one new after it.
      await db.write({ runs: [], events: [events[2] as RunEvent, { ...token(8, 'c'), run_id: s.id, seq: 4 }] });
      const replay = await db.events(s.id, 0, 100);
      expect(replay.map((e) => e.seq)).toEqual([1, 2, 3, 4]);
      expect(replay.slice(0, 3)).toEqual(once.events);
      const record = await db.run(s.id);
      expect(record).toMatchObject({ status: 'running', started_at: 7, last_seq: 4, events: 4 });
      expect(record?.bytes).toBeGreaterThan(once.record?.bytes ?? 0);
      expect(once.record).toMatchObject({ events: 3, last_seq: 3 });
      expect(await db.check()).toBe('ok');
    });

    it('keeps a batch the store refused and writes it first next time: nothing lost, nothing twice, every run in order', async () => {
      const db = await store();
      // The store refuses a write, or takes it and the answer is lost (as a connection that drops at COMMIT does).
      let trouble: 'refuse' | 'lose-answer' | undefined;
      const flaky: LedgerStore = Object.assign(Object.create(db) as LedgerStore, {
        write: async (batch: Parameters<LedgerStore['write']>[0]) => {
          const now = trouble;
          trouble = undefined;
          if (now === 'refuse') throw new Error('the ledger went away');
          await db.write(batch);
          if (now === 'lose-answer') throw new Error('the connection dropped at COMMIT');
        },
        // The store itself is closed after the test.
        close: () => Promise.resolve(),
      });
      const ledger = new RunLedger({ store: flaky });
      ledgers.push(ledger);
      const s = spec();
      ledger.createRun(s);
      ledger.append(s.id, token(1, 'a'));
      trouble = 'refuse';
      await expect(ledger.flush()).rejects.toThrow(/went away/);
      // Queued behind a failed write, and then its answer lost: the store has it all the same.
      ledger.append(s.id, stateEvent({ from: 'queued', to: 'running', at: 2, reason: null, message: '' }));
      trouble = 'lose-answer';
      await expect(ledger.flush()).rejects.toThrow(/dropped at COMMIT/);
      ledger.append(s.id, token(3, 'b'));
      ledger.append(s.id, doneEvent(4, 'completed', 'finished', ''));
      await ledger.flush();
      const events = await db.events(s.id, 0, 100);
      expect(events.map((e) => [e.seq, e.type])).toEqual([
        [1, 'token'],
        [2, 'state'],
        [3, 'token'],
        [4, 'done'],
      ]);
      expect(await db.run(s.id)).toMatchObject({ status: 'running', started_at: 2, last_seq: 4, events: 4 });
      expect(await db.check()).toBe('ok');
      // Refused with nothing after it: tried again all the same, without a flush asking.
      const t = spec();
      ledger.createRun(t);
      ledger.append(t.id, token(5, 'c'));
      trouble = 'refuse';
      await expect(ledger.flush()).rejects.toThrow(/went away/);
      await vi.waitUntil(async () => (await db.run(t.id))?.events === 1, { timeout: 30_000, interval: 50 });
    });

    it('gives a page of events cut at about a number of bytes, the same on every store, at least one event', async () => {
      const db = await store();
      const s = spec();
      // Bodies of every kind of character: one byte, three (€), and outside the BMP (two UTF-16 units each).
      const texts = Array.from({ length: 40 }, (_, i) => ['a', '€', '😀'][i % 3]!.repeat(50 + ((i * 37) % 400)));
      const events: RunEvent[] = texts.map((text, i) => ({ ...token(i, text), run_id: s.id, seq: i + 1 }));
      await db.write({ runs: [s], events });
      const all = await db.events(s.id, 0, 1_000);
      // The rule every store keeps: each event counts its stored body's length and 100 more; a page stops before the one that would pass the budget.
      const size = (e: RunEvent): number => JSON.stringify({ data: e.data, compat: e.compat }).length + 100;
      const expected = (after: number, limit: number, maxBytes: number): number[] => {
        const page: number[] = [];
        let bytes = 0;
        for (const e of all.filter((x) => x.seq > after).slice(0, limit)) {
          if (page.length > 0 && bytes + size(e) > maxBytes) break;
          bytes += size(e);
          page.push(e.seq);
        }
        return page;
      };
      for (const [after, limit, maxBytes] of [
        [0, 1_000, 1],
        [0, 1_000, 2_000],
        [5, 1_000, 5_000],
        [0, 7, 1_000_000],
        [39, 1_000, 10],
        [40, 1_000, 10],
      ] as const) {
        const page = await db.events(s.id, after, limit, maxBytes);
        expect(page.map((e) => e.seq), `after ${after}, limit ${limit}, ${maxBytes} bytes`).toEqual(expected(after, limit, maxBytes));
        expect(page).toEqual(all.filter((e) => page.some((p) => p.seq === e.seq)));
      }
    });

    it("reads a decision an older ledger recorded as the governance's in the one vocabulary: by the policy", async () => {
      const place = await newPlace();
      const first = await open(place);
      const s = spec();
      first.createRun(s);
      const old = { type: 'decision', ts: 1, data: { subject: { tool: 'shell' }, decision: 'deny', rule: 'blocklist', reason: 'blocked', by: 'governance' }, compat: { text: 'blocked', status: 'deny', is_error: true } } as const;
      first.append(s.id, old);
      await first.close();
      const again = await open(place);
      expect((await again.events(s.id)).map((e) => e.data)).toEqual([{ ...old.data, by: 'policy' }]);
    });

    it('does not record raw terminal output unless it is turned on, and numbers without a hole', async () => {
      const off = await open();
      const s1 = spec();
      off.createRun(s1);
      expect(off.append(s1.id, outputEvent(1, 'secret on screen'))).toBeUndefined();
      off.append(s1.id, token(1, 'a'));
      expect((await off.events(s1.id)).map((e) => [e.seq, e.type])).toEqual([[1, 'token']]);
      const on = await open(undefined, true);
      const s2 = spec();
      on.createRun(s2);
      expect(on.append(s2.id, outputEvent(1, 'screen text'))?.seq).toBe(1);
      expect((await on.events(s2.id)).map((e) => e.type)).toEqual(['output']);
    });

    it('keeps what it recorded across a reopen, and knows the runs still in flight', async () => {
      const place = await newPlace();
      const first = await open(place);
      const done = spec();
      const inflight = spec();
      recordRun(first, done, 1);
      first.createRun(inflight);
      first.append(inflight.id, token(5, 'x'));
      await first.close();
      const second = await open(place);
      expect((await second.unfinished()).map((r) => r.spec.id)).toEqual([inflight.id]);
      second.resumeRun(inflight.id, 1);
      expect(second.append(inflight.id, token(6, 'y'))?.seq).toBe(2);
      expect((await second.run(done.id))?.status).toBe('completed');
    });

    it("reads a moved run's node from its last move, in every read, across a reopen and in an export; the spec as written stays", async () => {
      const place = await newPlace();
      const first = await open(place);
      const moved = spec({ node: 'n1' });
      const still = spec({ node: 'n1' });
      first.createRun(moved);
      first.createRun(still);
      // Moved twice in one batch and once in the next: the last stands.
      first.moveRun(moved.id, 'n2');
      first.moveRun(moved.id, 'n3');
      expect((await first.run(moved.id))?.spec.node).toBe('n3');
      first.moveRun(moved.id, 'n2');
      expect(() => first.moveRun('run-unknown', 'n2')).toThrow(/not live/);
      await first.close();
      const second = await open(place);
      const nodes = (records: readonly RunRecord[]): Record<string, string | undefined> => Object.fromEntries(records.map((r) => [r.spec.id, r.spec.node]));
      expect(nodes(await second.unfinished())).toEqual({ [moved.id]: 'n2', [still.id]: 'n1' });
      expect(nodes((await second.runs()).runs)).toEqual({ [moved.id]: 'n2', [still.id]: 'n1' });
      expect((await second.run(moved.id))?.spec).toEqual({ ...moved, node: 'n2' });
      const out = new PassThrough();
      const chunks: string[] = [];
      out.on('data', (c: Buffer) => chunks.push(c.toString()));
      await second.exportJsonl(out, [moved.id]);
      expect(JSON.parse(chunks.join('').trim())).toMatchObject({ kind: 'run', spec: { id: moved.id, node: 'n2' } });
    });

    it('gives a subscriber the recorded events then the live ones, with no gap and no duplicate, from any point', async () => {
      const ledger = await open();
      await fc.assert(
        fc.asyncProperty(fc.integer({ min: 0, max: 40 }), fc.integer({ min: 0, max: 40 }), fc.integer({ min: 0, max: 60 }), async (before, after, from) => {
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
      const place = await newPlace();
      const first = await open(place);
      const s = spec();
      recordRun(first, s, 3);
      await first.close();
      const second = await open(place);
      const got: number[] = [];
      await new Promise<void>((resolve) => second.subscribe(s.id, 4, (e) => got.push(e.seq), { onEnd: resolve }));
      expect(got).toEqual([5, 6, 7, 8]);
    });

    it('ends at once, with nothing sent, a subscription that resumes at or past a finished run\u2019s done', async () => {
      const ledger = await open();
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
      const ledger = await open();
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
      const ledger = await open();
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
      const ledger = await open();
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
      const ledger = await open();
      // A NUL in the prompt too: a list shows it as any other character.
      const prompt = `a\u0000${'€'.repeat(2_000)}`;
      const long = spec({ prompt });
      recordRun(ledger, long, 0);
      const [listed] = (await ledger.runs()).runs;
      expect(listed?.prompt_bytes).toBe(Buffer.byteLength(prompt));
      expect(listed?.prompt_truncated).toBe(true);
      expect(listed?.spec.prompt).toBe(prompt.slice(0, 2 + 340));
      expect((await ledger.run(long.id))?.spec.prompt).toBe(prompt);
    });

    it('refuses events for a run it does not know, or one that is done', async () => {
      const ledger = await open();
      expect(() => ledger.append('nope', token(1, 'x'))).toThrow(/not live/);
      const s = spec();
      recordRun(ledger, s, 0);
      expect(() => ledger.append(s.id, token(1, 'late'))).toThrow(/not live/);
    });

    it('ingests events numbered elsewhere once, in step with their states, live readers fed as by append', async () => {
      const place = await newPlace();
      const node = await open();
      const s = spec();
      recordRun(node, s, 3);
      const numbered = await node.events(s.id, 0, 100);
      const controller = await open(place);
      controller.createRun(s);
      const got: RunEvent[] = [];
      const ended = new Promise<void>((resolve) => controller.subscribe(s.id, 0, (e) => got.push(e), { onEnd: resolve }));
      const half = Math.floor(numbered.length / 2);
      for (const e of numbered.slice(0, half)) expect(controller.ingest(e)).toBe(true);
      // Delivered again (an intake after a restart): nothing taken twice.
      for (const e of numbered.slice(0, half)) expect(controller.ingest(e)).toBe(false);
      await controller.flush();
      expect(await controller.run(s.id)).toMatchObject({ status: 'streaming', started_at: 2_000, last_seq: half, events: half });
      for (const e of numbered.slice(half)) expect(controller.ingest(e)).toBe(true);
      await ended;
      expect(got).toEqual(numbered);
      expect(await controller.events(s.id, 0, 100)).toEqual(numbered);
      expect(await controller.run(s.id)).toMatchObject({ status: 'completed', reason: 'finished', ended_at: 2_000, last_seq: numbered.length, events: numbered.length });
      // The run ended here with its done, as on the node.
      expect(controller.isLive(s.id)).toBe(false);
      expect(() => controller.ingest(numbered.at(-1) as RunEvent)).toThrow(/not live/);
      expect(await controller.check()).toBe('ok');
    });

    it('ingests across a restart of the controller from the last event it recorded, and past a hole', async () => {
      const place = await newPlace();
      const s = spec();
      const at = (seq: number, e: NewRunEvent): RunEvent => ({ ...e, run_id: s.id, seq });
      const first = await open(place);
      first.createRun(s);
      first.ingest(at(1, inputEvent(10, 'prompt', s.prompt)));
      first.ingest(at(2, stateEvent({ from: 'queued', to: 'running', at: 11, reason: null, message: '' })));
      await first.close();
      const second = await open(place);
      const [record] = await second.unfinished();
      expect(record).toMatchObject({ status: 'running', last_seq: 2 });
      second.resumeRun(s.id, record?.last_seq ?? 0);
      expect(second.ingest(at(2, stateEvent({ from: 'queued', to: 'running', at: 11, reason: null, message: '' })))).toBe(false);
      // 3 and 4 never reached the stream: 5 is taken after the hole.
      expect(second.ingest(at(5, stateEvent({ from: 'running', to: 'cancelled', at: 12, reason: 'cancelled_by_user', message: 'cancelled' })))).toBe(true);
      expect(second.ingest(at(6, doneEvent(12, 'cancelled', 'cancelled_by_user', 'cancelled')))).toBe(true);
      expect((await second.events(s.id, 0, 100)).map((e) => e.seq)).toEqual([1, 2, 5, 6]);
      expect(await second.run(s.id)).toMatchObject({ status: 'cancelled', reason: 'cancelled_by_user', ended_at: 12, last_seq: 6, events: 4 });
      expect(await second.unfinished()).toEqual([]);
    });

    it('checks clean', async () => {
      const ledger = await open();
      recordRun(ledger, spec(), 10);
      expect(await ledger.check()).toBe('ok');
    });

    it('upserts one row per ask and finds the unsettled ones', async () => {
      const db = await store();
      // Not awaited one by one: calls take effect in the order they were made.
      void db.asks.put(askRow('a1'));
      void db.asks.put(askRow('a1', { status: 'waiting', record: '{"id":"a1","v":2}' }));
      await db.asks.putAll([askRow('a2', { status: 'done', ended_at: 2_000, delivery: 'pending', created_at: 1_001 }), askRow('a3', { status: 'cancelled', ended_at: 2_000, created_at: 1_002 })]);
      expect(await db.asks.get('a1')).toMatchObject({ status: 'waiting', record: '{"id":"a1","v":2}' });
      expect((await db.asks.newest(2)).map((r) => r.id)).toEqual(['a2', 'a3']);
      expect((await db.asks.unsettled(['queued', 'typing', 'waiting'], ['pending', 'delivering'])).map((r) => r.id)).toEqual(['a1', 'a2']);
      // Made in the same millisecond: the order they were first written.
      await db.asks.putAll([askRow('t2', { created_at: 5_000 }), askRow('t1', { created_at: 5_000 })]);
      expect((await db.asks.newest(2)).map((r) => r.id)).toEqual(['t2', 't1']);
    });

    it('writes a batch of asks all or none', async () => {
      const db = await store();
      // NOT NULL refuses the second row: the first is not written either.
      const bad = { ...askRow('b2'), record: null } as unknown as AskRow;
      await expect(db.asks.putAll([askRow('b1'), bad])).rejects.toThrow();
      expect(await db.asks.get('b1')).toBeUndefined();
    });

    it('loses asks to retention by age once they have ended, never before', async () => {
      const db = await store();
      await db.asks.putAll([askRow('old', { status: 'done', ended_at: 1_000 }), askRow('recent', { status: 'done', ended_at: 9_000 }), askRow('in-flight', { created_at: 1 })]);
      expect(await db.prune({ maxBytes: 0 }, 10_000)).toMatchObject({ asks: 0 });
      expect(await db.prune({ maxAgeMs: 5_000 }, 10_000)).toMatchObject({ runs: 0, asks: 1 });
      expect((await db.asks.newest(10)).map((r) => r.id)).toEqual(['in-flight', 'recent']);
    });

    it('keeps one row per team run, rewritten, and its record numbered', async () => {
      const db = await store();
      void db.teams.put(teamRun('team-1'), [teamEntry('team-1', 1, 'state'), teamEntry('team-1', 2)]);
      void db.teams.put(teamRun('team-1', { state: 'completed', ended_at: 5_000, record: 'the last board' }), [teamEntry('team-1', 3, 'decision')]);
      void db.teams.put(teamRun('team-2', { created_at: 2_000 }), []);
      expect(await db.teams.get('team-1')).toEqual(teamRun('team-1', { state: 'completed', ended_at: 5_000, record: 'the last board' }));
      expect((await db.teams.newest(10)).map((r) => r.id)).toEqual(['team-2', 'team-1']);
      expect((await db.teams.events('team-1', 1, 10)).map((e) => `${e.seq} ${e.kind}`)).toEqual(['2 call', '3 decision']);
      expect(await db.teams.events('team-1', 0, 1)).toEqual([teamEntry('team-1', 1, 'state')]);
      expect(await db.teams.lastSeq('team-1')).toBe(3);
      expect(await db.teams.lastSeq('team-9')).toBe(0);
      expect((await db.teams.inStates(['starting', 'running', 'paused'])).map((r) => r.id)).toEqual(['team-2']);
    });

    it("writes a team run's row and its entries all or none, and never takes an entry twice", async () => {
      const db = await store();
      await db.teams.put(teamRun('team-1'), [teamEntry('team-1', 1)]);
      // The same number again: the row's change is not written either.
      await expect(db.teams.put(teamRun('team-1', { state: 'paused' }), [teamEntry('team-1', 2), teamEntry('team-1', 1)])).rejects.toThrow();
      expect((await db.teams.get('team-1'))?.state).toBe('running');
      expect(await db.teams.lastSeq('team-1')).toBe(1);
    });

    it('loses team runs to retention by age once they have ended, with their records, never before', async () => {
      const db = await store();
      await db.teams.put(teamRun('old', { state: 'completed', ended_at: 1_000 }), [teamEntry('old', 1), teamEntry('old', 2)]);
      await db.teams.put(teamRun('recent', { state: 'failed', ended_at: 9_000 }), [teamEntry('recent', 1)]);
      await db.teams.put(teamRun('going', { created_at: 1 }), [teamEntry('going', 1)]);
      expect(await db.prune({ maxBytes: 0 }, 10_000)).toMatchObject({ teamRuns: 0 });
      expect(await db.prune({ maxAgeMs: 5_000 }, 10_000)).toMatchObject({ teamRuns: 1 });
      expect((await db.teams.newest(10)).map((r) => r.id)).toEqual(['recent', 'going']);
      expect(await db.teams.events('old', 0, 10)).toEqual([]);
      expect(await db.teams.lastSeq('going')).toBe(1);
    });
  });
}
