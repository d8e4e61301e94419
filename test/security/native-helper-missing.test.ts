/**
 * Item 11 of issue 21, its native part: when the close-on-exec helper did not load, the daemon
 * logged a warning and started panes anyway, each inheriting the terminals of the panes before it
 * (issue 11's first defect, back). Now no pane starts: create_pane, and every other way to start
 * one (the tmux front end here), answer SPAWN_FAILED saying the helper is missing and how to
 * rebuild it, while everything else keeps working. The helper's absence is simulated by mocking
 * the one module that loads it; the daemon is the real one, in process.
 */
import { describe, expect, it, vi } from 'vitest';
import { errorOf, RawClient, resultOf, useTestDaemon } from '../support/daemon.js';

const PROBLEM = 'the native helper did not load (fd_flags.node: cannot open shared object file); rebuild it with `npm rebuild switchboard` (needs a C compiler, make and python3, as node-pty does)';

vi.mock('../../src/platform/descriptors.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../src/platform/descriptors.js')>();
  return { ...real, closeOnExecProblem: () => PROBLEM, setCloseOnExec: () => false, isCloseOnExec: () => undefined };
});

const t = useTestDaemon();

describe('a daemon without its native helper', () => {
  it('starts no pane, saying why and how to rebuild, and answers everything else', async () => {
    const client = await RawClient.connect(t.daemon, 'socket');
    try {
      const refused = errorOf(await client.call(t.daemon.token, 'create_pane', { argv: ['sleep', '60'], cwd: t.work }));
      expect(refused.data.code).toBe('SPAWN_FAILED');
      expect(refused.message).toContain('panes cannot start: the native helper did not load');
      expect(refused.message).toContain('npm rebuild');
      const tmux = resultOf<{ exit_code: number; stderr: string }>(await client.call(t.daemon.token, 'tmux_command', { argv: ['-S', `${t.work}/x.sock`, 'new-session', '-d', 'sleep 60'], env: {}, cwd: t.work, tty: false }));
      expect(tmux.exit_code).toBe(1);
      expect(tmux.stderr).toContain('npm rebuild');
      expect(t.daemon.panes.list()).toHaveLength(0);
      // Everything that starts no program still works.
      expect(resultOf<{ version: string }>(await client.call(t.daemon.token, 'info')).version).toMatch(/\d/);
      expect(resultOf<{ panes: unknown[] }>(await client.call(t.daemon.token, 'list')).panes).toEqual([]);
    } finally {
      client.close();
    }
  });
});
