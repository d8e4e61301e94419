/**
 * The one way this folder runs git: the user's own `git` (no shell between), with a time limit,
 * never asking on a terminal (a push or fetch needing a password fails instead of waiting), and
 * with no program of the repository's own run as the daemon. git runs with no controlling
 * terminal (platform's runWithoutTerminal), so the ssh it starts for an ssh remote cannot ask on
 * one either; past its time, or stopped, git's whole process group ends, ssh with it.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { SwitchboardError } from '../core/errors.js';
import { absolutePathEntries, resolveExecutable, runWithoutTerminal } from '../platform/index.js';

const GIT_TIMEOUT_MS = 60_000;
/** A clone or fetch over the network may take longer than work on the disk. */
export const GIT_NETWORK_TIMEOUT_MS = 10 * 60_000;
const MAX_GIT_OUTPUT = 32 * 1024 * 1024;

/**
 * The user's git, found on the absolute entries of PATH: never a `git` in the folder it runs in
 * (Windows looks there first), which a worker could have written.
 */
function gitProgram(): string {
  return resolveExecutable('git', { ...process.env, PATH: absolutePathEntries(process.env) }, path.parse(process.cwd()).root) ?? 'git';
}

/** A hooks folder that is not there: a hook a worker planted in the shared repository never runs as the daemon. */
const NO_HOOKS = path.join(path.parse(process.cwd()).root, 'switchboard-runs-no-git-hooks');

/** A worktree's folder and its own git folder (Worktree has both). */
interface WorktreeFolders {
  path: string;
  gitDir: string;
}

/**
 * How git is run: past `maxBuffer` bytes of output, `truncate` takes what came (a diff that large
 * is cut in the report anyway).
 */
export interface GitOptions {
  env?: NodeJS.ProcessEnv;
  maxBuffer?: number;
  truncate?: boolean;
  timeoutMs?: number;
  /** Work in this worktree by its own git folder, never by what its `.git` file says (Worktree.gitDir). */
  worktree?: WorktreeFolders;
  /** Ends git (SHUTTING_DOWN) when it aborts. */
  signal?: AbortSignal;
}

/**
 * Settings every git call runs with: no `ext::` remote (a command line as a URL), no signing
 * program, no housekeeping in the background of a commit (it would take locks other calls need).
 */
const SAFE_SETTINGS = ['core.fsmonitor=false', `core.hooksPath=${NO_HOOKS}`, 'protocol.ext.allow=never', 'commit.gpgsign=false', 'tag.gpgsign=false', 'gc.auto=0', 'maintenance.auto=false', 'submodule.recurse=false', 'push.recurseSubmodules=no', 'fetch.recurseSubmodules=no'];

/**
 * Runs git in `cwd` without a shell: its output. A repository's own configuration cannot make it
 * run programs of its own here (hooks, an external diff or text conversion, a file-system monitor;
 * a clean filter it names still runs, as it would for the user's own `git add`).
 */
export async function git(cwd: string, args: readonly string[], options: GitOptions = {}): Promise<string> {
  const safe = [...SAFE_SETTINGS.flatMap((setting) => ['-c', setting]), ...args];
  const timeout = options.timeoutMs ?? GIT_TIMEOUT_MS;
  const maxBuffer = options.maxBuffer ?? MAX_GIT_OUTPUT;
  const { worktree } = options;
  // Never a prompt on a terminal nobody watches: a remote that wants a password fails at once.
  // git's own prompt is off here; ssh's is out of reach, as git runs with no terminal at all.
  const env = { ...(options.env ?? process.env), GIT_TERMINAL_PROMPT: '0', ...(worktree ? { GIT_DIR: worktree.gitDir, GIT_WORK_TREE: worktree.path } : {}) };
  const outcome = await runWithoutTerminal(gitProgram(), safe, { cwd: worktree?.path ?? cwd, env, timeoutMs: timeout, maxOutputBytes: maxBuffer, ...(options.signal ? { signal: options.signal } : {}) });
  if (outcome.end === 'exited' && outcome.code === 0) return outcome.stdout;
  const command = `git ${args[0] ?? ''}`;
  if (options.signal?.aborted === true) throw new SwitchboardError('SHUTTING_DOWN', `${command} was stopped in ${cwd}`, { cwd });
  switch (outcome.end) {
    case 'output_limit':
      if (options.truncate === true) return outcome.stdout;
      throw new SwitchboardError('CONFLICT', `${command} wrote more than ${maxBuffer} bytes in ${cwd}`, { cwd });
    case 'timed_out':
      throw new SwitchboardError('TIMEOUT', `${command} took longer than ${timeout / 1000} s in ${cwd}`, { cwd });
    case 'aborted':
      throw new SwitchboardError('SHUTTING_DOWN', `${command} was stopped in ${cwd}`, { cwd });
    case 'not_started':
      // Node says ENOENT for a folder that is not there as for a program that is not.
      if (outcome.error.code === 'ENOENT' && !existsSync(worktree?.path ?? cwd)) throw new SwitchboardError('INVALID_PARAMS', `${command}: the folder ${worktree?.path ?? cwd} is not there`, { cwd });
      if (outcome.error.code === 'ENOENT') throw new SwitchboardError('SPAWN_FAILED', 'git is not installed (a worktree needs it)', { cwd });
      throw new SwitchboardError('SPAWN_FAILED', `${command} could not start in ${cwd}: ${outcome.error.message}`, { cwd });
    case 'exited':
      // git refusing: a branch of that name, a folder in the way, a remote that says no.
      throw new SwitchboardError('CONFLICT', `${command} failed in ${cwd}: ${outcome.stderr.trim() || (outcome.signal !== null ? `ended by ${outcome.signal}` : `exit code ${outcome.code ?? '?'}`)}`, { cwd });
  }
}
