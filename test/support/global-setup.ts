import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { isProcessRunning, listProcesses } from '../../src/platform/index.js';
import { useRunTempFolder } from './run-temp.js';

/**
 * After the whole run, no process started by a test pane or driver may still be running. Every pane
 * process carries SWITCHBOARD_PANE_ID, every headless run SWITCHBOARD_RUN_ID and every multi-turn
 * driver session SWITCHBOARD_SESSION_ID. Only this run's are looked at: the run sets
 * SWITCHBOARD_TEST_RUN to a value of its own, which its workers, their daemons and every process
 * they start inherit (cleanEnv keeps it), so a user's real panes and another run's are never
 * touched, let alone killed.
 */
const MARKERS = ['SWITCHBOARD_PANE_ID', 'SWITCHBOARD_RUN_ID', 'SWITCHBOARD_SESSION_ID'];
export const RUN_MARKER = 'SWITCHBOARD_TEST_RUN';

/** The process's environment as NAME=value entries, or [] when it cannot be read. */
function environOf(pid: number): string[] {
  try {
    return readFileSync(`/proc/${pid}/environ`).toString('utf8').split('\0');
  } catch {
    return [];
  }
}

/** Running processes of run `run` that a pane or driver started (not counting those in `ignore`), with their marker. */
export function processesOfRun(run: string, ignore: ReadonlySet<number> = new Set()): { pid: number; marker: string }[] {
  const ours = `${RUN_MARKER}=${run}`;
  return listProcesses()
    .filter((p) => !p.zombie && !ignore.has(p.pid))
    .map((p) => ({ pid: p.pid, environ: environOf(p.pid) }))
    .filter((p) => p.environ.includes(ours))
    .flatMap((p) => {
      const marker = p.environ.find((e) => MARKERS.some((m) => e.startsWith(`${m}=`)));
      return marker === undefined ? [] : [{ pid: p.pid, marker }];
    });
}

export default function setup(): () => Promise<void> {
  const temp = useRunTempFolder();
  // Process markers are read from /proc: the leak check is Linux's; the leftover check is everyone's.
  const linux = process.platform === 'linux';
  const run = randomBytes(8).toString('hex');
  // Set before vitest forks its workers, which inherit it.
  process.env[RUN_MARKER] = run;
  // Tests start the user's own interactive shells and end them at any moment. A ~/.bashrc running
  // `pyenv init` (this machine's, and CI's) takes pyenv's rehash lock at every start; a shell ended
  // while holding it leaves the lock, and every later shell then waits 60 s for it before its first
  // prompt (two CI-style runs lost shell-pane tests to that). One second is enough to give up on a
  // stale lock; a user's own setting is kept.
  process.env.PYENV_REHASH_TIMEOUT ??= '1';
  const before = new Set(linux ? listProcesses().map((p) => p.pid) : []);
  return async () => {
    const problems: string[] = [];
    const leaked = linux ? processesOfRun(run, before) : [];
    for (const { pid } of leaked) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone already
      }
    }
    if (leaked.length > 0) problems.push(`tests leaked processes: ${leaked.map((p) => `${p.pid} (${p.marker})`).join(', ')}`);
    // The folder is looked at once the leaked processes are gone, so none of them still writes there.
    for (let i = 0; i < 200 && leaked.some((p) => isProcessRunning(p.pid)); i++) await new Promise((r) => setTimeout(r, 25));
    const left = temp.leftovers();
    if (left.length > 0) problems.push(`tests left files in the run's temporary folder ${temp.dir}: ${left.slice(0, 40).join(', ')}${left.length > 40 ? `, … (${left.length} in all)` : ''}`);
    temp.remove();
    if (problems.length === 0) return;
    // Vitest reports a teardown error but keeps its exit code, so set it here.
    process.exitCode = 1;
    throw new Error(problems.join('\n'));
  };
}
