/**
 * Small launchers that run a Node script under a command name, for a folder on PATH: a POSIX
 * shell script `NAME` (mode 0755), or `NAME.cmd` on Windows, each running this Node with the
 * script and the caller's arguments.
 */
import { chmodSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const isWindows = process.platform === 'win32';

const shQuote = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

/** Writes one launcher per name into `dir` (which must exist) and returns the files written. */
export function writeNodeLaunchers(dir: string, scripts: Readonly<Record<string, string>>, note: string): string[] {
  const files: string[] = [];
  for (const [name, script] of Object.entries(scripts)) {
    if (isWindows) {
      const file = path.join(dir, `${name}.cmd`);
      writeFileSync(file, `@echo off\r\nrem ${note}\r\n"${process.execPath}" "${script}" %*\r\n`);
      files.push(file);
      continue;
    }
    const file = path.join(dir, name);
    writeFileSync(file, `#!/bin/sh\n# ${note}\nexec ${shQuote(process.execPath)} ${shQuote(script)} "$@"\n`, { mode: 0o755 });
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
