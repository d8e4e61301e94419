/**
 * What a daemon that died (SIGKILL, a crash, a power cut of its terminal) leaves behind, found and
 * ended by the next daemon of the same home. Every pane's processes carry the daemon's marker
 * (`SWITCHBOARD_DAEMON=<home id>:<pid>:<start time>`); a marker whose daemon is no longer running
 * names an orphan. Adopting them is not possible: a pane's terminal is its PTY master, which died
 * with the daemon's process (nothing else holds it, since masters are close-on-exec), so nobody can
 * read or type into those programs again. They are ended instead: HUP and TERM, then KILL.
 */
import { createHash } from 'node:crypto';
import { lstatSync, readdirSync, rmdirSync, rmSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import type { Logger } from '../core/logger.js';
import { PANE_MARKER_VARIABLE } from '../pane/index.js';
import { findProcessesWithEnv, isFilesystemSocket, isProcessRunning, terminateProcessTree } from '../platform/index.js';
import { removeRuntimeFile, type RuntimeInfo } from './runtime-file.js';

/** Set in every pane's environment: which daemon (home, pid, start time) started it. */
export const DAEMON_MARKER_VARIABLE = 'SWITCHBOARD_DAEMON';
/** How long an orphan gets to end on HUP/TERM before KILL: nobody is waiting on it any more. */
const ORPHAN_GRACE_MS = 1_000;

/** What a start found of a daemon that died, and what it did about it. */
export interface RecoveryReport {
  /** The dead daemons' pids (from the runtime file and the markers). */
  daemon_pids: number[];
  /** Panes whose processes were still running. */
  panes: number;
  /** Processes ended. */
  processes: number;
  /** Processes that survived SIGKILL (should be none). */
  survivors: number[];
  /** The stale runtime file was removed. */
  runtime_file_removed: boolean;
  /** The stale socket was removed. */
  socket_removed: boolean;
  /** Agents' private temporary folders removed: their owner (a daemon or a library host) died with them. */
  temp_folders: number;
}

/** A short, stable id of a home, so daemons of other homes (other users' tests, say) are never touched. */
export function homeId(home: string): string {
  return createHash('sha256').update(path.resolve(home)).digest('hex').slice(0, 16);
}

/** This daemon's marker value. */
export function daemonMarkerValue(home: string, identity: { pid: number; startTime: number }): string {
  return `${homeId(home)}:${identity.pid}:${identity.startTime}`;
}

function parseMarker(value: string): { home: string; pid: number; startTime: number } | undefined {
  const match = /^([0-9a-f]{16}):(\d+):(\d+)$/.exec(value);
  if (!match) return undefined;
  return { home: match[1] as string, pid: Number(match[2]), startTime: Number(match[3]) };
}

/**
 * Ends the panes of this home's daemons that are no longer running, and removes a stale runtime
 * file and socket (`stale`: the runtime file as found, its daemon known not to answer). Resolves
 * with what it found, or undefined when there was nothing.
 */
export async function recoverFromDeadDaemon(home: string, stale: RuntimeInfo | undefined, logger: Logger): Promise<RecoveryReport | undefined> {
  const id = homeId(home);
  const daemons = new Map<string, number>();
  const marked = findProcessesWithEnv(DAEMON_MARKER_VARIABLE);
  for (const { value } of marked) {
    const marker = parseMarker(value);
    if (!marker || marker.home !== id || marker.pid === process.pid) continue;
    if (!isProcessRunning(marker.pid, marker.startTime)) daemons.set(value, marker.pid);
  }
  const orphanPids = new Set(marked.filter((m) => daemons.has(m.value)).map((m) => m.pid));
  const paneIds = new Set(findProcessesWithEnv(PANE_MARKER_VARIABLE).filter((p) => orphanPids.has(p.pid)).map((p) => p.value));
  const results = await Promise.all([...daemons.keys()].map((value) => terminateProcessTree(0, { graceMs: ORPHAN_GRACE_MS, marker: { name: DAEMON_MARKER_VARIABLE, value }, rootExited: true })));
  const staleDead = stale !== undefined && stale.pid !== process.pid && !isProcessRunning(stale.pid);
  const socketRemoved = staleDead && stale.socket !== undefined ? await removeStaleSocket(stale.socket, home) : false;
  if (staleDead) removeRuntimeFile(home, stale.pid);
  if (daemons.size === 0 && !staleDead) return undefined;
  const report: RecoveryReport = {
    daemon_pids: [...new Set([...daemons.values(), ...(staleDead ? [stale.pid] : [])])],
    panes: paneIds.size,
    processes: orphanPids.size,
    survivors: results.flatMap((r) => r.survivors),
    runtime_file_removed: staleDead,
    socket_removed: socketRemoved,
    // Swept once every orphan is gone, the bridge's too (the daemon adds the count).
    temp_folders: 0,
  };
  logger.info('found what a daemon that died left behind, and ended it', { ...report });
  return report;
}

/** Removes a socket no daemon answers on (never anything but a socket), and its private temp folder when it was one. */
async function removeStaleSocket(socketPath: string, home: string): Promise<boolean> {
  if (!isFilesystemSocket(socketPath)) return false;
  try {
    if (!lstatSync(socketPath).isSocket()) return false;
  } catch {
    return false;
  }
  if (await answers(socketPath)) return false;
  rmSync(socketPath, { force: true });
  const dir = path.dirname(socketPath);
  if (dir !== path.resolve(home)) {
    try {
      if (readdirSync(dir).length === 0) rmdirSync(dir);
    } catch {
      // someone else's folder, or not empty: left alone
    }
  }
  return true;
}

function answers(socketPath: string): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = net.connect(socketPath);
    probe.setTimeout(1_000, () => {
      probe.destroy();
      resolve(false);
    });
    probe.once('connect', () => {
      probe.destroy();
      resolve(true);
    });
    probe.once('error', () => resolve(false));
  });
}
