/**
 * runWithoutTerminal ends its call once the program is done or ended, whatever a process that
 * left its group does with the program's pipes (a stop or a time limit after the program exited is
 * covered by src/git/run-git.test.ts's stand-in ssh, which stays in the group).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runWithoutTerminal } from './no-terminal.js';
import { until } from '../../test/support/processes.js';
import { isProcessRunning } from './processes.js';

const scratch = mkdtempSync(path.join(tmpdir(), 'sb-no-terminal-'));
const escaped: number[] = [];
afterAll(() => {
  for (const pid of escaped) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Gone already.
    }
  }
  rmSync(scratch, { recursive: true, force: true });
});

describe.skipIf(process.platform === 'win32')('a program run with no terminal', () => {
  it('lets go of pipes a process of a session of its own still holds once the program has exited: the call ends with its exit and what came', { timeout: 60_000 }, async () => {
    const pidFile = path.join(scratch, 'escaped.pid');
    // The program exits at once; what it started in a session of its own keeps its output pipe open for ten minutes.
    const script = `setsid sh -c 'echo $$ > "${pidFile}.tmp" && mv "${pidFile}.tmp" "${pidFile}"; exec sleep 600' & echo started`;
    // A time limit far past the grace: the call ends on the program's exit, not on its time.
    const outcome = await runWithoutTerminal('/bin/sh', ['-c', script], { cwd: scratch, env: process.env, timeoutMs: 10 * 60_000, maxOutputBytes: 1024 });
    await until(() => existsSync(pidFile), 'the process in a session of its own to say its pid');
    escaped.push(Number(readFileSync(pidFile, 'utf8').trim()));
    expect(outcome).toMatchObject({ end: 'exited', code: 0, stdout: 'started\n' });
    // It was out of the group's reach: still running, ended by the test.
    expect(isProcessRunning(escaped[0] ?? 0)).toBe(true);
  });

  it('says a program that exits on its own exited, with its code and output', async () => {
    expect(await runWithoutTerminal('/bin/sh', ['-c', 'echo out; echo err >&2; exit 3'], { cwd: scratch, env: process.env, timeoutMs: 60_000, maxOutputBytes: 1024 })).toEqual({ end: 'exited', code: 3, signal: null, stdout: 'out\n', stderr: 'err\n' });
  });
});
