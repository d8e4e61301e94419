/**
 * Every process a run starts carries a marker naming the run service that started it
 * (`SWITCHBOARD_BRIDGE=<scope>:<pid>:<start time>`), the approach of the daemon's pane recovery
 * (src/daemon/recovery.ts). When a service starts, a marker of its own scope whose service is no
 * longer running names an orphan: a CLI left behind by a service that died (SIGKILL, a crash). It is
 * ended, HUP and TERM then KILL; it cannot be adopted, since its pipes died with the service.
 */
import { createHash } from 'node:crypto';
import { findProcessesWithEnv, isProcessRunning, processIdentity, terminateProcessTree } from '../platform/index.js';

export const BRIDGE_MARKER_VARIABLE = 'SWITCHBOARD_BRIDGE';
/** How long an orphan gets to end on HUP/TERM before KILL: nobody is waiting on it any more. */
const ORPHAN_GRACE_MS = 1_000;

/** A short, stable id for a scope (the ledger file), so services of other ledgers are never touched. */
export function markerScope(key: string): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 16);
}

/** This process's marker value in `scope`. */
export function bridgeMarkerValue(scope: string, identity = processIdentity()): string {
  return `${scope}:${identity.pid}:${identity.startTime}`;
}

/** Ends what services of `scope` that are no longer running left behind; resolves with the processes ended. */
export async function endOrphans(scope: string): Promise<{ processes: number; survivors: number[] }> {
  const dead = new Set<string>();
  let processes = 0;
  for (const { value } of findProcessesWithEnv(BRIDGE_MARKER_VARIABLE)) {
    const m = /^([0-9a-f]{16}):(\d+):(\d+)$/.exec(value);
    if (!m || m[1] !== scope || Number(m[2]) === process.pid) continue;
    if (!isProcessRunning(Number(m[2]), Number(m[3]))) {
      dead.add(value);
      processes++;
    }
  }
  const results = await Promise.all([...dead].map((value) => terminateProcessTree(0, { graceMs: ORPHAN_GRACE_MS, marker: { name: BRIDGE_MARKER_VARIABLE, value }, rootExited: true })));
  return { processes, survivors: results.flatMap((r) => r.survivors) };
}
