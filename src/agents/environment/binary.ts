import { execFile } from 'node:child_process';
import { existsSync, readFileSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import { absolutePathEntries, execCommand, resolveExecutable } from '../../platform/index.js';
import type { ProfileData } from '../profiles/schema.js';
import { parseVersion } from '../profiles/version-range.js';
import { createPrivateTemp, type PrivateTemp } from './private-temp.js';

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

export interface VersionOptions {
  signal?: AbortSignal;
  /** The npm package the CLI comes in (the profile's `binary.npm_package`): its version is read from there when the program is that package's. */
  npmPackage?: string;
  /** Where the probe's private temporary folder is made (default: agentTempRoot()). */
  tempRoot?: string;
}

/**
 * The program's version: from the CLI's own npm package when the program is that package's declared
 * program (an npm install, global or local, reached through its link), else from `<binary> <args>`
 * (cached per file, arguments and modification time; a Windows .cmd shim, a version manager's shim
 * or a native install is asked). Reading the package costs a few file reads where asking costs a
 * start of the CLI: 1.5 s of CPU for Gemini CLI, which relaunches itself, and 0.7 s for OpenCode.
 * Never rejects.
 */
export function agentVersion(binary: string, args: readonly string[], env: NodeJS.ProcessEnv, options: VersionOptions = {}): Promise<string | undefined> {
  let mtimeMs = 0;
  try {
    mtimeMs = statSync(binary).mtimeMs;
  } catch {
    return Promise.resolve(undefined);
  }
  const packaged = options.npmPackage !== undefined ? npmPackageVersion(binary, options.npmPackage) : undefined;
  if (packaged !== undefined) return Promise.resolve(packaged);
  const key = `${binary}\0${args.join('\0')}`;
  const cached = versionCache.get(key);
  if (cached && cached.mtimeMs === mtimeMs) return Promise.resolve(cached.version);
  const { signal } = options;
  const command = execCommand(binary, args);
  // Asking starts the program: what it leaves in its temporary folder goes with the answer.
  let temp: PrivateTemp;
  try {
    temp = createPrivateTemp(options.tempRoot);
  } catch {
    // Never rejects: a version that cannot be asked is unknown, as one the program does not say.
    return Promise.resolve(undefined);
  }
  return new Promise<string | undefined>((resolve) => {
    try {
      const child = execFile(
        command.file,
        command.args,
        { env: { ...env, ...temp.env }, timeout: VERSION_TIMEOUT_MS, killSignal: 'SIGKILL', windowsHide: true, windowsVerbatimArguments: command.windowsVerbatimArguments, signal },
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
  }).finally(() => temp.release());
}

/** How far above the program the package.json that declares it may be (bin/x, dist/bin/x, …). */
/**
 * The version of a profile's program: agentVersion with the profile's own arguments and npm package;
 * undefined when the profile says the program has no way to tell it (`version_args: null`).
 */
export function profileVersion(data: Pick<ProfileData, 'version_args' | 'binary'>, binary: string, env: NodeJS.ProcessEnv, options: Omit<VersionOptions, 'npmPackage'> = {}): Promise<string | undefined> {
  if (!data.version_args) return Promise.resolve(undefined);
  return agentVersion(binary, data.version_args, env, { ...options, npmPackage: data.binary.npm_package });
}

const PACKAGE_SEARCH_DEPTH = 4;

/**
 * The version of npm package `name` when its `bin` names `binary` (links followed), or undefined:
 * the nearest package.json above the program decides, it must be that package, and it must declare
 * this very file as one of its programs, so neither a program that merely sits inside some project
 * nor a user's wrapper package of the same program name is given another package's version.
 */
export function npmPackageVersion(binary: string, name: string): string | undefined {
  let real: string;
  try {
    real = realpathSync(binary);
  } catch {
    return undefined;
  }
  let dir = path.dirname(real);
  for (let i = 0; i < PACKAGE_SEARCH_DEPTH; i++) {
    const file = path.join(dir, 'package.json');
    if (existsSync(file)) return declaredVersion(file, dir, real, name);
    const up = path.dirname(dir);
    if (up === dir) return undefined;
    dir = up;
  }
  return undefined;
}

function declaredVersion(file: string, dir: string, program: string, name: string): string | undefined {
  let pkg: { name?: unknown; version?: unknown; bin?: unknown };
  try {
    pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: unknown; version?: unknown; bin?: unknown };
  } catch {
    return undefined;
  }
  if (pkg.name !== name || typeof pkg.version !== 'string') return undefined;
  const bins = typeof pkg.bin === 'string' ? [pkg.bin] : typeof pkg.bin === 'object' && pkg.bin !== null ? Object.values(pkg.bin) : [];
  const declares = bins.some((bin) => typeof bin === 'string' && sameFile(path.resolve(dir, bin), program));
  return declares ? parseVersion(pkg.version) : undefined;
}

function sameFile(candidate: string, real: string): boolean {
  try {
    return realpathSync(candidate) === real;
  } catch {
    return false;
  }
}
