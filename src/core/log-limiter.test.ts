import { describe, expect, it, vi } from 'vitest';
import { LogLimiter } from './log-limiter.js';
import type { Logger } from './logger.js';

function recorder(): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const logger: Logger = {
    debug: (m) => lines.push(`debug ${m}`),
    info: (m) => lines.push(`info ${m}`),
    warn: (m) => lines.push(`warn ${m}`),
    error: (m) => lines.push(`error ${m}`),
    child: () => logger,
  };
  return { logger, lines };
}

describe('LogLimiter', () => {
  it('writes a few lines of a kind per window, then one count when the window closes', () => {
    vi.useFakeTimers();
    try {
      const { logger, lines } = recorder();
      const limiter = new LogLimiter(logger, { perWindow: 3, windowMs: 1_000 });
      for (let i = 0; i < 5_000; i++) limiter.log('warn', 'refused a connection');
      limiter.log('info', 'another kind');
      expect(lines).toEqual(['warn refused a connection', 'warn refused a connection', 'warn refused a connection', 'info another kind']);
      vi.advanceTimersByTime(1_000);
      expect(lines.slice(4)).toEqual(['warn refused a connection (4997 more like it in the last 1 s, not logged)']);
      limiter.log('warn', 'refused a connection');
      expect(lines).toHaveLength(6);
    } finally {
      vi.useRealTimers();
    }
  });

  it('writes what it held back when flushed', () => {
    const { logger, lines } = recorder();
    const limiter = new LogLimiter(logger, { perWindow: 1 });
    limiter.log('debug', 'bad request');
    limiter.log('debug', 'bad request');
    limiter.flush();
    expect(lines).toEqual(['debug bad request', 'debug bad request (1 more like it in the last 60 s, not logged)']);
  });
});
