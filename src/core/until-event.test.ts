import { afterEach, describe, expect, it, vi } from 'vitest';
import { Emitter } from './emitter.js';
import { anyEvent, untilEvent } from './until-event.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('untilEvent', () => {
  it('ends on the first value it accepts and lets go of its listener', async () => {
    const emitter = new Emitter<number>();
    const waiting = untilEvent(emitter.event, (n) => n > 1);
    emitter.fire(1);
    expect(emitter.listenerCount).toBe(1);
    emitter.fire(2);
    await expect(waiting).resolves.toBe('event');
    expect(emitter.listenerCount).toBe(0);
  });

  it('ends on the deadline, and on an abort, each letting go of the listener and the signal', async () => {
    vi.useFakeTimers();
    const emitter = new Emitter<void>();
    const timedOut = untilEvent(emitter.event, () => true, { timeoutMs: 500 });
    await vi.advanceTimersByTimeAsync(499);
    expect(emitter.listenerCount).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    await expect(timedOut).resolves.toBe('timeout');

    const controller = new AbortController();
    const removed = vi.spyOn(controller.signal, 'removeEventListener');
    const aborted = untilEvent(emitter.event, () => true, { timeoutMs: 10_000, signal: controller.signal });
    controller.abort();
    await expect(aborted).resolves.toBe('aborted');
    expect(emitter.listenerCount).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
    expect(removed).toHaveBeenCalledWith('abort', expect.any(Function));
    // A signal that has aborted already ends the wait before it subscribes.
    await expect(untilEvent(emitter.event, () => true, { signal: controller.signal })).resolves.toBe('aborted');
    expect(emitter.listenerCount).toBe(0);
  });

  it('an event that fires after the wait ended changes nothing', async () => {
    const emitter = new Emitter<void>();
    const controller = new AbortController();
    const waiting = untilEvent(emitter.event, () => true, { signal: controller.signal });
    emitter.fire();
    controller.abort();
    await expect(waiting).resolves.toBe('event');
  });
});

describe('anyEvent', () => {
  it('hears each of its events, and unsubscribes from all of them at once', () => {
    const a = new Emitter<string>();
    const b = new Emitter<number>();
    const heard: unknown[] = [];
    const subscription = anyEvent(a.event, b.event)((value) => heard.push(value));
    a.fire('x');
    b.fire(2);
    subscription.dispose();
    a.fire('y');
    expect(heard).toEqual(['x', 2]);
    expect(a.listenerCount + b.listenerCount).toBe(0);
  });
});
