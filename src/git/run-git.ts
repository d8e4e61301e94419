/**
 * The one way this folder runs git: the user's own `git` (no shell between), with a time limit,
 * never asking on a terminal (a push or fetch needing a password fails instead of waiting), and
 * with no program of the repository's own run as the daemon.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { SwitchboardError } from '../core/errors.js';
import { absolutePathEntries, resolveExecutable } from '../platform/index.js';

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
export function git(cwd: string, args: readonly string[], options: GitOptions = {}): Promise<string> {
  const safe = [...SAFE_SETTINGS.flatMap((setting) => ['-c', setting]), ...args];
  const timeout = options.timeoutMs ?? GIT_TIMEOUT_MS;
  const { worktree } = options;
  // Never a prompt on a terminal nobody watches: a remote that wants a password fails at once.
  const env = { ...(options.env ?? process.env), GIT_TERMINAL_PROMPT: '0', ...(worktree ? { GIT_DIR: worktree.gitDir, GIT_WORK_TREE: worktree.path } : {}) };
  return new Promise((resolve, reject) => {
    execFile(gitProgram(), safe, { cwd: worktree?.path ?? cwd, env, timeout, maxBuffer: options.maxBuffer ?? MAX_GIT_OUTPUT, windowsHide: true, ...(options.signal ? { signal: options.signal } : {}) }, (err, stdout, stderr) => {
      if (!err) return resolve(stdout);
      const code = (err as NodeJS.ErrnoException).code;
      if (options.signal?.aborted === true) return reject(new SwitchboardError('SHUTTING_DOWN', `git ${args[0] ?? ''} was stopped in ${cwd}`, { cwd }));
      if (code === 'ERR_CHILD_PROCESS_STDIO_MAXBUFFER' && options.truncate === true) return resolve(stdout);
      // No git at all, git past its time, or git refusing (a branch of that name, a folder in the way).
      if (code === 'ENOENT') reject(new SwitchboardError('SPAWN_FAILED', 'git is not installed (a worktree needs it)', { cwd }));
      else if ((err as { killed?: boolean }).killed === true) reject(new SwitchboardError('TIMEOUT', `git ${args[0] ?? ''} took longer than ${timeout / 1000} s in ${cwd}`, { cwd }));
      else reject(new SwitchboardError('CONFLICT', `git ${args[0] ?? ''} failed in ${cwd}: ${stderr.trim() || err.message}`, { cwd }));
    });
  });
}
