import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { SwitchboardError } from '../core/errors.js';
import { untrustedFileProblem, writePrivateFileAtomic } from '../platform/index.js';

/** What a running daemon publishes so clients on this machine can find and call it. */
export interface RuntimeInfo {
  version: string;
  pid: number;
  host?: string;
  port?: number;
  socket?: string;
  token: string;
  started_at: string;
}

export const RUNTIME_FILE_NAME = 'daemon.json';

/** The runtime file's path inside a Switchboard home. */
export function runtimeFilePath(home: string): string {
  return path.join(home, RUNTIME_FILE_NAME);
}

/** Writes the runtime file (mode 0600, atomically). */
export function writeRuntimeFile(home: string, info: RuntimeInfo): void {
  writePrivateFileAtomic(runtimeFilePath(home), `${JSON.stringify(info, null, 2)}\n`);
}

/** Reads the runtime file, or undefined when there is none or it is unreadable. */
export function readRuntimeFile(home: string): RuntimeInfo | undefined {
  let text: string;
  try {
    text = readFileSync(runtimeFilePath(home), 'utf8');
  } catch {
    return undefined;
  }
  try {
    const data = JSON.parse(text) as Partial<RuntimeInfo>;
    if (typeof data.token !== 'string' || typeof data.pid !== 'number') return undefined;
    return data as RuntimeInfo;
  } catch {
    return undefined;
  }
}

/**
 * Reads the runtime file as a client must: only if it can be trusted (a regular file of this user,
 * writable by no one else, in a folder no one else can write to), since whoever can write it can
 * point every client at a daemon of their own and collect the token it is given. Throws
 * CONNECTION_FAILED saying what is wrong; undefined when there is no file.
 */
export function readTrustedRuntimeFile(home: string): RuntimeInfo | undefined {
  const file = runtimeFilePath(home);
  const problem = untrustedFileProblem(file);
  if (problem !== undefined) {
    throw new SwitchboardError('CONNECTION_FAILED', `refusing to trust the runtime file: ${problem}; only the daemon writes it, with mode 0600 in a private folder (remove it and run \`switchboard up\`)`, { file });
  }
  return readRuntimeFile(home);
}

/** Removes the runtime file if it is still the one `pid` wrote. */
export function removeRuntimeFile(home: string, pid: number): void {
  const current = readRuntimeFile(home);
  if (current && current.pid !== pid) return;
  rmSync(runtimeFilePath(home), { force: true });
}
