import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { listProcesses } from '../../src/platform/index.js';

/**
 * After the whole run, no process started by a test pane or driver may still be running. Every pane
 * process carries SWITCHBOARD_PANE_ID, every headless run SWITCHBOARD_RUN_ID and every multi-turn
 * driver session SWITCHBOARD_SESSION_ID; processes from a pane that the test runner itself runs in
 * (if any) carry the runner's own pane id and are left alone.
 */
const MARKERS = ['SWITCHBOARD_PANE_ID', 'SWITCHBOARD_RUN_ID', 'SWITCHBOARD_SESSION_ID'];
function ownPaneId(): string | undefined {
  return process.env.SWITCHBOARD_PANE_ID;
}

/**
 * Every process this run starts inherits this variable (workers, daemons, panes, drivers; test
 * helpers pass it on where they clean Switchboard's own variables out), so the teardown counts
 * only this run's processes: never a user's own panes, nor another test run's on the same machine.
 */
const RUN_VAR = 'SB_TEST_RUN';

/** The process's marker (`NAME=value`), if a pane or a driver of this run started it. */
function markerOf(pid: number, run: string): string | undefined {
  try {
    const environ = readFileSync(`/proc/${pid}/environ`).toString('utf8').split('\0');
    if (!environ.includes(`${RUN_VAR}=${run}`)) return undefined;
    return environ.find((e) => MARKERS.some((m) => e.startsWith(`${m}=`)));
  } catch {
    return undefined;
  }
}

export default function setup(): () => void {
  if (process.platform !== 'linux') return () => undefined;
  const run = randomUUID();
  process.env[RUN_VAR] = run;
  const before = new Set(listProcesses().map((p) => p.pid));
  return () => {
    const own = ownPaneId();
    const leaked = listProcesses()
      .filter((p) => !p.zombie && !before.has(p.pid))
      .map((p) => ({ pid: p.pid, marker: markerOf(p.pid, run) }))
      .filter((p) => p.marker !== undefined && p.marker !== `SWITCHBOARD_PANE_ID=${own ?? ''}`);
    if (leaked.length === 0) return;
    for (const { pid } of leaked) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone already
      }
    }
    // Reaching here means a test left pane processes behind: fail the run loudly (vitest reports a
    // teardown error but keeps its exit code, so set it here).
    process.exitCode = 1;
    throw new Error(`tests leaked processes: ${leaked.map((p) => `${p.pid} (${p.marker ?? '?'})`).join(', ')}`);
  };
}

