import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';

/** One process as seen by the OS: its id, parent, process group and session. */
export interface ProcessInfo {
  pid: number;
  ppid: number;
  pgid: number;
  sid: number;
  zombie: boolean;
  /** When the process started (clock ticks since boot, Linux): with the pid, identifies it across pid reuse. */
  startTime: number;
}

const platform = process.platform;

function parseProcStat(text: string): ProcessInfo | undefined {
  // Format: pid (comm) state ppid pgrp session …; comm may contain spaces and parentheses.
  const close = text.lastIndexOf(')');
  if (close === -1) return undefined;
  const pid = Number.parseInt(text.slice(0, text.indexOf(' ')), 10);
  const fields = text.slice(close + 2).split(' ');
  const [state, ppid, pgid, sid] = fields;
  if (state === undefined || ppid === undefined || pgid === undefined || sid === undefined) return undefined;
  // Field 22 of stat is the start time; fields[0] here is field 3.
  const startTime = Number(fields[19] ?? 0);
  return { pid, ppid: Number(ppid), pgid: Number(pgid), sid: Number(sid), zombie: state === 'Z' || state === 'X', startTime };
}

/** One process's /proc/PID/stat (Linux), or undefined when it is gone or unreadable. */
export function readProcStat(pid: number): ProcessInfo | undefined {
  try {
    return parseProcStat(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return undefined;
  }
}

/** Every process on the machine (Linux: /proc; other POSIX systems: ps). Empty on Windows. */
export function listProcesses(): ProcessInfo[] {
  if (platform === 'win32') return [];
  if (platform === 'linux') {
    const out: ProcessInfo[] = [];
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      const info = readProcStat(Number(entry));
      if (info) out.push(info);
    }
    return out;
  }
  const text = execFileSync('ps', ['-A', '-o', 'pid=,ppid=,pgid=,stat='], { encoding: 'utf8' });
  return text
    .split('\n')
    .map((line) => line.trim().split(/\s+/))
    .filter((cols) => cols.length >= 4)
    .map(([pid, ppid, pgid, stat]) => ({
      pid: Number(pid),
      ppid: Number(ppid),
      pgid: Number(pgid),
      // ps has no portable session column; the process group stands in for it.
      sid: Number(pgid),
      zombie: (stat ?? '').startsWith('Z'),
      startTime: 0,
    }));
}

/**
 * True while `pid` exists and is not a zombie waiting to be reaped. With `startTime` (Linux), only
 * if it is still the same process, not a new one that was given a recycled pid.
 */
export function isProcessRunning(pid: number, startTime?: number): boolean {
  if (platform === 'linux') {
    const info = readProcStat(pid);
    return info !== undefined && !info.zombie && (startTime === undefined || startTime === 0 || info.startTime === startTime);
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * The processes that belong to a pane whose first process is `rootPid`: its session (node-pty makes
 * it a session leader, and shells put jobs in their own process groups inside that session), its
 * process group, and every descendant, even one that started a session of its own.
 */
export function collectProcessTree(rootPid: number, processes = listProcesses()): number[] {
  const members = new Set<number>([rootPid]);
  for (const p of processes) {
    if (p.zombie) continue;
    if (p.sid === rootPid || p.pgid === rootPid) members.add(p.pid);
  }
  const children = new Map<number, number[]>();
  for (const p of processes) {
    const list = children.get(p.ppid);
    if (list) list.push(p.pid);
    else children.set(p.ppid, [p.pid]);
  }
  const queue = [...members];
  while (queue.length > 0) {
    const pid = queue.pop();
    if (pid === undefined) break;
    for (const child of children.get(pid) ?? []) {
      if (!members.has(child)) {
        members.add(child);
        queue.push(child);
      }
    }
  }
  members.delete(process.pid);
  return [...members];
}

/** Calls `visit` with each other process's environment block (Linux: /proc; unreadable ones skipped). */
function forEachEnviron(visit: (pid: number, environ: Buffer) => void): void {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    if (pid === process.pid) continue;
    let environ: Buffer;
    try {
      environ = readFileSync(`/proc/${entry}/environ`);
    } catch {
      continue; // gone, or another user's process
    }
    visit(pid, environ);
  }
}

/** Where `needle` (`NAME=`, or `NAME=value\0`) starts a variable in `environ`, or -1. */
function variableAt(environ: Buffer, needle: Buffer): number {
  let at = environ.indexOf(needle);
  while (at !== -1) {
    if (at === 0 || environ[at - 1] === 0) return at;
    at = environ.indexOf(needle, at + 1);
  }
  return -1;
}

/**
 * Processes (other than this one) whose environment holds `name=value`. Every process a pane starts
 * inherits the pane's marker variable, so this finds descendants that left the pane's session and
 * process tree (double fork + setsid, as daemons do). Linux only; elsewhere it finds nothing.
 */
export function findProcessesByEnv(name: string, value: string): number[] {
  if (platform !== 'linux') return [];
  const needle = Buffer.from(`${name}=${value}\0`);
  const found: number[] = [];
  forEachEnviron((pid, environ) => {
    if (variableAt(environ, needle) !== -1) found.push(pid);
  });
  return found;
}

/**
 * Processes (other than this one) whose environment sets `name`, with the value each has, so a
 * daemon can find what a daemon before it started (the marker names that daemon). Linux only;
 * elsewhere it finds nothing.
 */
export function findProcessesWithEnv(name: string): { pid: number; value: string }[] {
  if (platform !== 'linux') return [];
  const needle = Buffer.from(`${name}=`);
  const found: { pid: number; value: string }[] = [];
  forEachEnviron((pid, environ) => {
    const at = variableAt(environ, needle);
    if (at === -1) return;
    const end = environ.indexOf(0, at);
    found.push({ pid, value: environ.subarray(at + needle.length, end === -1 ? environ.length : end).toString('utf8') });
  });
  return found;
}

/** This process (or `pid`) with its start time, which tells it apart from a later one given the same pid (0 where unknown). */
export function processIdentity(pid = process.pid): { pid: number; startTime: number } {
  return { pid, startTime: platform === 'linux' ? (readProcStat(pid)?.startTime ?? 0) : 0 };
}

/** Sends SIGKILL to every process carrying `marker`, at once, without waiting (a last resort). */
export function killMarkedNow(marker: EnvMarker): void {
  sendSignal(findProcessesByEnv(marker.name, marker.value), 'SIGKILL');
}

function sendSignal(pids: Iterable<number>, signal: NodeJS.Signals): void {
  for (const pid of pids) {
    try {
      process.kill(pid, signal);
    } catch {
      // Already gone, or not ours to signal: either way nothing more to do for it.
    }
  }
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** A process to end, pinned to its identity so a recycled pid is never signalled. */
interface Target {
  pid: number;
  startTime: number;
}

const stillRunning = (t: Target): boolean => isProcessRunning(t.pid, t.startTime);

async function waitUntilGone(targets: Target[], timeoutMs: number): Promise<Target[]> {
  const deadline = Date.now() + timeoutMs;
  let alive = targets.filter(stillRunning);
  while (alive.length > 0 && Date.now() < deadline) {
    await sleep(Math.min(25, Math.max(1, deadline - Date.now())));
    alive = alive.filter(stillRunning);
  }
  return alive;
}

function signalTargets(targets: Target[], signal: NodeJS.Signals): void {
  // Checked right before each signal: the window for a recycled pid is as small as it can be.
  sendSignal(targets.filter(stillRunning).map((t) => t.pid), signal);
}

/** What happened when a process tree was terminated. */
export interface TerminateResult {
  /** True when some process ignored the polite signal and had to be killed. */
  forced: boolean;
  /** Processes still running after the forced kill (should be empty). */
  survivors: number[];
}

/** An environment variable every process of a pane carries (see findProcessesByEnv). */
export interface EnvMarker {
  name: string;
  value: string;
}

/**
 * Ends a pane's whole process tree: `signal` to every member (by default HUP then TERM: a hangup is
 * what a closing terminal sends, and interactive shells ignore TERM), then KILL to the ones still
 * running after `graceMs`. With `marker`, processes that escaped the tree but carry the pane's
 * marker variable are ended too. With `rootExited`, the root pid is gone (and may have been reused),
 * so only the marker is trusted. On Windows, taskkill ends the tree at once.
 */
export async function terminateProcessTree(
  rootPid: number,
  options: { graceMs: number; signal?: NodeJS.Signals; marker?: EnvMarker; rootExited?: boolean },
): Promise<TerminateResult> {
  if (platform === 'win32') {
    // Windows has no signals to be polite with: taskkill ends the tree (without blocking the daemon).
    if (!options.rootExited) {
      await new Promise<void>((resolve) => execFile('taskkill', ['/PID', String(rootPid), '/T', '/F'], { windowsHide: true }, () => resolve()));
    }
    return { forced: true, survivors: [] };
  }
  // Start times exist on Linux only; elsewhere 0 stands for "unknown" and the pid alone is trusted.
  const rootStart = options.rootExited ? undefined : platform === 'linux' ? readProcStat(rootPid)?.startTime : 0;
  const collect = (): Target[] => {
    const processes = listProcesses();
    const byPid = new Map(processes.map((p) => [p.pid, p]));
    // The root's tree only while the root is still the process we started (not a recycled pid).
    const rootNow = rootStart === undefined ? undefined : byPid.get(rootPid);
    const members = rootNow && (rootStart === 0 || rootNow.startTime === rootStart) ? collectProcessTree(rootPid, processes) : [];
    const marked = options.marker ? findProcessesByEnv(options.marker.name, options.marker.value) : [];
    return [...new Set([...members, ...marked])].flatMap((pid) => {
      const info = byPid.get(pid);
      return info && !info.zombie ? [{ pid, startTime: info.startTime }] : [];
    });
  };
  const targets = collect();
  if (targets.length === 0) return { forced: false, survivors: [] };
  if (options.signal) signalTargets(targets, options.signal);
  else {
    signalTargets(targets, 'SIGHUP');
    signalTargets(targets, 'SIGTERM');
  }
  const seen = new Set(targets.map(targetKey));
  let toKill = await waitUntilGone(targets, options.graceMs);
  // Take a fresh look even when every target went: a process may have forked while it was shutting
  // down (a trap on TERM that starts a child, a CLI started a moment ago still spawning its tools);
  // its parent gone, only the marker still finds it. A few rounds, for one that forks again meanwhile.
  const killed: Target[] = [];
  for (let round = 0; round < NEWCOMER_ROUNDS; round++) {
    const newcomers = collect().filter((t) => !seen.has(targetKey(t)));
    for (const t of newcomers) seen.add(targetKey(t));
    toKill = [...toKill, ...newcomers];
    if (toKill.length === 0) break;
    signalTargets(toKill, 'SIGKILL');
    killed.push(...toKill);
    toKill = [];
  }
  if (killed.length === 0) return { forced: false, survivors: [] };
  const survivors = await waitUntilGone(killed, 2_000);
  return { forced: true, survivors: survivors.map((t) => t.pid) };
}

/** Looks for processes started while a tree was ending, each round killing what the last one found. */
const NEWCOMER_ROUNDS = 3;

const targetKey = (t: Target): string => `${t.pid}:${t.startTime}`;

/** Kills a pane's process group at once, without waiting (a last resort when releasing a pane). */
export function killProcessGroupNow(rootPid: number): void {
  if (platform === 'win32') {
    spawnSync('taskkill', ['/PID', String(rootPid), '/T', '/F'], { windowsHide: true, stdio: 'ignore' });
    return;
  }
  try {
    process.kill(-rootPid, 'SIGKILL');
  } catch {
    // already gone
  }
}

/** Sends `signal` to the pane's process tree without waiting (for signals other than termination). */
export function signalProcessTree(rootPid: number, signal: NodeJS.Signals): void {
  if (platform === 'win32') {
    sendSignal([rootPid], signal);
    return;
  }
  sendSignal(collectProcessTree(rootPid), signal);
}
