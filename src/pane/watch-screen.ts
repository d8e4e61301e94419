/**
 * The one way Switchboard waits on a pane's screen: a pattern to show (wait_for), a screen to hold
 * still (an approval prompt before its keys), an agent to reach its idle prompt (a start), a key to
 * take effect (a menu's highlight to move). Each wait says only what it looks for; this primitive
 * owns the rest: when to look (renders, rate-limited; rechecks the wait asks for; other events that
 * call for a look), the time limit, the pane's exit, the caller's signal, and leaving nothing
 * subscribed or scheduled behind.
 */
import { DisposableStore } from '../core/disposable.js';
import type { Event } from '../core/emitter.js';
import type { Pane } from './pane.js';

/** What a look at the screen found: the wait's result, a time to look again, or nothing yet. */
type ScreenCheck<T> = { done: T } | { recheckInMs: number } | undefined;

/** One wait on a screen: how to look, and what each way of ending means. */
export interface ScreenWait<T> {
  /** Looks at the screen now (after a render, a recheck it asked for, or another event). */
  check(): ScreenCheck<T>;
  /** The pane exited (its screen will not change again); also when it had exited before the wait began. */
  exited(): T;
  timedOut(): T;
  cancelled(): T;
}

export interface ScreenWaitOptions {
  timeoutMs: number;
  signal?: AbortSignal;
  /** Other events that call for a look (a dialog answered). */
  also?: readonly Event<unknown>[];
}

/**
 * How often renders lead to a look: a bucket of CHECK_BURST immediate looks, refilled by one every
 * CHECK_REFILL_MS. A quiet pane's changes (a command's echo, then its output a moment later) are
 * looked at at once; a flood, which renders hundreds of times a second, at most 100 times a
 * second, with a trailing look so the last change is never missed.
 */
const CHECK_BURST = 4;
const CHECK_REFILL_MS = 10;

/** Waits on `pane`'s screen until `wait` says it is done, the pane exits, the time limit passes or the signal aborts. */
export function watchScreen<T>(pane: Pane, wait: ScreenWait<T>, options: ScreenWaitOptions): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const subscriptions = new DisposableStore();
    let done = false;
    let recheckTimer: NodeJS.Timeout | undefined;
    let throttleTimer: NodeJS.Timeout | undefined;
    const catchingUp = new Set<NodeJS.Immediate>();
    let tokens = CHECK_BURST;
    let refilledAt = performance.now();

    /** Ends the wait: nothing left subscribed or ticking; false when it had ended already. */
    const end = (): boolean => {
      if (done) return false;
      done = true;
      clearTimeout(timeout);
      clearTimeout(recheckTimer);
      clearTimeout(throttleTimer);
      for (const immediate of catchingUp) clearImmediate(immediate);
      catchingUp.clear();
      subscriptions.dispose();
      options.signal?.removeEventListener('abort', onAbort);
      return true;
    };
    const finish = (value: T): void => {
      if (end()) resolve(value);
    };
    const look = (): void => {
      if (done) return;
      let seen: ReturnType<ScreenWait<T>['check']>;
      try {
        seen = wait.check();
      } catch (err) {
        // A check that throws ends the wait with its error, nothing left subscribed or ticking.
        if (end()) reject(err instanceof Error ? err : new Error(String(err)));
        return;
      }
      if (seen === undefined) return;
      if ('done' in seen) {
        finish(seen.done);
        return;
      }
      clearTimeout(recheckTimer);
      recheckTimer = setTimeout(() => caughtUp(look), Math.max(0, Math.ceil(seen.recheckInMs)));
    };
    /**
     * A timer's verdict (held still, took no effect, too late) is given on all the output that has
     * come: after a stall of the process, timers run before the output waiting in the kernel is
     * read, and a screen judged then is one that has already changed. The output is read (the
     * event loop's poll comes before setImmediate) and parsed first.
     */
    const caughtUp = (then: () => void): void => {
      const immediate = setImmediate(() => {
        catchingUp.delete(immediate);
        if (done) return;
        pane.drainAll();
        then();
      });
      catchingUp.add(immediate);
    };
    const refill = (): void => {
      const now = performance.now();
      tokens = Math.min(CHECK_BURST, tokens + (now - refilledAt) / CHECK_REFILL_MS);
      refilledAt = now;
    };
    const onRender = (): void => {
      if (throttleTimer) return;
      refill();
      if (tokens >= 1) {
        tokens -= 1;
        look();
        return;
      }
      throttleTimer = setTimeout(() => {
        throttleTimer = undefined;
        refill();
        tokens -= 1;
        look();
      }, (1 - tokens) * CHECK_REFILL_MS);
    };
    const onAbort = (): void => finish(wait.cancelled());

    const timeout = setTimeout(
      () =>
        caughtUp(() => {
          look();
          finish(wait.timedOut());
        }),
      options.timeoutMs,
    );
    subscriptions.add(pane.onRender(onRender));
    subscriptions.add(pane.onExit(() => finish(wait.exited())));
    for (const event of options.also ?? []) subscriptions.add(event(() => look()));
    options.signal?.addEventListener('abort', onAbort);
    if (options.signal?.aborted) onAbort();
    else if (!pane.alive) finish(wait.exited());
    else look();
  });
}
