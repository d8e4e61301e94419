/** The daemon's side of the discovery contract (protocol/discovery.ts): writing and removing its runtime file. */
import { rmSync } from 'node:fs';
import { writePrivateFileAtomic } from '../platform/index.js';
import { formatRuntimeInfo, readRuntimeFile, runtimeFilePath, type RuntimeInfo } from '../protocol/discovery.js';

export { readRuntimeFile, runtimeFilePath, type RuntimeInfo } from '../protocol/discovery.js';

/** Writes the runtime file (mode 0600, atomically). */
export function writeRuntimeFile(home: string, info: RuntimeInfo): void {
  writePrivateFileAtomic(runtimeFilePath(home), formatRuntimeInfo(info));
}

/** Removes the runtime file if it is still the one `pid` wrote. */
export function removeRuntimeFile(home: string, pid: number): void {
  const current = readRuntimeFile(home);
  if (current && current.pid !== pid) return;
  rmSync(runtimeFilePath(home), { force: true });
}
