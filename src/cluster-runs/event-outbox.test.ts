import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../core/logger.js';
import type { PublishedEvent, RunEventMessage } from '../cluster/index.js';
import { RunLedger } from '../ledger/run-ledger.js';
import { SqliteLedgerStore } from '../ledger/sqlite-store.js';
import { doneEvent, type NewRunEvent } from '../ledger/run-events.js';
import type { RunSpec } from '../ledger/run-model.js';
import { EventOutbox, type OutboxOutlet } from './event-outbox.js';
import { OutboxLedgerStore } from './outbox-store.js';

/** A bound on a wait for what must happen; never a measure of how fast. */
const WAIT_MS = 10_000;

/**
 * A stream in memory: what was published, per run, and whether it answers. A publish while it is
 * `down` fails; with `loseAnswers` it stores the event and then fails, as an answer lost on the way back.
 */
class FakeStream implements OutboxOutlet {
  readonly stored = new Map<string, number[]>();
  down = false;
  loseAnswers = 0;
  publishes = 0;
  /** As a server's max_payload: a larger message is refused. */
  maxEventBytes = 64 * 1024;
  readonly messages: RunEventMessage[] = [];

  publish(event: RunEventMessage): Promise<PublishedEvent> {
    this.publishes++;
    if (this.down) return Promise.reject(new Error('no responders'));
    if (Buffer.byteLength(JSON.stringify(event)) > this.maxEventBytes) return Promise.reject(new Error('max_payload size exceeded'));
    this.messages.push(event);
    const seqs = this.stored.get(event.run_id) ?? [];
    this.stored.set(event.run_id, seqs);
    seqs.push(event.seq);
    if (this.loseAnswers > 0) {
      this.loseAnswers--;
      return Promise.reject(new Error('timeout'));
    }
    return Promise.resolve({ streamSeq: this.publishes, duplicate: false });
  }

  lastPublished(runId: string): Promise<number> {
    if (this.down) return Promise.reject(new Error('no responders'));
    return Promise.resolve(this.stored.get(runId)?.at(-1) ?? 0);
  }
}

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function spec(id: string): RunSpec {
  return { id, backend: 'fake', mode: 'stdio', prompt: 'p', cwd: '/nowhere', policy: 'test', limits: {}, schema_version: 'v2', parent: null, created_at: Date.now() };
}

function token(text: string): NewRunEvent {
  return { type: 'token', ts: Date.now(), data: { text }, compat: { text, status: 'token', is_error: false } };
}

/** A node's ledger over an in-memory store and its outbox over `stream`. */
function nodeLedger(stream: FakeStream, local = new SqliteLedgerStore(':memory:')): { ledger: RunLedger; outbox: EventOutbox; local: SqliteLedgerStore } {
  const outbox = new EventOutbox({ source: local, outlet: stream, logger: silentLogger, retryFirstMs: 5 });
  const ledger = new RunLedger({ store: new OutboxLedgerStore(local, outbox) });
  cleanups.push(() => ledger.close());
  cleanups.push(() => outbox.close());
  return { ledger, outbox, local };
}

function record(ledger: RunLedger, id: string, tokens: number, end: boolean): void {
  ledger.createRun(spec(id));
  for (let i = 0; i < tokens; i++) ledger.append(id, token(`t${i}`));
  if (end) ledger.append(id, doneEvent(Date.now(), 'completed', 'finished', 'done'));
}

const oneTo = (n: number): number[] => Array.from({ length: n }, (_, i) => i + 1);

describe('EventOutbox', () => {
  it('sends every written event in order, each once, once the store has it', async () => {
    const stream = new FakeStream();
    const { ledger, outbox } = nodeLedger(stream);
    record(ledger, 'r1', 5, true);
    record(ledger, 'r2', 3, false);
    await ledger.flush();
    expect(await outbox.drained(WAIT_MS)).toBe(true);
    expect(stream.stored.get('r1')).toEqual(oneTo(6));
    expect(stream.stored.get('r2')).toEqual(oneTo(3));
  });

  it('sends an event larger than a message may be cut, saying how large it was, and the events after it follow', async () => {
    const stream = new FakeStream();
    const { ledger, outbox } = nodeLedger(stream);
    ledger.createRun(spec('big'));
    const huge = 'x'.repeat(200 * 1024);
    ledger.append('big', { type: 'tool_result', ts: Date.now(), data: { id: 'call-1', output: huge, is_error: false }, compat: { text: huge, status: 'ok', is_error: false } });
    ledger.append('big', doneEvent(Date.now(), 'completed', 'finished', 'done'));
    await ledger.flush();
    expect(await outbox.drained(WAIT_MS)).toBe(true);
    expect(stream.stored.get('big')).toEqual([1, 2]);
    const cut = stream.messages[0] as RunEventMessage & { data: Record<string, unknown>; compat: { text: string } };
    expect(cut.data).toMatchObject({ id: 'call-1', is_error: false, cut_bytes: expect.any(Number) as unknown });
    expect(String(cut.data.output).length).toBeLessThan(20 * 1024);
    expect(cut.compat.text.endsWith('… (cut)')).toBe(true);
    // The node's own ledger keeps it whole.
    expect((await ledger.events('big', 0, 10))[0]?.data.output).toBe(huge);
    // Too large even cut (many long fields): it goes as no more than its kind and place.
    ledger.createRun(spec('wide'));
    const wide = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`field${i}`, 'y'.repeat(9_000)]));
    ledger.append('wide', { type: 'notice', ts: Date.now(), data: wide, compat: { text: 'wide', status: 'notice', is_error: false } });
    await ledger.flush();
    expect(await outbox.drained(WAIT_MS)).toBe(true);
    expect(stream.messages.at(-1)).toMatchObject({ run_id: 'wide', seq: 1, type: 'notice', data: { cut_bytes: expect.any(Number) as unknown }, compat: { text: '(cut)' } });
    expect(Object.keys((stream.messages.at(-1) as unknown as { data: object }).data)).toEqual(['cut_bytes']);
  });

  it('never holds the ledger up while the stream is away, and sends everything once it is back, nothing twice', async () => {
    const stream = new FakeStream();
    stream.down = true;
    const { ledger, outbox } = nodeLedger(stream);
    record(ledger, 'r1', 4, true);
    // Reads answer from the node's own store while nothing can be sent.
    expect(await ledger.run('r1')).toMatchObject({ last_seq: 5 });
    expect((await ledger.events('r1', 0, 100)).map((e) => e.type)).toEqual(['token', 'token', 'token', 'token', 'done']);
    expect(await outbox.drained(50)).toBe(false);
    expect(outbox.unsent).toBe(1);
    // Back, and the first answer of each of two publishes lost on the way (stored all the same).
    stream.loseAnswers = 2;
    stream.down = false;
    expect(await outbox.drained(WAIT_MS)).toBe(true);
    expect(stream.stored.get('r1')).toEqual(oneTo(5));
  });

  it('replays at start what the stream lacks of the runs kept, ended ones too, from where the stream is', async () => {
    const local = new SqliteLedgerStore(':memory:');
    // An earlier start of the node: its runs written, little of them sent.
    const before = new RunLedger({ store: local });
    record(before, 'ended', 4, true);
    record(before, 'going', 2, false);
    record(before, 'old', 1, true);
    await before.flush();
    const stream = new FakeStream();
    stream.stored.set('ended', [1, 2, 3]);
    const outbox = new EventOutbox({ source: local, outlet: stream, logger: silentLogger, retryFirstMs: 5 });
    cleanups.push(() => local.close());
    cleanups.push(() => outbox.close());
    expect(await outbox.replay(0)).toBe(3);
    expect(await outbox.drained(WAIT_MS)).toBe(true);
    expect(stream.stored.get('ended')).toEqual(oneTo(5));
    expect(stream.stored.get('going')).toEqual(oneTo(2));
    expect(stream.stored.get('old')).toEqual(oneTo(2));
    // Runs created before the cutoff are left (the stream keeps none of their events).
    const later = new FakeStream();
    const cut = new EventOutbox({ source: local, outlet: later, logger: silentLogger });
    cleanups.push(() => cut.close());
    expect(await cut.replay(Date.now() + 60_000)).toBe(0);
    expect(later.publishes).toBe(0);
  });
});
