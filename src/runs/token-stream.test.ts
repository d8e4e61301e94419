import { describe, expect, it } from 'vitest';
import { COALESCE_MS, TokenStream } from './token-stream.js';

/** A TokenStream with a clock the test moves. */
function harness(): { stream: TokenStream; emitted: string[]; advance: (ms: number) => void } {
  const emitted: string[] = [];
  let now = 0;
  let timers: { at: number; fn: () => void; live: boolean }[] = [];
  const stream = new TokenStream({
    emit: (text) => emitted.push(text),
    setTimer: (fn, ms) => {
      const t = { at: now + ms, fn, live: true };
      timers.push(t);
      return { cancel: () => (t.live = false) };
    },
  });
  const advance = (ms: number): void => {
    now += ms;
    const due = timers.filter((t) => t.live && t.at <= now);
    timers = timers.filter((t) => !due.includes(t));
    for (const t of due) t.fn();
  };
  return { stream, emitted, advance };
}

describe('a streamed reply', () => {
  it('sends the first piece at once, coalesces the next into at most one token per interval, and adds only what the whole message did not carry', () => {
    const { stream, emitted, advance } = harness();
    for (const piece of ['Hel', 'lo', ', wor']) stream.piece(piece);
    expect(emitted).toEqual(['Hel']);
    advance(COALESCE_MS - 1);
    expect(emitted).toEqual(['Hel']);
    advance(1);
    expect(emitted).toEqual(['Hel', 'lo, wor']);
    stream.piece('ld');
    // The whole message comes: the pending piece first, then nothing more than what was missing.
    expect(stream.whole('Hello, world!')).toBe('!');
    expect(emitted).toEqual(['Hel', 'lo, wor', 'ld']);
    // After a quiet interval, the next piece goes at once again.
    advance(COALESCE_MS);
    stream.piece('More');
    expect(emitted).toEqual(['Hel', 'lo, wor', 'ld', 'More']);
    // The next message starts afresh.
    expect(stream.whole('Second.')).toBe('Second.');
  });

  it('matches messages given one block at a time after pieces that already went past them', () => {
    const { stream, emitted } = harness();
    stream.piece('First block. ');
    stream.piece('Second block.');
    expect(stream.whole('First block. ')).toBe('');
    expect(stream.whole('Second block.')).toBe('');
    expect(emitted).toEqual(['First block. ', 'Second block.']);
  });

  it('gives a message that does not start with what streamed whole (a repeat, never a loss)', () => {
    const { stream, emitted } = harness();
    stream.piece('Draft');
    expect(stream.whole('Final answer')).toBe('Final answer');
    expect(emitted).toEqual(['Draft']);
  });

  it('flushes what is pending before another event and when the run ends', () => {
    const { stream, emitted, advance } = harness();
    stream.piece('a');
    stream.flush();
    stream.piece('b');
    stream.close();
    advance(COALESCE_MS * 2);
    expect(emitted).toEqual(['a', 'b']);
  });
});
