/**
 * Waiting for an event, a deadline or an abort, whichever comes first: the one promise that was
 * written out by hand at every wait (and got its clean-up wrong there once). Every way it ends
 * lets go of the listener, the timer and the abort handler.
 */
import type { Event } from './emitter.js';

/** How a wait ended: the awaited event came, the time ran out, or the signal aborted. */
export type WaitEnd = 'event' | 'timeout' | 'aborted';

export interface UntilEventOptions {
  /** Gives up after this many milliseconds (none: waits for the event or the signal only). */
  timeoutMs?: number;
  signal?: AbortSignal;
}

/**
 * Resolves once `event` fires with a value `accept` takes ('event'), after `timeoutMs`
 * ('timeout'), or when `signal` aborts ('aborted', at once when it has already). A caller that
 * waits for a condition checks it before calling: this waits only for what comes next.
 */
export function untilEvent<T>(event: Event<T>, accept: (value: T) => boolean, options: UntilEventOptions = {}): Promise<WaitEnd> {
  const { timeoutMs, signal } = options;
  if (signal?.aborted) return Promise.resolve('aborted');
  return new Promise<WaitEnd>((resolve) => {
    let settled = false;
    const finish = (end: WaitEnd): void => {
      if (settled) return;
      settled = true;
      subscription.dispose();
      if (timer !== undefined) clearTimeout(timer);
      signal?.removeEventListener('abort', aborted);
      resolve(end);
    };
    const aborted = (): void => finish('aborted');
    const subscription = event((value) => {
      let accepted: boolean;
      try {
        accepted = accept(value);
      } catch {
        // A test that throws ends the wait (as the event) rather than leave it, and its listener, hanging.
        accepted = true;
      }
      if (accepted) finish('event');
    });
    const timer = timeoutMs !== undefined ? setTimeout(() => finish('timeout'), Math.max(0, timeoutMs)) : undefined;
    signal?.addEventListener('abort', aborted, { once: true });
  });
}

/** One event that fires whenever any of `events` does (with that event's value). */
export function anyEvent(...events: Event<unknown>[]): Event<unknown> {
  return (listener) => {
    const subscriptions = events.map((event) => event(listener));
    return { dispose: () => subscriptions.forEach((s) => s.dispose()) };
  };
}
