/**
 * Item 10 of issue 21: a daemon started with descriptors open (200, 251, 300 here, as a wrapper
 * script or a supervisor leaves them) handed them to every pane. The daemon marks everything above
 * 2 close-on-exec before anything else, so a pane's program starts with none of them.
 */
import { spawn } from 'node:child_process';
import { readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { connect, type SwitchboardClient } from '../../src/index.js';
import { readRuntimeFile } from '../../src/daemon/index.js';
import { isProcessRunning } from '../../src/platform/index.js';
import { CLI, cleanEnv } from '../support/cli.js';
import { exitOf, until, untilProgram } from '../support/processes.js';
import { tempDir } from '../support/shell.js';

const INHERITED = [200, 251, 300];
const work = tempDir('sb-fds-');
const home = path.join(work.dir, 'home');

afterAll(() => work.cleanup());

/** The descriptors process `pid` holds. */
function descriptors(pid: number): number[] {
  return readdirSync(`/proc/${pid}/fd`).map(Number);
}

describe.runIf(process.platform === 'linux')('descriptors the daemon inherited', () => {
  it('reach no pane', async () => {
    const file = path.join(work.dir, 'held-open');
    writeFileSync(file, 'a file the daemon\u2019s parent left open\n');
    const opens = INHERITED.map((fd) => `exec ${fd}<"$0"`).join('; ');
    const daemon = spawn('bash', ['-c', `${opens}; exec "$1" "$2" --home "$3" daemon --port 0 --no-dashboard --no-bridge`, file, process.execPath, CLI, home], { env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    const exited = exitOf(daemon);
    let client: SwitchboardClient | undefined;
    try {
      await until(() => readRuntimeFile(home)?.pid === daemon.pid, 'the daemon to publish its runtime file');
      // The daemon itself still holds them (they are its parent's to close), but marked.
      for (const fd of INHERITED) expect(descriptors(daemon.pid ?? 0)).toContain(fd);
      client = await connect({ home, env: cleanEnv() });
      const pane = await client.createPane({ argv: ['sleep', '60'] });
      // Before its exec the pane's process is node-pty's spawn helper, which opens the terminal as fd 3
      // for a moment; and Linux names the process `sleep` a moment before it closes the close-on-exec
      // descriptors. So the pane must come to hold none above 2: one handed down for real stays, and
      // the wait runs out.
      await untilProgram(pane.pid, 'sleep');
      await until(() => descriptors(pane.pid).every((fd) => fd <= 2), 'the pane to hold no descriptor above 2 once its exec is done', 10_000);
      const held = descriptors(pane.pid);
      for (const fd of INHERITED) expect(held, `fd ${fd} in the pane`).not.toContain(fd);
      expect(held.filter((fd) => fd > 2)).toEqual([]);
      await client.kill(pane.pane_id);
      await client.shutdown();
    } finally {
      client?.close();
      if (daemon.exitCode === null && daemon.pid !== undefined && isProcessRunning(daemon.pid)) daemon.kill('SIGKILL');
      await exited;
    }
  });
});
