import { describe, expect, it } from 'vitest';
import { SessionLogs } from '../logs/index.js';
import { logPage } from './log-operations.js';

/** A log with the given messages' texts (stdout), numbered from 1. */
function logOf(...texts: string[]): ReturnType<SessionLogs['open']> {
  const log = new SessionLogs().open({ id: 'p1', kind: 'pane', title: 'p1' });
  for (const content of texts) log.store.push({ type: 'stdout', content });
  return log;
}

describe('logPage: a page of a session log, as log_get_history and a node’s log read answer', () => {
  it('gives the messages after a seq, oldest first, at most the limit, with where the log stands', () => {
    const page = logPage(logOf('a', 'b', 'c', 'd'), 1, 2);
    expect(page.messages.map((m) => m.seq)).toEqual([2, 3]);
    expect(page).toMatchObject({ finished: false, evicted: 0, last_seq: 4 });
    expect(logPage(logOf('a'), 1, 10).messages).toEqual([]);
  });

  it('within a byte bound: as many as fit, and the next page goes on from there', () => {
    const log = logOf('x'.repeat(400), 'y'.repeat(400), 'z'.repeat(400));
    const first = logPage(log, 0, 100, 1000);
    expect(first.messages.map((m) => m.seq)).toEqual([1, 2]);
    expect(logPage(log, 2, 100, 1000).messages.map((m) => m.seq)).toEqual([3]);
  });

  it('a message larger than the bound alone is cut to fit, keeping its seq and saying so, never left behind', () => {
    const log = logOf('\u0001'.repeat(5000), 'after');
    const bound = 2000;
    const page = logPage(log, 0, 100, bound);
    // The cut message and the next, which fits beside it.
    expect(page.messages.map((m) => m.seq)).toEqual([1, 2]);
    expect(Buffer.byteLength(JSON.stringify(page.messages))).toBeLessThanOrEqual(bound);
    expect(page.messages[0]?.msg).toMatchObject({ type: 'stdout', content: expect.stringMatching(/^\u0001+… \[\d+ bytes of this message were more than one answer carries \(2000\)/) });
    expect(page.messages[1]?.msg).toEqual({ type: 'stdout', content: 'after' });
  });

  it('a structured entry too large is a line saying so, in its place', () => {
    const log = new SessionLogs().open({ id: 'p2', kind: 'pane', title: 'p2' });
    log.store.push({ type: 'normalized', entry: { type: 'assistant_message', content: 'w'.repeat(5000) } as never });
    const page = logPage(log, 0, 10, 1000);
    expect(page.messages[0]).toMatchObject({ seq: 1, msg: { type: 'stderr', content: expect.stringContaining('more than one answer carries') } });
  });
});
