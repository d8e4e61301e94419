import { readFileSync } from 'node:fs';
import { listProcesses } from '../../src/platform/index.js';

/**
 * After the whole run, no process started by a test pane may still be running. Every pane process
 * carries SWITCHBOARD_PANE_ID; processes from a pane that the test runner itself runs in (if any)
 * carry the runner's own id and are left alone.
 */
function ownPaneId(): string | undefined {
  return process.env.SWITCHBOARD_PANE_ID;
}

function paneIdOf(pid: number): string | undefined {
  try {
    const environ = readFileSync(`/proc/${pid}/environ`).toString('utf8');
    const entry = environ.split('\0').find((e) => e.startsWith('SWITCHBOARD_PANE_ID='));
    return entry?.slice('SWITCHBOARD_PANE_ID='.length);
  } catch {
    return undefined;
  }
}

export default function setup(): () => void {
  if (process.platform !== 'linux') return () => undefined;
  const before = new Set(listProcesses().map((p) => p.pid));
  return () => {
    const own = ownPaneId();
    const leaked = listProcesses()
      .filter((p) => !p.zombie && !before.has(p.pid))
      .map((p) => ({ pid: p.pid, pane: paneIdOf(p.pid) }))
      .filter((p) => p.pane !== undefined && p.pane !== own);
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
    throw new Error(`tests leaked pane processes: ${leaked.map((p) => `${p.pid} (pane ${p.pane ?? '?'})`).join(', ')}`);
  };
}

