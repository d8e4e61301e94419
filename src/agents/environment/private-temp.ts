/**
 * A private temporary folder for each agent process Switchboard starts. The CLIs leave things in
 * their temporary folder and never remove them: OpenCode unpacks two native libraries (13.7 MB and
 * 5.5 MB) on every start, Claude Code keeps a folder per working folder and its sockets there, Codex
 * and Gemini CLI their own. Pointed at a folder of its own under the Switchboard home, an agent
 * leaves them where Switchboard removes them: when the process ends, or, when the Switchboard
 * process that started it died first, at the next daemon start (or the first folder another
 * Switchboard process makes under the same home).
 *
 * A folder is named for the Switchboard process that made it (`<pid>-<random>`), so a sweep can tell
 * a folder whose owner is gone from one still in use; a folder some running process still has as
 * its TMPDIR is kept too (an agent that outlived its owner). A later process given the same pid
 * only keeps a dead owner's folder until another sweep: never the other way round.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { errorMessage, SwitchboardError } from '../../core/errors.js';
import { agentTempRoot, ensurePrivateDir, findProcessesWithEnv, isProcessRunning, tempFolderEnv } from '../../platform/index.js';

const FOLDER_NAME = /^(\d+)-[A-Za-z0-9]{6}$/;
/** One agent process's temporary folder. */
export interface PrivateTemp {
  readonly dir: string;
  /** The variables that point a program at it (TMPDIR, TMP, TEMP). */
  readonly env: Record<string, string>;
  /** Removes the folder and what it holds; more calls do nothing. What cannot be removed now (a file in use on Windows) is tried again at the next folder made. */
  release(): void;
  /** Runs `make`; if it throws (a process that could not be started), the folder is released first. */
  guard<T>(make: () => T): T;
}

/** Roots this process has swept already: once per process is enough, its own folders are never stale. */
const swept = new Set<string>();
/** Folders whose removal failed (files still in use), tried again whenever a folder is made. */
const unremoved = new Set<string>();

/** A new private temporary folder (0700) under `root`, after sweeping the root once per process. Throws SPAWN_FAILED when it cannot be made. */
export function createPrivateTemp(root: string = agentTempRoot()): PrivateTemp {
  for (const dir of unremoved) if (removeQuietly(dir)) unremoved.delete(dir);
  let dir: string;
  try {
    ensurePrivateDir(root);
    if (!swept.has(root)) sweepPrivateTemps(root);
    dir = mkdtempSync(path.join(root, `${process.pid}-`));
  } catch (err) {
    throw new SwitchboardError('SPAWN_FAILED', `cannot make the agent's temporary folder in ${root}: ${errorMessage(err)}`, { root });
  }
  let released = false;
  const release = (): void => {
    if (released) return;
    released = true;
    if (!removeQuietly(dir)) unremoved.add(dir);
  };
  return {
    dir,
    env: tempFolderEnv(dir),
    release,
    guard: (make) => {
      try {
        return make();
      } catch (err) {
        release();
        throw err;
      }
    },
  };
}

/**
 * Removes the folders under `root` whose owner is no longer running (a daemon or a library host
 * that died with its agents) and that no running process has as its temporary folder, and returns
 * their names. Anything else there is left alone.
 */
export function sweepPrivateTemps(root: string): string[] {
  swept.add(root);
  let names: string[];
  try {
    names = readdirSync(root);
  } catch {
    return [];
  }
  const stale = names.filter((name) => {
    const owner = FOLDER_NAME.exec(name)?.[1];
    if (owner === undefined) return false;
    const pid = Number(owner);
    return pid !== process.pid && !isProcessRunning(pid);
  });
  if (stale.length === 0) return [];
  const inUse = new Set(findProcessesWithEnv('TMPDIR').map((p) => p.value));
  return stale.filter((name) => !inUse.has(path.join(root, name)) && removeQuietly(path.join(root, name)));
}

function removeQuietly(dir: string): boolean {
  try {
    rmSync(dir, { recursive: true, force: true, maxRetries: 2 });
    return true;
  } catch {
    return false;
  }
}
