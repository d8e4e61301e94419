/**
 * Close-on-exec for descriptors Node.js did not open itself. Everything libuv opens is
 * close-on-exec already; node-pty 1.1.0's PTY masters are not (microsoft/node-pty#657), and Node
 * offers no fcntl, so a small native helper (native/fd-flags.c, built at install like node-pty)
 * sets the flag. Windows has no inheritable descriptors of this kind: nothing to do there.
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

interface FdFlags {
  setCloseOnExec(fd: number): void;
  isCloseOnExec(fd: number): boolean;
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
    if (typeof module.setCloseOnExec !== 'function' || typeof module.isCloseOnExec !== 'function') return { problem: `${ADDON} is not Switchboard's native helper` };
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

/** Whether `fd` is close-on-exec; undefined when this cannot be told (no helper, Windows). */
export function isCloseOnExec(fd: number): boolean | undefined {
  return addon()?.isCloseOnExec(fd);
}
