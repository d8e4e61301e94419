import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { writePrivateFileAtomic } from '../platform/index.js';

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

/** Removes the runtime file if it is still the one `pid` wrote. */
export function removeRuntimeFile(home: string, pid: number): void {
  const current = readRuntimeFile(home);
  if (current && current.pid !== pid) return;
  rmSync(runtimeFilePath(home), { force: true });
}
