import { describe, expect, it } from 'vitest';
import { memoryTransportPair } from './memory-transport.js';
import type { TransportInput, TransportReceiver } from './transport.js';

/** A receiver that records what it hears, with a promise per kind of event. */
function recorder(): TransportReceiver & { inputs: TransportInput[]; texts: () => string[]; events: string[]; next: (event: string) => Promise<void> } {
  const inputs: TransportInput[] = [];
  const events: string[] = [];
  const waiters: { event: string; resolve: () => void }[] = [];
  const hear = (event: string): void => {
    events.push(event);
    for (const w of waiters.filter((x) => x.event === event)) {
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve();
    }
  };
  return {
    inputs,
    events,
    texts: () => inputs.map((i) => (i.kind === 'message' ? i.data.toString('utf8') : i.kind)),
    next: (event) => new Promise((resolve) => waiters.push({ event, resolve })),
    receive: (batch) => {
      inputs.push(...batch);
      hear('receive');
    },
    endOfInput: () => hear('end'),
    drained: () => hear('drained'),
    closed: () => hear('closed'),
  };
}

describe('an in-memory connection', () => {
  it('delivers messages in order, never in the turn they were sent', async () => {
    const [a, b] = memoryTransportPair();
    const ra = recorder();
    const rb = recorder();
    a.start(ra);
    b.start(rb);
    const received = rb.next('receive');
    a.send('{"n":1}');
    a.send('{"n":2}');
    expect(rb.inputs).toEqual([]);
    expect(a.unreadBytes).toBeGreaterThan(0);
    await received;
    expect(rb.texts()).toEqual(['{"n":1}', '{"n":2}']);
    expect(a.unreadBytes).toBe(0);
  });

  it('holds what a paused end is sent as the sender’s unread bytes, and says drained once taken', async () => {
    const [a, b] = memoryTransportPair();
    const ra = recorder();
    const rb = recorder();
    a.start(ra);
    b.start(rb);
    b.pause();
    a.send('x'.repeat(1000));
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    expect(rb.inputs).toEqual([]);
    expect(a.unreadBytes).toBe(1001);
    const drained = ra.next('drained');
    b.resume();
    await drained;
    expect(rb.inputs).toHaveLength(1);
    expect(a.unreadBytes).toBe(0);
  });

  it('marks a message over the bound as oversize, and ends and closes both ways', async () => {
    const [a, b] = memoryTransportPair({ maxMessageBytes: 4 });
    const rb = recorder();
    const ra = recorder();
    a.start(ra);
    b.start(rb);
    a.send('12345');
    a.end();
    await rb.next('end');
    expect(rb.inputs).toEqual([{ kind: 'oversize', bytes: 5 }]);
    const closedA = ra.next('closed');
    const closedB = rb.next('closed');
    b.close(false);
    await Promise.all([closedA, closedB]);
    a.send('after');
    expect(a.unreadBytes).toBe(0);
  });

  it('closes gracefully only after what was sent is delivered', async () => {
    const [a, b] = memoryTransportPair();
    const ra = recorder();
    const rb = recorder();
    a.start(ra);
    b.start(rb);
    a.send('last words');
    const closed = rb.next('closed');
    a.close(true);
    await closed;
    expect(rb.texts()).toEqual(['last words']);
  });
});
