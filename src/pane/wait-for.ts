import type { Pane } from './pane.js';
import { watchScreen } from './watch-screen.js';

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

type WaitReason = 'matched' | 'idle' | 'timeout' | 'exited' | 'cancelled';

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
  const readText = (): string => (options.lines !== undefined ? pane.readText(options.lines).lines.join('\n') : pane.screenLines().join('\n'));
  let lastText: string | undefined;
  let lastChange = started;
  let found: { match: string; line: string } | undefined;

  const findPattern = (text: string): void => {
    if (!options.pattern || found) return;
    const m = options.pattern.exec(text);
    if (!m) return;
    const lineStart = text.lastIndexOf('\n', m.index) + 1;
    const lineEnd = text.indexOf('\n', m.index);
    found = { match: m[0], line: text.slice(lineStart, lineEnd === -1 ? undefined : lineEnd) };
  };
  /** Reads the screen; a change restarts the stillness (and a match of a still screen must be made again). */
  const read = (): void => {
    const text = readText();
    if (text === lastText) return;
    if (lastText !== undefined) {
      lastChange = performance.now();
      if (options.idleMs !== undefined) found = undefined;
    }
    lastText = text;
    findPattern(text);
  };
  const result = (r: Omit<WaitResult, 'elapsedMs'>): WaitResult => ({ ...r, elapsedMs: Math.round(performance.now() - started) });

  return watchScreen<WaitResult>(
    pane,
    {
      check: () => {
        read();
        if (options.pattern && !found) return undefined;
        if (options.idleMs !== undefined) {
          const stillFor = performance.now() - lastChange;
          if (stillFor < options.idleMs) return { recheckInMs: options.idleMs - stillFor + 1 };
          return { done: result({ matched: true, reason: options.pattern ? 'matched' : 'idle', ...found }) };
        }
        return { done: result({ matched: true, reason: 'matched', ...found }) };
      },
      // An exited pane's screen never changes again: a pattern on it counts as matched (and settled).
      exited: () => {
        read();
        return found ? result({ matched: true, reason: 'matched', ...found }) : result({ matched: false, reason: 'exited' });
      },
      timedOut: () => result({ matched: false, reason: 'timeout' }),
      cancelled: () => result({ matched: false, reason: 'cancelled' }),
    },
    { timeoutMs: options.timeoutMs, ...(options.signal ? { signal: options.signal } : {}) },
  );
}
