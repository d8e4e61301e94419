/**
 * The agent processes a killed cluster node leaves behind, for the tests that kill one: a run's
 * CLI (or shell) leads a process group of its own, so killing the node's group does not reach it,
 * as a dead machine would. Found by the run service's marker in their environment and by their
 * working folder inside the test's own scratch folder, so nothing of another test is touched.
 */
import { readlinkSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { findProcessesWithEnv } from '../../src/platform/index.js';
import { BRIDGE_MARKER_VARIABLE } from '../../src/runs/process-marker.js';

/** Ends, by pid (SIGKILL), every run process working somewhere under `folder`. */
export function endRunProcessesIn(folder: string): void {
  let root: string;
  try {
    // /proc shows the real path: the folder's own, with a separator, so a sibling folder never matches.
    root = realpathSync(folder) + path.sep;
  } catch {
    return;
  }
  for (const { pid } of findProcessesWithEnv(BRIDGE_MARKER_VARIABLE)) {
    let cwd: string;
    try {
      cwd = readlinkSync(`/proc/${pid}/cwd`);
    } catch {
      continue;
    }
    if (!(cwd + path.sep).startsWith(root)) continue;
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Gone meanwhile.
    }
  }
}
