import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { DAEMON_MARKER_VARIABLE, homeId, readRuntimeFile } from '../../src/daemon/index.js';
import { findProcessesWithEnv } from '../../src/platform/index.js';
import { runtimeFilePath } from '../../src/daemon/index.js';

/** Running processes that a daemon of `home` started (optionally only daemon `pid`'s), by their marker. */
function markedProcesses(home: string, daemonPid?: number): number[] {
  const prefix = `${homeId(home)}:${daemonPid === undefined ? '' : `${daemonPid}:`}`;
  return findProcessesWithEnv(DAEMON_MARKER_VARIABLE)
    .filter((p) => p.value.startsWith(prefix))
    .map((p) => p.pid);
}

/**
 * SIGKILL to everything a daemon of `home` started, until nothing is left (a shell may fork while
 * it is being killed): a test's own cleanup, whatever the code under test did.
 */
export async function killMarked(home: string): Promise<void> {
  for (let left = markedProcesses(home); left.length > 0; left = markedProcesses(home)) {
    for (const pid of left) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
    await new Promise((r) => setTimeout(r, 25));
  }
}

/**
 * Waits until `check` holds (it may be async), looking every 25 ms; throws with `what` after
 * `timeoutMs`. The limit is generous on purpose: it bounds a wait for something that must happen,
 * on a loaded 2-core machine as well as an idle one; it never measures how fast it happened.
 */
export async function until(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/**
 * Waits until process `pid` runs `program` (the basename of its argv[0]). A pane's pid is known as
 * soon as it is spawned, before the exec chain reaches its program: until then /proc shows the
 * daemon's copy, or node-pty's spawn helper with the terminal it opens for a moment as fd 3, or an
 * empty environment in the middle of an exec. Read a new pane's descriptors or environment after this.
 */
export async function untilProgram(pid: number, program: string, timeoutMs = 30_000): Promise<void> {
  const argv0 = (): string => {
    try {
      return path.basename(readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0] ?? '');
    } catch {
      return '';
    }
  };
  await until(() => argv0() === program, `process ${pid} to run ${program}`, timeoutMs);
}

/** Resolves with the first stdout/stderr text of `child` that matches `pattern`. */
export function waitForOutput(child: ChildProcess, pattern: RegExp, timeoutMs = 30_000): Promise<string> {
  return new Promise((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(() => reject(new Error(`no ${String(pattern)} in time; output so far:\n${seen}`)), timeoutMs);
    const onData = (d: Buffer): void => {
      seen += d.toString('utf8');
      const match = pattern.exec(seen);
      if (match) {
        clearTimeout(timer);
        child.stdout?.off('data', onData);
        child.stderr?.off('data', onData);
        resolve(match[0]);
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`exited (${String(code)}) before ${String(pattern)}; output:\n${seen}`));
    });
  });
}

/** Resolves with the exit code (or signal) of `child` once it has exited. */
export function exitOf(child: ChildProcess): Promise<number | NodeJS.Signals | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode ?? child.signalCode);
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal)));
}

/** The daemon's pid from its runtime file, once it has written one. */
export async function daemonPidOf(home: string): Promise<number> {
  await until(() => existsSync(runtimeFilePath(home)) && readRuntimeFile(home) !== undefined, 'the runtime file');
  return readRuntimeFile(home)?.pid ?? -1;
}

/** Running processes of the panes `paneIds` (found by the marker every pane process carries). */
export function paneProcesses(paneIds: Iterable<string>): number[] {
  const ids = new Set(paneIds);
  return findProcessesWithEnv('SWITCHBOARD_PANE_ID')
    .filter((p) => ids.has(p.value))
    .map((p) => p.pid);
}
