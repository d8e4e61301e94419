/**
 * A bound on what strangers can make the daemon write to its log. Anything a peer that has not
 * authenticated can cause (a refused connection, a malformed request, a full connection budget)
 * goes through here: a few lines of each kind per window, then a count, written once when the
 * window closes. 5,000 resets make a handful of lines, not 5,000.
 */
import type { Logger } from './logger.js';

type Level = 'debug' | 'info' | 'warn' | 'error';

export interface LogLimiterOptions {
  /** Lines of one kind written per window (default 5). */
  perWindow?: number;
  /** The window, in ms (default 60 s). */
  windowMs?: number;
}

interface KindState {
  level: Level;
  message: string;
  written: number;
  suppressed: number;
  timer: NodeJS.Timeout | undefined;
}

/** Most kinds tracked at once; a kind's state lives one window, and there are few kinds in practice. */
const MAX_KINDS = 256;

export class LogLimiter {
  private readonly kinds = new Map<string, KindState>();
  private readonly perWindow: number;
  private readonly windowMs: number;

  constructor(
    private readonly logger: Logger,
    options: LogLimiterOptions = {},
  ) {
    this.perWindow = options.perWindow ?? 5;
    this.windowMs = options.windowMs ?? 60_000;
  }

  /** Logs `message` unless this kind (the message itself) has had its share of this window. */
  log(level: Level, message: string, fields?: Record<string, unknown>): void {
    let state = this.kinds.get(message);
    if (!state) {
      if (this.kinds.size >= MAX_KINDS) return;
      state = { level, message, written: 0, suppressed: 0, timer: undefined };
      this.kinds.set(message, state);
      const opened = state;
      state.timer = setTimeout(() => this.close(opened), this.windowMs);
      state.timer.unref();
    }
    if (state.written < this.perWindow) {
      state.written += 1;
      this.logger[level](message, fields);
    } else {
      state.suppressed += 1;
    }
  }

  /** Writes what a closed window held back, if anything. */
  private close(state: KindState): void {
    this.kinds.delete(state.message);
    if (state.suppressed > 0) this.logger[state.level](`${state.message} (${state.suppressed} more like it in the last ${Math.round(this.windowMs / 1000)} s, not logged)`);
  }

  /** Writes what is held back now and stops the clocks (shutdown). */
  flush(): void {
    for (const state of [...this.kinds.values()]) {
      clearTimeout(state.timer);
      this.close(state);
    }
  }
}
