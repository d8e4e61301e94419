/**
 * Timers for limits that come from users (policy.yaml, request parameters). Node clamps a delay
 * above 2^31-1 ms (about 24.8 days) to 1 ms, so `wall_clock_ms: 3000000000` would end a run at
 * once; a long timer waits in steps no longer than that and fires only once the whole delay has
 * passed. Limits are also bounded where they are read (MAX_TIME_LIMIT_MS), with a clear error.
 */
import type { Disposable } from './disposable.js';

/** The longest delay Node's setTimeout honours; longer ones fire after 1 ms. */
const MAX_TIMER_STEP_MS = 2 ** 31 - 1;
/** The longest time limit a policy or a request may set: 30 days. */
export const MAX_TIME_LIMIT_MS = 30 * 24 * 3_600_000;

export interface LongTimerOptions {
  /** Keep the process alive for it (default true, as setTimeout does). */
  ref?: boolean;
}

/**
 * Calls `fn` once after `ms` (any finite delay; past MAX_TIMER_STEP_MS in several steps). Disposing
 * it before then cancels it; disposing it again does nothing.
 */
export function setLongTimeout(fn: () => void, ms: number, options: LongTimerOptions = {}): Disposable {
  let remaining = Number.isFinite(ms) ? Math.max(0, ms) : MAX_TIME_LIMIT_MS;
  let timer: NodeJS.Timeout | undefined;
  const arm = (): void => {
    const step = Math.min(remaining, MAX_TIMER_STEP_MS);
    remaining -= step;
    timer = setTimeout(() => {
      timer = undefined;
      if (remaining > 0) arm();
      else fn();
    }, step);
    if (options.ref === false) timer.unref();
  };
  arm();
  return {
    dispose: () => {
      clearTimeout(timer);
      timer = undefined;
      remaining = 0;
    },
  };
}
