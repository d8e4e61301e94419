import { accessSync, constants, statSync } from 'node:fs';
import { userInfo } from 'node:os';
import path from 'node:path';

/** A program and its arguments, ready to spawn. */
export interface CommandLine {
  file: string;
  args: string[];
}

const isWindows = process.platform === 'win32';

function isExecutableFile(file: string): boolean {
  try {
    if (!statSync(file).isFile()) return false;
    if (isWindows) return true;
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Resolves `name` to an absolute executable path the way a shell would: names with a path
 * separator relative to `cwd`, bare names through PATH (and PATHEXT on Windows, where the
 * extensions come first: npm puts an extension-less sh script beside each `.cmd` shim, which
 * Windows cannot run).
 */
export function resolveExecutable(name: string, env: NodeJS.ProcessEnv, cwd: string): string | undefined {
  if (name.length === 0) return undefined;
  const extensions = isWindows ? [...(env.PATHEXT ?? '.COM;.EXE;.BAT;.CMD').split(';').filter(Boolean), ''] : [''];
  const candidatesFor = (base: string): string[] => extensions.map((ext) => base + ext);
  if (name.includes('/') || (isWindows && name.includes('\\'))) {
    return candidatesFor(path.resolve(cwd, name)).find(isExecutableFile);
  }
  const dirs = (env.PATH ?? env.Path ?? '').split(path.delimiter).filter(Boolean);
  for (const dir of dirs) {
    const found = candidatesFor(path.join(path.resolve(cwd, dir), name)).find(isExecutableFile);
    if (found) return found;
  }
  return undefined;
}

/** The user's interactive shell: $SHELL (or the login shell) on POSIX, PowerShell on Windows. */
export function defaultShell(env: NodeJS.ProcessEnv): CommandLine {
  if (isWindows) {
    const pwsh = resolveExecutable('pwsh.exe', env, process.cwd());
    return { file: pwsh ?? 'powershell.exe', args: ['-NoLogo'] };
  }
  const candidates = [env.SHELL, safeLoginShell()].filter((s): s is string => !!s && path.isAbsolute(s));
  const shell = candidates.find(isExecutableFile) ?? resolveExecutable('sh', env, process.cwd());
  if (!shell) throw new Error('no shell found: set $SHELL');
  return { file: shell, args: [] };
}

function safeLoginShell(): string | undefined {
  try {
    return userInfo().shell ?? undefined;
  } catch {
    return undefined;
  }
}

/** The command line that runs `command` (a string in the shell's own syntax) through the default shell. */
export function shellCommandLine(command: string, env: NodeJS.ProcessEnv): CommandLine {
  const shell = defaultShell(env);
  if (isWindows) return { file: shell.file, args: ['-NoLogo', '-Command', command] };
  return { file: shell.file, args: ['-c', command] };
}

/** The directories on PATH that are absolute: a relative entry ("." or "node_modules/.bin") would find programs in whatever folder a pane works in. */
export function absolutePathEntries(env: NodeJS.ProcessEnv): string {
  const value = env.PATH ?? env.Path ?? '';
  return value
    .split(path.delimiter)
    .filter((dir) => dir !== '' && path.isAbsolute(dir))
    .join(path.delimiter);
}

/** What to pass to execFile to run `file` with `args`. */
export interface ExecCommand {
  file: string;
  args: string[];
  windowsVerbatimArguments: boolean;
}

/**
 * Batch files (npm's `.cmd` shims for every Node CLI) only run through cmd.exe on Windows, and
 * Node refuses to execFile them directly. Arguments are quoted for the C runtime and then their
 * cmd.exe metacharacters escaped with ^, so cmd hands them over literally.
 */
export function execCommand(file: string, args: readonly string[]): ExecCommand {
  if (!isWindows || !/\.(cmd|bat)$/i.test(file)) return { file, args: [...args], windowsVerbatimArguments: false };
  const quote = (arg: string): string => `"${arg.replace(/(\\*)"/g, '$1$1\\"').replace(/(\\*)$/, '$1$1')}"`.replace(/[()%!^"<>&|]/g, '^$&');
  const line = [file, ...args].map(quote).join(' ');
  return { file: process.env.ComSpec ?? 'cmd.exe', args: ['/d', '/s', '/c', `"${line}"`], windowsVerbatimArguments: true };
}

/** The argv that runs `command` through `shell` (a tmux-style `default-shell -c command`). */
export function shellArgv(shell: string, command: string): string[] {
  if (isWindows) {
    const name = path.basename(shell).toLowerCase();
    if (name.startsWith('pwsh') || name.startsWith('powershell')) return [shell, '-NoLogo', '-Command', command];
    if (name === 'cmd.exe' || name === 'cmd') return [shell, '/d', '/s', '/c', command];
  }
  return [shell, '-c', command];
}

/** The argv of `shell` started as a login shell, as tmux starts its default shell. */
export function loginShellArgv(shell: string): string[] {
  if (isWindows) return /pwsh|powershell/i.test(path.basename(shell)) ? [shell, '-NoLogo'] : [shell];
  return [shell, '-l'];
}

/** A shell for a short script of our own in POSIX syntax: /bin/sh, or PowerShell on Windows. */
export function scriptShell(env: NodeJS.ProcessEnv = process.env): string {
  return isWindows ? defaultShell(env).file : '/bin/sh';
}

/**
 * The shell to use when the given one ($SHELL) is missing or unusable, as tmux chooses it: the
 * user's login shell from the user database, else /bin/sh; PowerShell on Windows.
 */
export function fallbackShell(env: NodeJS.ProcessEnv = process.env): string {
  if (isWindows) return defaultShell(env).file;
  const login = safeLoginShell();
  return login && path.isAbsolute(login) && isExecutableFile(login) ? login : '/bin/sh';
}

/** True when `file` is a file this process may execute. */
export function isExecutable(file: string): boolean {
  return isExecutableFile(file);
}
