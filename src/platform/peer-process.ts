/**
 * Which process is at the other end of a connection to the daemon, and what that process is: its
 * ancestors and its environment. The daemon judges a caller by where it runs as well as by the
 * token it shows, since a program in an agent pane can find the owner's token (the runtime file,
 * another process's environment) but cannot change which pane it was started in.
 *
 * A local socket says who connected (SO_PEERCRED, through the native helper). Loopback TCP does
 * not: on Linux the connection's client end is found in /proc/net/tcp by its ports, and the process
 * holding that socket among every process's descriptors. Elsewhere nothing is known (undefined),
 * and the token alone decides, as before.
 */
import { readFile, readdir, readlink } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import type net from 'node:net';
import { localSocketPeerPid } from './descriptors.js';
import { readProcStat } from './processes.js';

const isLinux = process.platform === 'linux';

/** Node's handle of a socket: its descriptor is not public API, so it is checked before use. */
function descriptorOf(socket: net.Socket): number | undefined {
  const fd = (socket as unknown as { _handle?: { fd?: unknown } })._handle?.fd;
  return typeof fd === 'number' && fd >= 0 ? fd : undefined;
}

/** The port of a /proc/net/tcp address (`0100007F:1F90`: hex address, hex port). */
function portOf(address: string): number {
  return Number.parseInt(address.slice(address.lastIndexOf(':') + 1), 16);
}

/** The inode of the client end of a loopback TCP connection whose server end is `socket`. */
async function clientSocketInode(socket: net.Socket): Promise<string | undefined> {
  const clientPort = socket.remotePort;
  const serverPort = socket.localPort;
  if (clientPort === undefined || serverPort === undefined) return undefined;
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = await readFile(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      const [, local, remote] = fields;
      const inode = fields[9];
      if (local === undefined || remote === undefined || inode === undefined) continue;
      if (portOf(local) === clientPort && portOf(remote) === serverPort) return inode === '0' ? undefined : inode;
    }
  }
  return undefined;
}

/** The process among `pids` (other than this one) that holds the socket with `inode` open. */
async function processHoldingSocket(inode: string, pids: Iterable<number>): Promise<number | undefined> {
  const wanted = `socket:[${inode}]`;
  for (const pid of pids) {
    if (pid === process.pid) continue;
    const entry = String(pid);
    let fds: string[];
    try {
      fds = await readdir(`/proc/${entry}/fd`);
    } catch {
      continue; // gone, or another user's
    }
    for (const fd of fds) {
      const target = await readlink(`/proc/${entry}/fd/${fd}`).catch(() => undefined);
      if (target === wanted) return Number(entry);
    }
  }
  return undefined;
}

/**
 * Who is at the other end of a connection: its process (`pid`); `outside` (a loopback TCP client
 * that is none of the candidates); `gone` (the OS says there was a peer, but it has exited or let go
 * of the connection, so nothing can be checked); `unknown` (this OS, or a missing native helper,
 * does not say).
 */
export type ConnectionPeer = { pid: number } | 'outside' | 'gone' | 'unknown';

/** True while `pid` is a process this one can see (Linux). */
function processVisible(pid: number): boolean {
  return readProcStat(pid) !== undefined;
}

/**
 * Who is at the other end of `socket` (accepted by this process): a local socket's connecting
 * process, whoever it is; a loopback TCP client's process (Linux), looked for among `candidates`
 * only (finding a socket's owner means reading every descriptor of every process searched, so the
 * caller names the processes that matter).
 */
export async function connectionPeer(socket: net.Socket, candidates: () => Iterable<number>): Promise<ConnectionPeer> {
  if (socket.remoteAddress === undefined) {
    const fd = descriptorOf(socket);
    const pid = fd === undefined ? undefined : localSocketPeerPid(fd);
    if (pid === undefined) return 'unknown';
    return !isLinux || processVisible(pid) ? { pid } : 'gone';
  }
  if (!isLinux) return 'unknown';
  const inode = await clientSocketInode(socket);
  // The client's end is closed (inode 0, or no longer listed): whoever it was cannot be checked.
  if (inode === undefined) return 'gone';
  const pid = await processHoldingSocket(inode, candidates());
  return pid === undefined ? 'outside' : { pid };
}

/** The parent of `pid` (Linux), or undefined when it is gone or unknown. */
function parentOf(pid: number): number | undefined {
  const ppid = readProcStat(pid)?.ppid;
  return ppid !== undefined && ppid > 0 ? ppid : undefined;
}

/** `pid` and its ancestors up to the first process (Linux; just `pid` elsewhere). */
export function processLineage(pid: number): number[] {
  const lineage = [pid];
  if (!isLinux) return lineage;
  let current: number | undefined = pid;
  // A bound, not a depth any real tree reaches: a pid reused into a loop cannot hold this up.
  while (lineage.length < 256 && (current = parentOf(current)) !== undefined && !lineage.includes(current)) lineage.push(current);
  return lineage;
}

/** The value of variable `name` in the environment `pid` started with (Linux), or undefined. */
export function processEnvValue(pid: number, name: string): string | undefined {
  if (!isLinux) return undefined;
  let environ: Buffer;
  try {
    environ = readFileSync(`/proc/${pid}/environ`);
  } catch {
    return undefined;
  }
  const prefix = `${name}=`;
  for (const entry of environ.toString('utf8').split('\0')) if (entry.startsWith(prefix)) return entry.slice(prefix.length);
  return undefined;
}
