/**
 * A private temporary folder for each agent process Switchboard starts. The CLIs leave things in
 * their temporary folder and never remove them: OpenCode unpacks two native libraries (13.7 MB and
 * 5.5 MB) on every start, Claude Code keeps a folder per working folder and its sockets there, Codex
 * and Gemini CLI their own. Pointed at a folder of its own under the Switchboard home, an agent
 * leaves them where Switchboard removes them: when the process ends, or, when the Switchboard
 * process that started it died first, at the next daemon start (or the next folder made under the
 * same home by any Switchboard process).
 *
 * A folder is named for the Switchboard process that made it (`<pid>-<random>`), so a sweep can tell
 * a folder whose owner is gone from one still in use. A later process given the same pid only
 * keeps a dead owner's folder until another sweep: never the other way round.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { ensurePrivateDir, isProcessRunning, switchboardHome, tempFolderEnv } from '../platform/index.js';

/** The folder under a Switchboard home that holds the agents' temporary folders. */
export const AGENT_TEMP_FOLDER = 'tmp';

const FOLDER_NAME = /^(\d+)-[A-Za-z0-9]{6}$/;

/** Where the private temporary folders of agents started for `home` live (default: the user's Switchboard home). */
export function agentTempRoot(home: string = switchboardHome()): string {
  return path.join(home, AGENT_TEMP_FOLDER);
}

/** One agent process's temporary folder. */
export interface PrivateTemp {
  readonly dir: string;
  /** The variables that point a program at it (TMPDIR, TMP, TEMP). */
  readonly env: Record<string, string>;
  /** Removes the folder and what it holds; more calls do nothing. What cannot be removed now (a file in use on Windows) is left to a sweep. */
  release(): void;
}

/** Roots this process has swept already: once per process is enough, its own folders are never stale. */
const swept = new Set<string>();

/** A new private temporary folder (0700) under `root`, after sweeping the root once per process. */
export function createPrivateTemp(root: string = agentTempRoot()): PrivateTemp {
  ensurePrivateDir(root);
  if (!swept.has(root)) sweepPrivateTemps(root);
  const dir = mkdtempSync(path.join(root, `${process.pid}-`));
  let released = false;
  return {
    dir,
    env: tempFolderEnv(dir),
    release: () => {
      if (released) return;
      released = true;
      removeQuietly(dir);
    },
  };
}

/**
 * Removes the folders under `root` whose owner is no longer running (a daemon or a library host
 * that died with its agents), and returns their names. Anything else there is left alone.
 */
export function sweepPrivateTemps(root: string): string[] {
  swept.add(root);
  let names: string[];
  try {
    names = readdirSync(root);
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const name of names) {
    const owner = FOLDER_NAME.exec(name)?.[1];
    if (owner === undefined) continue;
    const pid = Number(owner);
    if (pid === process.pid || isProcessRunning(pid)) continue;
    if (removeQuietly(path.join(root, name))) removed.push(name);
  }
  return removed;
}

function removeQuietly(dir: string): boolean {
  try {
    rmSync(dir, { recursive: true, force: true, maxRetries: 2 });
    return true;
  } catch {
    return false;
  }
}
