/**
 * The one screen-wait primitive on a real PTY: a wait ends with its check's answer, its time limit,
 * the pane's exit or the caller's signal, and leaves nothing subscribed or ticking; a check that
 * throws ends the wait with that error.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { PaneRegistry } from '../src/pane/index.js';
import { watchScreen, type ScreenWait } from '../src/pane/watch-screen.js';
import { BASH_ARGV, BASH_ENV } from './support/shell.js';

const registry = new PaneRegistry({ defaults: { killGraceMs: 1_000 } });

afterAll(async () => {
  await registry.close({ graceMs: 500 });
});

function waitFor(text: string, checks: { count: number }, fail?: () => boolean): ScreenWait<string> {
  return {
    check: () => {
      checks.count++;
      if (fail?.()) throw new Error('the check broke');
      return registry.list().some((p) => p.screenLines().some((l) => l.includes(text))) ? { done: 'seen' } : undefined;
    },
    exited: () => 'exited',
    timedOut: () => 'timed out',
    cancelled: () => 'cancelled',
  };
}

describe('watchScreen on a real PTY', () => {
  it('ends with the check, the exit, the signal or the time limit, and looks no more afterwards', async () => {
    const pane = registry.create({ argv: [...BASH_ARGV], env: BASH_ENV });
    const checks = { count: 0 };
    const seen = watchScreen(pane, waitFor('watch-me-42', checks), { timeoutMs: 60_000 });
    pane.write('echo watch-me-$((6*7))\r');
    expect(await seen).toBe('seen');

    const controller = new AbortController();
    const cancelled = watchScreen(pane, waitFor('never-shown', { count: 0 }), { timeoutMs: 60_000, signal: controller.signal });
    controller.abort();
    expect(await cancelled).toBe('cancelled');
    expect(await watchScreen(pane, waitFor('never-shown', { count: 0 }), { timeoutMs: 50 })).toBe('timed out');

    // Once ended, renders lead to no more looks.
    const after = checks.count;
    pane.write('echo more output\r');
    await watchScreen(pane, waitFor('more output', { count: 0 }), { timeoutMs: 60_000 });
    expect(checks.count).toBe(after);

    const exited = watchScreen(pane, waitFor('never-shown', { count: 0 }), { timeoutMs: 60_000 });
    pane.write('exit\r');
    expect(await exited).toBe('exited');
  });

  it('ends the wait with the error of a check that throws, and looks no more', async () => {
    const pane = registry.create({ argv: [...BASH_ARGV], env: BASH_ENV });
    const checks = { count: 0 };
    let broken = false;
    const waiting = watchScreen(pane, waitFor('never-shown', checks, () => broken), { timeoutMs: 60_000 });
    broken = true;
    pane.write('echo something to render\r');
    await expect(waiting).rejects.toThrow('the check broke');
    const after = checks.count;
    pane.write('echo and more\r');
    await watchScreen(pane, waitFor('and more', { count: 0 }), { timeoutMs: 60_000 });
    expect(checks.count).toBe(after);
  });
});
