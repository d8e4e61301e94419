import { execFile } from 'node:child_process';
import { statSync } from 'node:fs';
import path from 'node:path';
import { absolutePathEntries, execCommand, resolveExecutable } from '../platform/index.js';
import type { ProfileData } from './schema.js';
import { parseVersion } from './version-range.js';

/**
 * Finds an agent's program: $<binary.env> when set (an absolute path), else each name on PATH,
 * else in the extra directories (SWITCHBOARD_AGENT_PATH, then Switchboard's own node_modules/.bin).
 * Relative PATH entries are skipped: `--agent claude` must not run a `claude` that the project
 * being worked on ships in its own folder.
 */
export function findAgentBinary(data: ProfileData, env: NodeJS.ProcessEnv, extraDirs: readonly string[]): string | undefined {
  const fromEnv = data.binary.env ? env[data.binary.env] : undefined;
  if (fromEnv && path.isAbsolute(fromEnv)) return resolveExecutable(fromEnv, env, path.dirname(fromEnv));
  const searchPath = [absolutePathEntries(env), ...extraDirs.filter((d) => path.isAbsolute(d))].filter(Boolean).join(path.delimiter);
  const lookupEnv = { ...env, PATH: searchPath, Path: searchPath };
  for (const name of data.binary.names) {
    // Names are bare program names; one with a separator is a path, and must be absolute.
    if (name.includes('/') || name.includes('\\')) {
      if (!path.isAbsolute(name)) continue;
      const found = resolveExecutable(name, env, path.dirname(name));
      if (found) return found;
      continue;
    }
    const found = resolveExecutable(name, lookupEnv, path.parse(process.cwd()).root);
    if (found) return found;
  }
  return undefined;
}

/**
 * Longest wait for a version; a program that ignores the arguments and starts its TUI is killed.
 * Generous: on a loaded 2-core machine OpenCode's 185 MB binary took over 10 s to print its version,
 * and an unknown version reads the screens with the wrong set.
 */
const VERSION_TIMEOUT_MS = 30_000;
const versionCache = new Map<string, { mtimeMs: number; version: string | undefined }>();

/** The program's version from `<binary> <args>` (cached per file, arguments and modification time). */
export function agentVersion(binary: string, args: readonly string[], env: NodeJS.ProcessEnv, signal?: AbortSignal): Promise<string | undefined> {
  let mtimeMs = 0;
  try {
    mtimeMs = statSync(binary).mtimeMs;
  } catch {
    return Promise.resolve(undefined);
  }
  const key = `${binary}\0${args.join('\0')}`;
  const cached = versionCache.get(key);
  if (cached && cached.mtimeMs === mtimeMs) return Promise.resolve(cached.version);
  const command = execCommand(binary, args);
  return new Promise((resolve) => {
    try {
      const child = execFile(
        command.file,
        command.args,
        { env, timeout: VERSION_TIMEOUT_MS, killSignal: 'SIGKILL', windowsHide: true, windowsVerbatimArguments: command.windowsVerbatimArguments, signal },
        (err, stdout, stderr) => {
          const version = err && !stdout ? undefined : parseVersion(`${stdout}\n${stderr}`);
          // Only an answer is kept: a cancelled or timed-out probe says nothing about the program,
          // and the next start asks again.
          if (version !== undefined && !signal?.aborted) versionCache.set(key, { mtimeMs, version });
          resolve(version);
        },
      );
      child.stdin?.end();
    } catch {
      // execFile throws at once for what it cannot start at all (e.g. a bad file name on Windows).
      resolve(undefined);
    }
  });
}
