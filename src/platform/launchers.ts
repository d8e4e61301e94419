/**
 * Small launchers that run a Node script under a command name, for a folder on PATH: a POSIX
 * shell script `NAME` (mode 0755), or `NAME.cmd` on Windows, each running this Node with the
 * script and the caller's arguments.
 */
import { chmodSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const isWindows = process.platform === 'win32';

const shQuote = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

/** What every launcher of one call sets before it runs its script. */
export interface LauncherOptions {
  /** Variables set for the script (the daemon's home, for instance). */
  env?: Readonly<Record<string, string>>;
  /** Node's own flags, before the script (POSIX launchers). */
  nodeArgs?: readonly string[];
}

/** Writes one launcher per name into `dir` (which must exist) and returns the files written. */
export function writeNodeLaunchers(dir: string, scripts: Readonly<Record<string, string>>, note: string, options: LauncherOptions = {}): string[] {
  const vars = Object.entries(options.env ?? {});
  const files: string[] = [];
  for (const [name, script] of Object.entries(scripts)) {
    if (isWindows) {
      const file = path.join(dir, `${name}.cmd`);
      const setLines = vars.map(([k, v]) => `set "${k}=${v}"\r\n`).join('');
      writeFileSync(file, `@echo off\r\nrem ${note}\r\nsetlocal\r\n${setLines}"${process.execPath}" "${script}" %*\r\n`);
      files.push(file);
      continue;
    }
    const file = path.join(dir, name);
    const assignments = vars.map(([k, v]) => `${k}=${shQuote(v)} `).join('');
    const node = [process.execPath, ...(options.nodeArgs ?? [])].map(shQuote).join(' ');
    writeFileSync(file, `#!/bin/sh\n# ${note}\n${assignments}exec ${node} ${shQuote(script)} "$@"\n`, { mode: 0o755 });
    chmodSync(file, 0o755);
    files.push(file);
  }
  return files;
}

/** `env`'s PATH with `dir` appended (programs of the same name earlier on PATH still win). */
export function pathWithAppended(env: NodeJS.ProcessEnv, dir: string): string {
  const key = isWindows ? (Object.keys(env).find((k) => k.toUpperCase() === 'PATH') ?? 'PATH') : 'PATH';
  const entries = (env[key] ?? '').split(path.delimiter).filter(Boolean);
  return [...entries.filter((e) => e !== dir), dir].join(path.delimiter);
}
