import type { Pane } from './pane.js';

/** What to wait for: a pattern on screen, a still screen, or both (the pattern, then stillness). */
export interface WaitOptions {
  pattern?: RegExp;
  /** Resolve once the screen has not changed for this long. */
  idleMs?: number;
  timeoutMs: number;
  /** Search the last N lines of history and screen instead of only the visible screen. */
  lines?: number;
  signal?: AbortSignal;
}

/**
 * How often the screen is re-read: a bucket of CHECK_BURST immediate checks, refilled by one every
 * CHECK_REFILL_MS. A quiet pane's changes (a command's echo, then its output a moment later) are
 * checked at once; a flood, which renders hundreds of times a second, is read at most 100 times a
 * second, with a trailing check so the last change is never missed.
 */
const CHECK_BURST = 4;
const CHECK_REFILL_MS = 10;

export type WaitReason = 'matched' | 'idle' | 'timeout' | 'exited' | 'cancelled';

export interface WaitResult {
  /** True when the condition was met. */
  matched: boolean;
  reason: WaitReason;
  /** The text the pattern matched. */
  match?: string;
  /** The whole line the match started on. */
  line?: string;
  elapsedMs: number;
}

/** Waits until the condition holds on `pane`'s screen, the pane exits, the timeout passes or `signal` aborts. */
export function waitForScreen(pane: Pane, options: WaitOptions): Promise<WaitResult> {
  const started = performance.now();
  const elapsed = (): number => Math.round(performance.now() - started);
  const readText = (): string =>
    options.lines !== undefined ? pane.readText(options.lines).lines.join('\n') : pane.screenLines().join('\n');

  return new Promise<WaitResult>((resolve) => {
    let lastText = readText();
    let lastChange = performance.now();
    let found: { match: string; line: string } | undefined;
    let idleTimer: NodeJS.Timeout | undefined;
    let checkTimer: NodeJS.Timeout | undefined;
    let tokens = CHECK_BURST;
    let refilledAt = performance.now();
    let done = false;

    const findPattern = (text: string): void => {
      if (!options.pattern || found) return;
      const m = options.pattern.exec(text);
      if (!m) return;
      const lineStart = text.lastIndexOf('\n', m.index) + 1;
      const lineEnd = text.indexOf('\n', m.index);
      found = { match: m[0], line: text.slice(lineStart, lineEnd === -1 ? undefined : lineEnd) };
    };

    const finish = (result: Omit<WaitResult, 'elapsedMs'>): void => {
      if (done) return;
      done = true;
      clearTimeout(timeout);
      clearTimeout(idleTimer);
      clearTimeout(checkTimer);
      renderSub.dispose();
      exitSub.dispose();
      options.signal?.removeEventListener('abort', onAbort);
      resolve({ ...result, elapsedMs: elapsed() });
    };

    const evaluate = (): void => {
      if (options.pattern && !found) return;
      if (options.idleMs !== undefined) {
        const stillFor = performance.now() - lastChange;
        if (stillFor < options.idleMs) {
          clearTimeout(idleTimer);
          idleTimer = setTimeout(evaluate, Math.ceil(options.idleMs - stillFor) + 1);
          return;
        }
        finish({ matched: true, reason: options.pattern ? 'matched' : 'idle', ...found });
        return;
      }
      finish({ matched: true, reason: 'matched', ...found });
    };

    const refill = (): void => {
      const now = performance.now();
      tokens = Math.min(CHECK_BURST, tokens + (now - refilledAt) / CHECK_REFILL_MS);
      refilledAt = now;
    };

    const check = (): void => {
      checkTimer = undefined;
      refill();
      tokens -= 1;
      const text = readText();
      if (text === lastText) return;
      lastText = text;
      lastChange = performance.now();
      // A still screen that was matched must be matched again when it changes under us.
      if (options.idleMs !== undefined) found = undefined;
      findPattern(text);
      evaluate();
    };

    const onRender = (): void => {
      if (checkTimer) return;
      refill();
      if (tokens >= 1) check();
      else checkTimer = setTimeout(check, (1 - tokens) * CHECK_REFILL_MS);
    };

    const onAbort = (): void => finish({ matched: false, reason: 'cancelled' });
    const timeout = setTimeout(() => finish({ matched: false, reason: 'timeout' }), options.timeoutMs);
    const renderSub = pane.onRender(onRender);
    // An exited pane's screen never changes again: a pattern on it counts as matched (and settled).
    const exitSub = pane.onExit(() => {
      clearTimeout(checkTimer);
      check();
      if (found) finish({ matched: true, reason: 'matched', ...found });
      else finish({ matched: false, reason: 'exited' });
    });
    options.signal?.addEventListener('abort', onAbort);

    if (options.signal?.aborted) {
      onAbort();
      return;
    }
    findPattern(lastText);
    if (!pane.alive) {
      if (found) finish({ matched: true, reason: 'matched', ...found });
      else finish({ matched: false, reason: 'exited' });
      return;
    }
    evaluate();
  });
}
