/**
 * Issue 11's last risk: the test teardown killed every process on the machine carrying a pane
 * marker, a user's real panes and another run's included. It looks at its own run's only now.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { RUN_MARKER, processesOfRun } from '../support/global-setup.js';
import { useTestDaemon } from '../support/daemon.js';
import { cleanEnv } from '../support/cli.js';
import { until } from '../support/processes.js';
import { leftoversIn, RUN_TEMP_VARIABLE } from '../support/run-temp.js';

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

describe('the run\u2019s temporary folder', () => {
  it('is every process\u2019s temporary folder, short, in the system\u2019s, with the run\u2019s default home in it', () => {
    const dir = process.env[RUN_TEMP_VARIABLE] ?? '';
    expect(path.basename(dir)).toMatch(/^sbt-[A-Za-z0-9]{6}$/);
    expect(tmpdir()).toBe(dir);
    expect(process.env.SWITCHBOARD_HOME).toBe(path.join(dir, 'home'));
    // A program the test starts has it too.
    expect(execFileSync(process.execPath, ['-e', 'process.stdout.write(require("node:os").tmpdir())'], { encoding: 'utf8' })).toBe(dir);
  });

  it('is checked for what a test left: every file and empty folder, and agents\u2019 folders in the default home, named', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'sb-leftovers-'));
    try {
      expect(leftoversIn(dir)).toEqual([]);
      mkdirSync(path.join(dir, 'home', 'tmp', '123-AbCdEf', 'opencode'), { recursive: true });
      mkdirSync(path.join(dir, 'home', 'sessions'), { recursive: true });
      writeFileSync(path.join(dir, 'home', 'ledger.db'), '');
      mkdirSync(path.join(dir, 'claude-0'));
      writeFileSync(path.join(dir, '.9afbdebbe3fefddf-00000000.so'), '');
      expect(leftoversIn(dir).sort()).toEqual(['.9afbdebbe3fefddf-00000000.so', 'claude-0/', 'home/tmp/123-AbCdEf/opencode/']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
