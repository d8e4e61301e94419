/**
 * Issue 11's last risk: the test teardown killed every process on the machine carrying a pane
 * marker, a user's real panes and another run's included. It looks at its own run's only now.
 */
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { RUN_MARKER, processesOfRun } from '../support/global-setup.js';
import { useTestDaemon } from '../support/daemon.js';
import { cleanEnv } from '../support/cli.js';
import { until } from '../support/processes.js';

const t = useTestDaemon();

describe.runIf(process.platform === 'linux')('the test teardown', () => {
  it('counts what this run started, and never a pane of the user or of another run', async () => {
    const run = process.env[RUN_MARKER] ?? '';
    expect(run).toMatch(/^[0-9a-f]{16}$/);
    const pane = t.daemon.panes.create({ argv: ['sleep', '60'], cwd: t.work });
    // A user's real pane (no run marker) and another run's, both carrying a pane marker.
    const { [RUN_MARKER]: _ours, ...withoutRun } = cleanEnv();
    const users = spawn('sleep', ['60'], { env: { ...withoutRun, SWITCHBOARD_PANE_ID: 'puser0001' }, stdio: 'ignore' });
    const others = spawn('sleep', ['60'], { env: { ...withoutRun, SWITCHBOARD_PANE_ID: 'pother001', [RUN_MARKER]: 'f'.repeat(16) }, stdio: 'ignore' });
    try {
      await until(() => processesOfRun('f'.repeat(16)).some((p) => p.pid === others.pid), 'the other run\u2019s process to show');
      const mine = processesOfRun(run).map((p) => p.pid);
      expect(mine).toContain(pane.pid);
      expect(mine).not.toContain(users.pid);
      expect(mine).not.toContain(others.pid);
    } finally {
      users.kill('SIGKILL');
      others.kill('SIGKILL');
      await t.daemon.panes.remove(pane.id, { graceMs: 500 });
    }
  });
});
