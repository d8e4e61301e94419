/**
 * Ending a process tree must also end what the tree starts while it is being ended. A run cancelled
 * while its CLI was still starting left a `sleep` of its own behind (a quick line under load): the
 * root went on TERM after forking one more child, every process first seen was gone, and the look for
 * newcomers happened only when something had lingered.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { findProcessesByEnv, isProcessRunning, terminateProcessTree } from '../src/platform/index.js';
import { exitOf, waitForOutput } from './support/processes.js';
import { tempDir } from './support/shell.js';

const MARKER = { name: 'SWITCHBOARD_TEST_TREE', value: `tree-${process.pid}` };
const work = tempDir('sb-tree-');

function marked(): number[] {
  return findProcessesByEnv(MARKER.name, MARKER.value);
}

afterEach(() => {
  for (const pid of marked()) process.kill(pid, 'SIGKILL');
});
afterAll(() => work.cleanup());

describe.runIf(process.platform !== 'win32')('ending a process tree', () => {
  it('ends a child the root starts on its way out, found by the marker once the root is gone', async () => {
    // On HUP or TERM the root starts one more child, writes its pid, and leaves: a polite ending that forks.
    const pidFile = path.join(work.dir, 'forked.pid');
    const script = `trap 'sleep 60 & echo $! > "$1"; exit 0' HUP TERM; echo ready; while :; do sleep 0.05; done`;
    const root = spawn('bash', ['-c', script, 'root', pidFile], { env: { ...process.env, [MARKER.name]: MARKER.value }, stdio: ['ignore', 'pipe', 'ignore'], detached: true });
    const exited = exitOf(root);
    try {
      await waitForOutput(root, /ready/);
      const result = await terminateProcessTree(root.pid ?? 0, { graceMs: 5_000, marker: MARKER });
      await exited;
      const forked = Number(readFileSync(pidFile, 'utf8').trim());
      expect(forked).toBeGreaterThan(0);
      expect(isProcessRunning(forked), `the child forked on the way out (${forked})`).toBe(false);
      expect(result).toEqual({ forced: true, survivors: [] });
      expect(marked()).toEqual([]);
    } finally {
      if (root.exitCode === null) root.kill('SIGKILL');
    }
  });
});
