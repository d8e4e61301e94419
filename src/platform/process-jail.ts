/**
 * A real boundary for agent panes where the OS has one: bubblewrap (Linux). A pane's token keeps a
 * program in an agent pane to that pane's grant, and the daemon checks who calls; but as the same
 * OS user, a program that clears its environment and leaves its process tree can still read the
 * owner's token from the runtime file, or from another process's environment in /proc. Inside the
 * jail it cannot: the runtime file is covered, and the pane has a PID namespace of its own, so no
 * process outside it shows in /proc; the Switchboard home is read-only there (its policy and agent
 * profiles cannot be rewritten from inside), but for the pane's own folders. Everything else is the
 * user's own file system, as before (agents work in the user's folders, and can still write what the
 * user can: the README says so); capabilities are dropped, so the covering cannot be undone.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolveExecutable, type CommandLine } from './shell.js';

/** What a jailed pane must not see or change. */
export interface JailSpec {
  /** Files covered by an empty, unreadable one (the runtime file); a missing one is skipped. */
  hiddenFiles: readonly string[];
  /**
   * Folders the pane may read but not change (the Switchboard home: its policy and agent profiles
   * are the daemon's to read), with folders inside them it may still write (its temporary folder,
   * its working folder); missing ones are skipped.
   */
  readOnly?: readonly string[];
  writable?: readonly string[];
}

/** The bubblewrap found on PATH, or undefined (not Linux, not installed). */
export function findBubblewrap(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (process.platform !== 'linux') return undefined;
  return resolveExecutable('bwrap', env, '/');
}

function bubblewrapArgs(spec: JailSpec): string[] {
  return [
    '--dev-bind', '/', '/',
    // A PID namespace of its own, and a /proc that shows only it.
    '--unshare-pid', '--proc', '/proc',
    '--die-with-parent',
    // Run as root, bubblewrap keeps every capability unless told: without them nothing inside can unmount the covers.
    '--cap-drop', 'ALL',
    ...(spec.readOnly ?? []).filter((dir) => existsSync(dir)).flatMap((dir) => ['--ro-bind', dir, dir]),
    ...(spec.writable ?? []).filter((dir) => existsSync(dir)).flatMap((dir) => ['--bind', dir, dir]),
    // Last, so that nothing bound above uncovers them.
    ...spec.hiddenFiles.filter((file) => existsSync(file)).flatMap((file) => ['--ro-bind', '/dev/null', file]),
  ];
}

/** `command` started inside bubblewrap `bwrap` with `spec`, in `cwd`. */
export function jailedCommand(bwrap: string, command: CommandLine, cwd: string, spec: JailSpec): CommandLine {
  return { file: bwrap, args: [...bubblewrapArgs(spec), '--chdir', cwd, '--', command.file, ...command.args] };
}

/**
 * Why bubblewrap `bwrap` cannot jail a pane here (user namespaces off, a kernel that refuses), or
 * undefined when a trial run works.
 */
export function bubblewrapProblem(bwrap: string): string | undefined {
  const trial = spawnSync(bwrap, [...bubblewrapArgs({ hiddenFiles: [] }), '--', process.execPath, '-e', ''], { encoding: 'utf8', timeout: 10_000 });
  if (trial.error) return `${bwrap} did not run: ${trial.error.message}`;
  if (trial.status !== 0) return `${bwrap} failed a trial run (exit ${String(trial.status ?? trial.signal)}): ${trial.stderr.trim().split('\n')[0] ?? ''}`;
  return undefined;
}
