import { execFile } from 'node:child_process';
import { statSync } from 'node:fs';
import path from 'node:path';
import { resolveExecutable } from '../platform/index.js';
import type { ProfileData } from './schema.js';
import { parseVersion } from './version-range.js';

/**
 * Finds an agent's program: $<binary.env> when set, else each name on PATH, else in the extra
 * directories (SWITCHBOARD_AGENT_PATH, then Switchboard's own node_modules/.bin).
 */
export function findAgentBinary(data: ProfileData, env: NodeJS.ProcessEnv, extraDirs: readonly string[], cwd = process.cwd()): string | undefined {
  const fromEnv = data.binary.env ? env[data.binary.env] : undefined;
  if (fromEnv) return resolveExecutable(fromEnv, env, cwd);
  for (const name of data.binary.names) {
    const found = resolveExecutable(name, env, cwd);
    if (found) return found;
  }
  const searchPath = extraDirs.join(path.delimiter);
  for (const name of data.binary.names) {
    const found = resolveExecutable(name, { ...env, PATH: searchPath, Path: searchPath }, cwd);
    if (found) return found;
  }
  return undefined;
}

const versionCache = new Map<string, { mtimeMs: number; version: string | undefined }>();

/** The program's version from `<binary> --version` (cached per file and modification time). */
export function agentVersion(binary: string, env: NodeJS.ProcessEnv): Promise<string | undefined> {
  let mtimeMs = 0;
  try {
    mtimeMs = statSync(binary).mtimeMs;
  } catch {
    return Promise.resolve(undefined);
  }
  const cached = versionCache.get(binary);
  if (cached && cached.mtimeMs === mtimeMs) return Promise.resolve(cached.version);
  return new Promise((resolve) => {
    const child = execFile(binary, ['--version'], { env, timeout: 20_000, windowsHide: true }, (err, stdout, stderr) => {
      const version = err && !stdout ? undefined : parseVersion(`${stdout}\n${stderr}`);
      versionCache.set(binary, { mtimeMs, version });
      resolve(version);
    });
    child.stdin?.end();
  });
}
