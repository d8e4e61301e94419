import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { waitForScreen, type Pane } from '../../src/pane/index.js';
import { compileSafeRegex } from '../../src/core/safe-regex.js';

/** A bash with no user rc files and a fixed prompt, so screens are predictable. */
export const BASH_ARGV = ['bash', '--norc', '--noprofile', '-i'] as const;
export const BASH_ENV = { PS1: 'PROMPT$ ', HISTFILE: '/dev/null' } as const;

/**
 * For a `shell` agent pane (the user's interactive shell, which reads its startup files): a HOME
 * of the test's own, so the machine's dotfiles never run in a test. They are not the test's to
 * depend on: this machine's ~/.bashrc runs `pyenv rehash`, whose lock, left by a shell a test ended
 * mid-start, held every later interactive shell for 60 s.
 */
export const SHELL_AGENT_ENV = (home: string): Record<string, string> => ({ ...BASH_ENV, HOME: home });

/** Waits until `pattern` shows on `pane`'s screen; throws with the screen when it does not in time. */
export async function expectScreen(pane: Pane, pattern: string | RegExp, timeoutMs = 15_000, lines?: number): Promise<string> {
  const regex = typeof pattern === 'string' ? compileSafeRegex(pattern.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')) : pattern;
  const result = await waitForScreen(pane, { pattern: regex, timeoutMs, lines });
  if (!result.matched) {
    const screen = pane.snapshot().lines.join('\n');
    throw new Error(`timed out (${result.reason}) waiting for ${String(pattern)} on pane ${pane.id}; screen:\n${screen}`);
  }
  return result.match ?? '';
}

/**
 * A fresh temporary directory, removed by the returned function, with the sealing key a daemon
 * whose home it was made beside it (`<home>.key`: team presets, a jailed daemon at its start).
 */
export function tempDir(prefix = 'sb-test-'): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  return {
    dir,
    cleanup: () => {
      rmSync(dir, { recursive: true, force: true });
      rmSync(`${dir}.key`, { force: true });
    },
  };
}

/** Open file descriptors of this process (Linux). */
export function openFdCount(): number {
  return readdirSync('/proc/self/fd').length;
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
