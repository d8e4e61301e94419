/**
 * Defects 2 and 3 of issue 11, against real daemon processes started by the CLI:
 * - after SIGKILL of the daemon, its panes get a hangup (no other process holds their terminals),
 *   and the next `switchboard up` ends what ignored it, removes the stale runtime file and socket,
 *   and says what it found;
 * - a second SIGINT during shutdown kills every pane at once and still removes the files.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { connect, type SwitchboardClient } from '../../src/index.js';
import { isProcessRunning } from '../../src/platform/index.js';
import { cleanEnv, runCli, spawnCli } from '../support/cli.js';
import { BASH_ARGV, BASH_ENV, tempDir } from '../support/shell.js';
import { daemonPidOf, exitOf, killMarked, paneProcesses, until, waitForOutput } from '../support/processes.js';

const homes: { dir: string; cleanup: () => void }[] = [];
afterEach(async () => {
  for (const home of homes.splice(0)) {
    await runCli(home.dir, ['down']);
    await killMarked(home.dir);
    home.cleanup();
  }
});

/** A daemon process as `switchboard daemon` runs it, in a fresh home, and a client of it. */
async function startDaemon(): Promise<{ home: string; child: ReturnType<typeof spawnCli>; client: SwitchboardClient; pid: number }> {
  const home = tempDir('sb-crash-');
  homes.push(home);
  const child = spawnCli(home.dir, ['daemon', '--port', '0', '--no-dashboard', '--log-level', 'info']);
  await waitForOutput(child, /listening on/);
  const pid = await daemonPidOf(home.dir);
  return { home: home.dir, child, client: await connect({ home: home.dir, env: cleanEnv() }), pid };
}

const IGNORES_HUP_AND_TERM = ['bash', '-c', 'trap "" HUP TERM; sleep 600 & echo ready; while :; do sleep 1; done'];
const LEFT_ITS_SESSION = ['bash', '-c', 'setsid sleep 600 & echo ready; wait'];

describe.runIf(process.platform === 'linux')('a daemon killed with SIGKILL', () => {
  it('leaves panes that get a hangup: a shell and a plain program end by themselves', async () => {
    const { client, child, pid } = await startDaemon();
    const shell = await client.createPane({ argv: [...BASH_ARGV], env: BASH_ENV });
    const sleeper = await client.createPane({ argv: ['sleep', '600'] });
    // Created last, it would hold both terminals above if descriptors leaked, so neither would hang up.
    const stubborn = await client.createPane({ argv: IGNORES_HUP_AND_TERM });
    await client.waitFor(shell.pane_id, { pattern: 'PROMPT\\$' });
    await client.waitFor(stubborn.pane_id, { pattern: 'ready' });
    client.close();
    process.kill(pid, 'SIGKILL');
    await exitOf(child);
    await until(() => !isProcessRunning(shell.pid) && !isProcessRunning(sleeper.pid), 'the hangup to end the shell and sleep');
    // What ignores the hangup is still there: that is the next daemon's job (the next test).
    expect(isProcessRunning(stubborn.pid)).toBe(true);
    expect(paneProcesses([stubborn.pane_id]).length).toBeGreaterThan(0);
  });

  it('is cleaned up after by the next `switchboard up`: 20 panes ended, stale files removed, and it says so', async () => {
    const { client, child, pid, home } = await startDaemon();
    const info = await client.info();
    const socket = info.transports.socket ?? '';
    const argvs = [
      ...Array.from({ length: 8 }, () => [...BASH_ARGV]),
      ...Array.from({ length: 6 }, () => ['sleep', '600']),
      ...Array.from({ length: 3 }, () => IGNORES_HUP_AND_TERM),
      ...Array.from({ length: 3 }, () => LEFT_ITS_SESSION),
    ];
    const ids: string[] = [];
    for (const argv of argvs) {
      const { pane_id } = await client.createPane({ argv, env: BASH_ENV });
      ids.push(pane_id);
      if (argv[0] !== 'sleep') await client.waitFor(pane_id, { pattern: argv[1] === '-c' ? 'ready' : 'PROMPT\\$' });
    }
    expect((await client.list()).panes.filter((p) => p.alive)).toHaveLength(20);
    client.close();
    process.kill(pid, 'SIGKILL');
    await exitOf(child);
    expect(existsSync(path.join(home, 'daemon.json'))).toBe(true);
    expect(paneProcesses(ids).length).toBeGreaterThan(0);

    const started = performance.now();
    const up = await runCli(home, ['up', '--port', '0', '--no-dashboard']);
    expect(up.stderr).toBe('');
    expect(up.code).toBe(0);
    expect(up.stdout).toMatch(new RegExp(`found what daemon pid ${pid} left when it died: ended \\d+ process(es)? of \\d+ panes? it left running .*; removed its runtime file; removed its socket`));
    // Nothing of the dead daemon is left by the time `up` returns.
    await until(() => paneProcesses(ids).length === 0, 'the dead daemon\u2019s processes to be gone', 5_000);
    console.log(`after kill -9 with 20 panes: nothing left ${Math.round(performance.now() - started)} ms after \`switchboard up\` began`);
    expect(paneProcesses(ids)).toEqual([]);
    expect(existsSync(socket) && !socket.startsWith(home)).toBe(false);
    const status = await runCli(home, ['status']);
    expect(status.stdout).toMatch(/panes: 0 running/);
  });
});

describe.runIf(process.platform === 'linux')('a second signal during shutdown', () => {
  it('kills every pane at once and still removes the runtime file and socket', async () => {
    const { client, child, home } = await startDaemon();
    const socket = (await client.info()).transports.socket ?? '';
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const { pane_id } = await client.createPane({ argv: IGNORES_HUP_AND_TERM });
      await client.waitFor(pane_id, { pattern: 'ready' });
      ids.push(pane_id);
    }
    client.close();
    expect(paneProcesses(ids).length).toBeGreaterThanOrEqual(6);
    child.kill('SIGINT');
    await waitForOutput(child, /shutting down/);
    // The panes ignore HUP and TERM: the daemon is now in its grace period, waiting on them.
    child.kill('SIGINT');
    expect(await exitOf(child)).toBe(130);
    expect(existsSync(path.join(home, 'daemon.json'))).toBe(false);
    expect(existsSync(socket)).toBe(false);
    await until(() => paneProcesses(ids).length === 0, 'every pane process to be gone', 5_000);
  });
});
