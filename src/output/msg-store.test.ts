import { afterAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { MsgStore, type StoredMsg } from './msg-store.js';

const scratch = mkdtempSync(path.join(tmpdir(), 'sb-msgstore-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const tick = (ms = 0): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
/** Waits out the batching window (batchMs 0 in these tests) and any chained deliveries. */
const settle = async (): Promise<void> => {
  for (let i = 0; i < 5; i++) await tick(1);
};

describe('MsgStore bounds and order (properties)', () => {
  it('never holds more than maxMessages or maxBytes, and keeps the newest, contiguous and in order', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 40 }), fc.integer({ min: 1, max: 400 }), fc.array(fc.string({ maxLength: 60 }), { maxLength: 300 }), (maxMessages, maxBytes, texts) => {
        const store = new MsgStore<string>({ maxMessages, maxBytes, sizeOf: (m) => m.length + 1 });
        for (const [i, text] of texts.entries()) {
          expect(store.push(text)).toBe(i + 1);
          const { retained, retainedBytes, lastSeq } = store.stats();
          expect(retained).toBeLessThanOrEqual(maxMessages);
          expect(retainedBytes).toBeLessThanOrEqual(maxBytes);
          const seqs = store.history().map((m) => m.seq);
          // The newest, with no hole: evictions only ever take the oldest.
          seqs.forEach((seq, j) => expect(seq).toBe(lastSeq - seqs.length + 1 + j));
          expect(retainedBytes).toBe(store.history().reduce((sum, m) => sum + m.msg.length + 1, 0));
        }
        void store.close();
      }),
      { numRuns: 200 },
    );
  });

  it('gives a subscriber joining at any moment every message from its history on, exactly once, in order', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 30 }),
        fc.array(fc.oneof(fc.constant<'join'>('join'), fc.constant<'wait'>('wait'), fc.integer({ min: 0, max: 999 })), { maxLength: 120 }),
        async (maxMessages, script) => {
          const store = new MsgStore<number>({ maxMessages, batchMs: 0 });
          const seen: StoredMsg<number>[][] = [];
          const firstSeq: number[] = [];
          for (const step of script) {
            if (step === 'join') {
              const mine: StoredMsg<number>[] = [];
              seen.push(mine);
              firstSeq.push(store.history()[0]?.seq ?? store.stats().lastSeq + 1);
              store.subscribe((batch) => void mine.push(...batch));
            } else if (step === 'wait') await tick(0);
            else store.push(step);
          }
          await settle();
          const last = store.stats().lastSeq;
          seen.forEach((mine, i) => {
            const from = firstSeq[i] ?? 1;
            expect(mine.map((m) => m.seq)).toEqual(Array.from({ length: last - from + 1 }, (_, k) => from + k));
          });
          await store.close();
        },
      ),
      { numRuns: 150 },
    );
  });
});

describe('MsgStore export', () => {
  it('bounds the spill file too: past it, evicted messages are counted, not written', async () => {
    const spillFile = path.join(scratch, 'bounded.jsonl');
    const store = new MsgStore<string>({ maxMessages: 10, spillFile, maxSpillBytes: 2_000 });
    for (let i = 0; i < 200; i++) store.push(`message ${i}`);
    const stats = store.stats();
    expect(stats.evicted).toBe(190);
    expect(stats.unspilled).toBeGreaterThan(0);
    const out = new PassThrough();
    const chunks: Buffer[] = [];
    out.on('data', (c: Buffer) => chunks.push(c));
    await store.exportJsonl(out);
    const lines = Buffer.concat(chunks).toString('utf8').trimEnd().split('\n');
    expect(lines.length).toBe(200 - stats.unspilled);
    await store.close();
  });

  it('gives up, rather than hang, when the reader closes its stream mid-export', async () => {
    const store = new MsgStore<string>();
    for (let i = 0; i < 2_000; i++) store.push(`message ${i} ${'x'.repeat(200)}`);
    const out = new PassThrough({ highWaterMark: 1024 });
    const exporting = store.exportJsonl(out);
    setTimeout(() => out.destroy(), 20);
    await expect(exporting).rejects.toThrow(/abandoned/);
  });
});

describe('MsgStore delivery', () => {
  it('delivers live messages in the same shape as history (seq and msg only)', async () => {
    const store = new MsgStore<string>({ batchMs: 0 });
    store.push('before');
    const seen: StoredMsg<string>[] = [];
    store.subscribe((batch) => void seen.push(...batch));
    store.push('after');
    await settle();
    expect(seen).toEqual([{ seq: 1, msg: 'before' }, { seq: 2, msg: 'after' }]);
    expect(seen).toEqual(store.history());
  });

  it('batches a burst into few callbacks, to many subscribers at once', async () => {
    const store = new MsgStore<number>({ batchMs: 16 });
    const counts = Array.from({ length: 50 }, () => ({ batches: 0, messages: 0 }));
    for (const c of counts) {
      store.subscribe((batch) => {
        c.batches++;
        c.messages += batch.length;
      });
    }
    for (let i = 0; i < 1000; i++) store.push(i);
    await tick(40);
    for (const c of counts) expect(c).toEqual({ batches: 1, messages: 1000 });
    await store.close();
  });

  it('drops a subscriber that falls behind, with a notice, and never slows the producer or the others', async () => {
    const store = new MsgStore<number>({ batchMs: 0, subscriberQueueLimit: 100 });
    const notices: string[] = [];
    let release: () => void = () => undefined;
    // A subscriber whose first batch never finishes (a client that stopped reading).
    store.subscribe(() => new Promise<void>((resolve) => (release = resolve)), { onDropped: (reason) => notices.push(reason) });
    const fast: number[] = [];
    store.subscribe((batch) => void fast.push(...batch.map((m) => m.msg)));
    store.push(0);
    await settle();
    for (let i = 1; i <= 500; i++) store.push(i);
    await settle();
    expect(notices).toEqual(['fell more than 100 messages behind']);
    expect(fast).toHaveLength(501);
    expect(store.stats()).toMatchObject({ subscribers: 1, dropped: 1, lastSeq: 501 });
    release();
    await settle();
    await store.close();
  });

  it('keeps going when a listener throws, dropping only that subscriber', async () => {
    const store = new MsgStore<string>({ batchMs: 0 });
    const reasons: string[] = [];
    store.subscribe(() => {
      throw new Error('boom');
    }, { onDropped: (r) => reasons.push(r) });
    const got: string[] = [];
    store.subscribe((batch) => void got.push(...batch.map((m) => m.msg)));
    store.push('a');
    store.push('b');
    await settle();
    expect(reasons).toEqual(['its listener threw']);
    expect(got).toEqual(['a', 'b']);
    await store.close();
  });

  it('tells subscribers when the session finished, after the last batch; a late one gets history then the notice', async () => {
    const store = new MsgStore<string>({ batchMs: 0 });
    const log: string[] = [];
    store.subscribe((batch) => void log.push(...batch.map((m) => m.msg)), { onFinished: () => log.push('finished') });
    store.push('x');
    store.push('y');
    store.finish();
    expect(() => store.push('z')).toThrow(/finished/);
    await settle();
    expect(log).toEqual(['x', 'y', 'finished']);
    const late: string[] = [];
    store.subscribe((batch) => void late.push(...batch.map((m) => m.msg)), { onFinished: () => late.push('finished') });
    await settle();
    expect(late).toEqual(['x', 'y', 'finished']);
    await store.close();
  });

  it('stops delivering to a subscriber the moment it unsubscribes', async () => {
    const store = new MsgStore<number>({ batchMs: 0 });
    const got: number[] = [];
    const unsubscribe = store.subscribe((batch) => void got.push(...batch.map((m) => m.msg)));
    store.push(1);
    await settle();
    unsubscribe();
    store.push(2);
    await settle();
    expect(got).toEqual([1]);
    expect(store.stats().subscribers).toBe(0);
    await store.close();
  });
});

describe('MsgStore export', () => {
  const exported = async <T,>(store: MsgStore<T>): Promise<StoredMsg<T>[]> => {
    const out = new PassThrough();
    const chunks: Buffer[] = [];
    out.on('data', (c: Buffer) => chunks.push(c));
    await store.exportJsonl(out);
    out.end();
    return Buffer.concat(chunks)
      .toString('utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as StoredMsg<T>);
  };

  it('exports the whole session past the memory bound, from the spill file and memory', async () => {
    const store = new MsgStore<{ n: number }>({ maxMessages: 10, spillFile: path.join(scratch, 'spill.jsonl') });
    for (let n = 1; n <= 1000; n++) store.push({ n });
    expect(store.stats()).toMatchObject({ retained: 10, evicted: 990 });
    const lines = await exported(store);
    expect(lines.map((l) => l.seq)).toEqual(Array.from({ length: 1000 }, (_, i) => i + 1));
    expect(lines[999]).toEqual({ seq: 1000, msg: { n: 1000 } });
    await store.close();
  });

  it('without a spill file, exports what it still holds', async () => {
    const store = new MsgStore<number>({ maxMessages: 3 });
    for (let n = 1; n <= 5; n++) store.push(n);
    expect((await exported(store)).map((l) => l.msg)).toEqual([3, 4, 5]);
    await store.close();
  });
});

describe('MsgStore bounds that move (a share of the daemon\u2019s budget)', () => {
  it('evicts at once what a smaller bound no longer holds, spills it, and says once when the spill file is full', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'sb-bounds-'));
    let full = 0;
    const store = new MsgStore<string>({ maxBytes: 10_000, sizeOf: (m) => m.length, spillFile: path.join(dir, 'spill.jsonl'), maxSpillBytes: 1_000, onSpillFull: () => full++ });
    for (let i = 0; i < 50; i++) store.push('x'.repeat(100));
    expect(store.stats()).toMatchObject({ retained: 50, retainedBytes: 5_000, evicted: 0 });
    store.setBounds({ maxBytes: 1_000 });
    expect(store.stats()).toMatchObject({ retained: 10, retainedBytes: 1_000, evicted: 40 });
    // About 120 bytes a line: 8 fit in the spill file's 1,000, the other 32 are dropped, and counted.
    expect(store.stats().unspilled).toBe(32);
    expect(full).toBe(1);
    store.setBounds({ maxSpillBytes: 1_000_000 });
    store.push('y'.repeat(100));
    expect(store.stats().unspilled).toBe(32);
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
});

describe('MsgStore memory', () => {
  it('lets go of an evicted message at once, so memory follows maxBytes (not up to twice it)', async () => {
    // A full collection on demand, so the test can see which messages are still reachable.
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const store = new MsgStore<{ text: string }>({ maxMessages: 100, sizeOf: (m) => m.text.length });
    const refs: WeakRef<{ text: string }>[] = [];
    // 1,000 messages through a store that keeps 100: 900 evicted, fewer than the 1,024 that would
    // make it cut its dead prefix, so a slot that kept its message would keep it.
    for (let i = 0; i < 1_000; i++) {
      const msg = { text: `message ${i}` };
      refs.push(new WeakRef(msg));
      store.push(msg);
    }
    // WeakRefs hold their targets until the job that made them ends.
    await tick();
    gc();
    const alive = refs.map((r, i) => (r.deref() ? i : -1)).filter((i) => i >= 0);
    expect(alive).toEqual(Array.from({ length: 100 }, (_, k) => 900 + k));
    expect(store.stats()).toMatchObject({ retained: 100, evicted: 900 });
    await store.close();
  });
});
