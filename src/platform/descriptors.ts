/**
 * Close-on-exec for descriptors Node.js did not open itself. Everything libuv opens is
 * close-on-exec already; node-pty 1.1.0's PTY masters are not (microsoft/node-pty#657), and Node
 * offers no fcntl, so a small native helper (native/fd-flags.c, built at install like node-pty)
 * sets the flag. Windows has no inheritable descriptors of this kind: nothing to do there.
 */
import { readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

interface FdFlags {
  setCloseOnExec(fd: number): void;
  isCloseOnExec(fd: number): boolean;
  /** The pid at the other end of a connected local socket, -1 where the OS does not say. */
  peerPid?(fd: number): number;
}

const isWindows = process.platform === 'win32';

/** native/build/Release of this package, from src/platform (tsx) or dist/platform alike. */
const ADDON = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'native', 'build', 'Release', 'fd_flags.node');

let loaded: { addon: FdFlags } | { problem: string } | undefined;

function addon(): FdFlags | undefined {
  if (isWindows) return undefined;
  loaded ??= load();
  return 'addon' in loaded ? loaded.addon : undefined;
}

function load(): { addon: FdFlags } | { problem: string } {
  try {
    const module = createRequire(import.meta.url)(ADDON) as Partial<FdFlags>;
    if (typeof module.setCloseOnExec !== 'function' || typeof module.isCloseOnExec !== 'function') return { problem: `${ADDON} is not Switchboard's native helper; rebuild it with \`npm rebuild switchboard\`` };
    return { addon: module as FdFlags };
  } catch (err) {
    return { problem: `the native helper did not load (${(err as Error).message.split('\n')[0] ?? ''}); rebuild it with \`npm rebuild switchboard\` (needs a C compiler, make and python3, as node-pty does)` };
  }
}

/**
 * Why descriptors cannot be marked close-on-exec here, or undefined when they can (and on Windows,
 * where there is nothing to mark).
 */
export function closeOnExecProblem(): string | undefined {
  if (isWindows) return undefined;
  addon();
  return loaded && 'problem' in loaded ? loaded.problem : undefined;
}

/** Marks `fd` close-on-exec, so no program started later inherits it. False when the helper is missing. */
export function setCloseOnExec(fd: number): boolean {
  const native = addon();
  if (!native) return isWindows;
  native.setCloseOnExec(fd);
  return true;
}

/**
 * The process at the other end of a connected local (Unix) socket, as it was when it connected
 * (SO_PEERCRED); undefined where this cannot be told (no helper, an older helper, Windows).
 */
export function localSocketPeerPid(fd: number): number | undefined {
  const native = addon();
  if (native?.peerPid === undefined) return undefined;
  try {
    const pid = native.peerPid(fd);
    return pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** Where this process's open descriptors are listed (nowhere to look elsewhere). */
const DESCRIPTOR_LISTING: Partial<Record<NodeJS.Platform, string>> = { linux: '/proc/self/fd', darwin: '/dev/fd' };

/**
 * Marks every descriptor above 2 close-on-exec, so nothing this process inherited from whoever
 * started it (an open file, a socket, another program's pipe) reaches the programs it starts:
 * called once, at the very start of a daemon, before anything of its own is open. Node's own
 * descriptors are close-on-exec already; marking them again changes nothing. Resolves with how
 * many were marked, or the problem when the native helper is missing.
 */
export function closeInheritedDescriptors(): { marked: number } | { problem: string } {
  if (isWindows) return { marked: 0 };
  const native = addon();
  if (!native) return { problem: closeOnExecProblem() ?? 'the native helper did not load' };
  const listing = DESCRIPTOR_LISTING[process.platform];
  if (listing === undefined) return { marked: 0 };
  let marked = 0;
  for (const name of readdirSync(listing)) {
    const fd = Number(name);
    if (!Number.isInteger(fd) || fd <= 2) continue;
    try {
      if (native.isCloseOnExec(fd)) continue;
      native.setCloseOnExec(fd);
      marked++;
    } catch {
      // The listing's own descriptor, closed once it was read.
    }
  }
  return { marked };
}
