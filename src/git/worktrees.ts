/**
 * Git worktrees for agents: a branch of their own checked out in a folder of their own, so that
 * agents never write over each other or over the person's checkout; what each changed since its
 * base, for a report or a `patch` event; and, for a cluster node's runs (issue 26 item 5), a
 * worktree taken up again for a follow-up or a resume, the run's changes committed on its branch,
 * and the branch pushed. A team run's worker has one (`switchboard/<run>/<worker>`, issue 24),
 * a node's repository run another (`switchboard/runs/<run>`).
 *
 * Git runs as run-git.ts runs it; what a worktree changed is read through an index of this
 * module's own, so the agent's index is never touched.
 */
import { closeSync, constants, copyFileSync, existsSync, lstatSync, lutimesSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { isSwitchboardError, SwitchboardError } from '../core/errors.js';
import { git, GIT_NETWORK_TIMEOUT_MS, type GitOptions } from './run-git.js';

export interface Worktree {
  /** The worktree's folder. */
  path: string;
  /**
   * Its own git folder (`<repository's .git>/worktrees/<name>`), found when it was made or from
   * the repository's list, never from the `.git` file in the folder: an agent can rewrite that
   * file to point at a git folder of its own making, whose configuration (a clean filter, a
   * remote's receive-pack, a signing program) this module's git would then run as the daemon.
   */
  gitDir: string;
  /** The repository it is a worktree of (where git is told to remove it). */
  repository: string;
  branch: string;
  /** The commit it started from: what its changes are measured against. */
  base: string;
}

export interface WorktreeChanges {
  branch: string;
  /** Each file added, modified, deleted or renamed since `base`, committed or not (ignored files left out). */
  files: { path: string; change: string }[];
  /** git's summary line: "3 files changed, 40 insertions(+), 2 deletions(-)". */
  diffStat?: string;
  /** The diff itself, cut at MAX_DIFF_CHARS. */
  diff: string;
}

/** The most of a worktree's diff a report carries. */
const MAX_DIFF_CHARS = 20_000;
/** The most of a diff read at all: the rest is not waited for. */
const MAX_DIFF_READ = 1024 * 1024;
const CHANGE_NAMES: Record<string, string> = { A: 'added', M: 'modified', D: 'deleted', R: 'renamed', C: 'copied', T: 'changed type' };

/** The top folder of the git repository `folder` is in, or undefined when it is in none. */
export async function repositoryOf(folder: string): Promise<string | undefined> {
  try {
    return (await git(folder, ['rev-parse', '--show-toplevel'])).trim() || undefined;
  } catch {
    return undefined;
  }
}

/**
 * The changes to a repository's worktrees and branches going on now, one chain per repository.
 * git does not make two `worktree add`s in one repository safe: run side by side (a run opening
 * three workers), one in ten failed here with "failed to read .git/worktrees/<name>/commondir",
 * and a worker was left without its folder. So this module makes them one at a time.
 */
const repositoryQueues = new Map<string, Promise<unknown>>();

/** Runs `change` once every change queued before it for `repository` has ended (however it ended). */
function oneAtATime<T>(repository: string, change: () => Promise<T>): Promise<T> {
  const before = repositoryQueues.get(repository) ?? Promise.resolve();
  const mine = before.then(change, change);
  const tail = mine.catch(() => undefined);
  repositoryQueues.set(repository, tail);
  // The last in line clears its entry, so the map holds only repositories with changes pending.
  void tail.then(() => {
    if (repositoryQueues.get(repository) === tail) repositoryQueues.delete(repository);
  });
  return mine;
}

/** True when `source` is a git URL (`https://…`, `ssh://…`, `file://…`, or scp-like `user@host:path`), not a path on this machine. */
export function isGitUrl(source: string): boolean {
  return /^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(source) || /^[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:/.test(source);
}

/**
 * A clone of `url` in `dir` that worktrees are made from (nothing checked out in it): made when
 * there is none, the one there kept otherwise. CONFLICT when `dir` holds a clone of something else.
 */
export async function ensureClone(url: string, dir: string): Promise<void> {
  if (existsSync(dir)) {
    const origin = (await git(dir, ['remote', 'get-url', 'origin']).catch(() => '')).trim();
    if (origin !== url) throw new SwitchboardError('CONFLICT', `${dir} is ${origin === '' ? 'no clone' : `a clone of ${origin}`}, not of ${url}: move it away`, { dir, url });
    return;
  }
  mkdirSync(path.dirname(dir), { recursive: true });
  await git(path.dirname(dir), ['clone', '--quiet', '--no-checkout', '--end-of-options', url, dir], { timeoutMs: GIT_NETWORK_TIMEOUT_MS });
}

/** Brings `repository`'s copy of `remote`'s branches and tags up to date (its remote-tracking branches; its own branches untouched). */
export function fetchRemote(repository: string, remote: string): Promise<void> {
  return oneAtATime(repository, async () => {
    await git(repository, ['fetch', '--quiet', '--tags', '--end-of-options', remote], { timeoutMs: GIT_NETWORK_TIMEOUT_MS });
  });
}

/** `remote`'s branch `ref` as last fetched (`refs/remotes/<remote>/<ref>`), when there is one; else `ref` as given. */
export async function remoteBranchOr(repository: string, ref: string, remote: string): Promise<string> {
  const tracking = `refs/remotes/${remote}/${ref}`;
  return git(repository, ['rev-parse', '--verify', '--quiet', `${tracking}^{commit}`]).then(
    () => tracking,
    () => ref,
  );
}

/** True when `folder` is the top folder of a git repository (not a folder inside one, not none). */
export async function isRepositoryTop(folder: string): Promise<boolean> {
  const top = await repositoryOf(folder);
  return top !== undefined && realpathSync(top) === realpathSync(folder);
}

/**
 * The commit `ref` names in `repository`: INVALID_PARAMS when it names none. A ref is never taken
 * for an option (`--end-of-options`), whatever it starts with.
 */
async function commitOf(repository: string, ref: string): Promise<string> {
  try {
    return (await git(repository, ['rev-parse', '--verify', '--quiet', '--end-of-options', `${ref}^{commit}`])).trim();
  } catch {
    throw new SwitchboardError('INVALID_PARAMS', `${ref} names no commit in ${repository}`, { ref });
  }
}

/** Adds worktree `dir` of `repository` on a new branch `branch` from `from` (a branch, tag or commit; HEAD unless given). */
export function addWorktree(repository: string, dir: string, branch: string, from = 'HEAD'): Promise<Worktree> {
  return oneAtATime(repository, async () => {
    const base = await commitOf(repository, from);
    mkdirSync(path.dirname(dir), { recursive: true });
    await git(repository, ['worktree', 'add', '--quiet', '-b', branch, dir, base]);
    return { path: dir, repository, branch, base, gitDir: await madeGitDir(repository, dir) };
  });
}

/**
 * The git folder of `repository`'s worktree `dir`, from the repository's own list (each worktree's
 * folder there names the `.git` of its checkout), or undefined when the repository has none there.
 */
async function worktreeGitDir(repository: string, dir: string): Promise<string | undefined> {
  const common = path.resolve(repository, (await git(repository, ['rev-parse', '--git-common-dir'])).trim());
  const admin = path.join(common, 'worktrees');
  // Real paths on both sides: git writes the folder's real path, and the folder may be reached through a link.
  const wanted = realPathOr(dir);
  let names: string[];
  try {
    names = readdirSync(admin);
  } catch {
    return undefined;
  }
  for (const name of names) {
    try {
      // A relative path (newer git's worktree.useRelativePaths) is relative to the worktree's git folder.
      const checkout = path.resolve(admin, name, readFileSync(path.join(admin, name, 'gitdir'), 'utf8').trim());
      if (realPathOr(path.dirname(checkout)) === wanted) return path.join(admin, name);
    } catch {
      // Not a worktree's folder, or one being removed.
    }
  }
  return undefined;
}

/** A worktree as its repository lists it, and when it was last used (markWorktreeUsed, or git's last write to its index or HEAD; ms since the epoch). */
export interface ListedWorktree extends Worktree {
  lastUsedAt: number;
}

/** Where a worktree's last use is noted, in its git folder (the repository's, not the folder an agent works in). */
const USED_MARK = 'switchboard-used';

/**
 * Notes that `worktree` is in use now (a run takes it up, or ends there): a run that changes
 * nothing tracked has git write nothing, and would otherwise look unused since its last commit.
 * The mark is an empty file whose own time says when: made only where nothing is (never written
 * through a link an agent may have put there), and its time set without following one.
 */
export function markWorktreeUsed(worktree: Worktree): void {
  const mark = path.join(worktree.gitDir, USED_MARK);
  try {
    closeSync(openSync(mark, 'wx', 0o600));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  const now = new Date();
  lutimesSync(mark, now, now);
}

/**
 * `repository`'s worktrees whose folders are inside `under` and on a branch, from the repository's
 * own list (never from a folder, where an agent may write). `base` is empty: nothing here starts.
 * When each was last used is the later of its mark (markWorktreeUsed) and git's last write of its
 * index or HEAD there.
 */
export async function worktreesUnder(repository: string, under: string): Promise<ListedWorktree[]> {
  const common = path.resolve(repository, (await git(repository, ['rev-parse', '--git-common-dir'])).trim());
  const admin = path.join(common, 'worktrees');
  const inside = realPathOr(under) + path.sep;
  let names: string[];
  try {
    names = readdirSync(admin);
  } catch {
    return [];
  }
  const found: ListedWorktree[] = [];
  for (const name of names) {
    const gitDir = path.join(admin, name);
    try {
      const checkout = realPathOr(path.dirname(path.resolve(gitDir, readFileSync(path.join(gitDir, 'gitdir'), 'utf8').trim())));
      const head = readFileSync(path.join(gitDir, 'HEAD'), 'utf8').trim();
      if (!checkout.startsWith(inside) || !head.startsWith('ref: refs/heads/')) continue;
      // The files' own times (a link is not followed): git's writes, and the mark's.
      const written = ['index', 'HEAD', USED_MARK].map((file) => lstatSync(path.join(gitDir, file), { throwIfNoEntry: false })?.mtimeMs ?? 0);
      found.push({ path: checkout, repository, branch: head.slice('ref: refs/heads/'.length), base: '', gitDir, lastUsedAt: Math.max(...written) });
    } catch {
      // Not a worktree's folder, or one being removed.
    }
  }
  return found;
}

/**
 * Removes `worktree`'s folder, keeping its branch, when everything in it is committed (ignored
 * files, such as a build's output, go with it): what was done there stays on the branch, and the
 * folder is made again from it when a run goes on there. False, and kept, when anything is not
 * committed (git itself refuses such a folder, should something be written after the look here),
 * or when `keep()` says so: asked once no other change of the repository is under way (a run
 * about to go on in the folder, that asked for it before, is then known).
 */
export function removeCommittedWorktree(worktree: Worktree, keep: () => boolean = () => false): Promise<boolean> {
  return oneAtATime(worktree.repository, async () => {
    if (keep() || !existsSync(worktree.path)) return false;
    const status = await git(worktree.path, ['status', '--porcelain', '--untracked-files=all'], { worktree });
    if (status.trim() !== '') return false;
    // A file git was told not to look at (assume-unchanged: a lowercase tag; skip-worktree: S) may
    // hold edits that status does not show and no commit took.
    const tagged = await git(worktree.path, ['ls-files', '-v'], { worktree });
    if (tagged.split('\n').some((line) => /^[a-zS] /.test(line))) return false;
    return git(worktree.repository, ['worktree', 'remove', worktree.path]).then(
      () => true,
      () => false,
    );
  });
}

/** The git folder of a worktree just made (never asked of its folder, where another run's agent may already write). */
async function madeGitDir(repository: string, dir: string): Promise<string> {
  const gitDir = await worktreeGitDir(repository, dir);
  if (gitDir === undefined) throw new SwitchboardError('CONFLICT', `git made ${dir} but does not list it as a worktree of ${repository}`, { dir });
  return gitDir;
}

function realPathOr(folder: string): string {
  try {
    return realpathSync(folder);
  } catch {
    return path.resolve(folder);
  }
}

/** The branch `worktree` has checked out (`refs/heads/` left off), or undefined when it has none (a detached HEAD). */
async function checkedOutBranch(worktree: Worktree, signal?: AbortSignal): Promise<string | undefined> {
  const head = await git(worktree.path, ['symbolic-ref', '--quiet', 'HEAD'], { worktree, ...(signal ? { signal } : {}) }).then(
    (out) => out.trim(),
    (err: unknown) => {
      // Stopped is not "no branch".
      if (isSwitchboardError(err, 'SHUTTING_DOWN')) throw err;
      return '';
    },
  );
  return head.startsWith('refs/heads/') ? head.slice('refs/heads/'.length) : undefined;
}

/**
 * Worktree `dir` of `repository` on branch `branch`, made earlier (a follow-up, or a resume on the
 * same machine) or made again from the branch (a resume after the folder went, or on another
 * machine). With `remote`, the branch is fetched from there first: one this repository lacks is
 * taken from it, one it has that is behind is brought up to it (the folder too), one ahead stays
 * (its commits were not pushed yet). Its base is where the branch is then: what comes after is the
 * new run's. CONFLICT when the branch is nowhere to be had, has gone two ways, or the folder is
 * not this repository's worktree of it.
 */
export function ensureWorktree(repository: string, dir: string, branch: string, remote?: string): Promise<Worktree> {
  return oneAtATime(repository, async () => {
    const local = `refs/heads/${branch}`;
    const tip = (ref: string): Promise<string | undefined> => git(repository, ['rev-parse', '--verify', '--quiet', `${ref}^{commit}`]).then((out) => out.trim(), () => undefined);
    let fetchFailure = '';
    let theirs: string | undefined;
    if (remote !== undefined) {
      const tracking = `refs/remotes/${remote}/${branch}`;
      const fetched = await git(repository, ['fetch', '--quiet', '--end-of-options', remote, `+${local}:${tracking}`], { timeoutMs: GIT_NETWORK_TIMEOUT_MS }).then(
        () => true,
        (err: unknown) => {
          fetchFailure = err instanceof Error ? err.message : String(err);
          return false;
        },
      );
      if (fetched) theirs = await tip(tracking);
    }
    const ours = await tip(local);
    if (ours === undefined && theirs === undefined) {
      throw new SwitchboardError('CONFLICT', `branch ${branch} is not in ${repository}${remote === undefined ? '' : `, nor to be had from ${remote}${fetchFailure !== '' ? ` (${fetchFailure})` : ''}: its run did not push it`}`, { branch });
    }
    const isAncestor = (a: string, b: string): Promise<boolean> => git(repository, ['merge-base', '--is-ancestor', a, b]).then(() => true, () => false);
    const behind = ours !== undefined && theirs !== undefined && ours !== theirs && (await isAncestor(ours, theirs));
    if (ours !== undefined && theirs !== undefined && ours !== theirs && !behind && !(await isAncestor(theirs, ours))) {
      throw new SwitchboardError('CONFLICT', `branch ${branch} has gone two ways: ${repository} has ${ours.slice(0, 12)}, ${remote ?? ''} has ${theirs.slice(0, 12)}`, { branch });
    }
    if (existsSync(dir)) {
      const gitDir = await worktreeGitDir(repository, dir);
      if (gitDir === undefined) throw new SwitchboardError('CONFLICT', `${dir} is not a worktree of ${repository}: move it away`, { dir });
      const worktree: Worktree = { path: dir, repository, branch, base: '', gitDir };
      const head = await checkedOutBranch(worktree);
      if (head !== branch) throw new SwitchboardError('CONFLICT', `${dir} is on ${head ?? 'no branch'}, not on ${branch}`, { dir, branch });
      // Brought up to what was pushed from elsewhere; git refuses when the folder has changes of its own.
      if (behind && theirs !== undefined) await git(dir, ['merge', '--ff-only', '--quiet', theirs], { worktree });
      return { ...worktree, base: (await git(dir, ['rev-parse', 'HEAD'], { worktree })).trim() };
    }
    // A folder removed by hand leaves its entry in git's list, which would refuse the branch.
    await git(repository, ['worktree', 'prune']);
    if (theirs !== undefined && (ours === undefined || behind)) await git(repository, ['branch', '--force', '--quiet', '--end-of-options', branch, theirs]);
    mkdirSync(path.dirname(dir), { recursive: true });
    await git(repository, ['worktree', 'add', '--quiet', dir, branch]);
    return { path: dir, repository, branch, base: (await git(repository, ['rev-parse', '--verify', `${local}^{commit}`])).trim(), gitDir: await madeGitDir(repository, dir) };
  });
}

/** What commitAll did: a commit made, nothing to commit, or nothing committed because the worktree is on another branch (`head`; undefined when on none). */
type CommitResult = { kind: 'committed'; commit: string } | { kind: 'nothing_to_commit' } | { kind: 'left_branch'; head: string | undefined };

/**
 * Commits everything in `worktree` that is not committed yet (new files too, ignored ones not) on
 * its branch, as the repository's own user, or as Switchboard where it names none. Nothing is
 * committed when the worktree is not on its branch any more (the agent switched): what it did
 * there is not the branch's. This is the one look at the worktree's branch a run's end needs.
 */
export async function commitAll(worktree: Worktree, message: string, signal?: AbortSignal): Promise<CommitResult> {
  const options: GitOptions = { worktree, ...(signal ? { signal } : {}) };
  const head = await checkedOutBranch(worktree, signal);
  if (head !== worktree.branch) return { kind: 'left_branch', head };
  await git(worktree.path, ['add', '--all', '--', '.'], options);
  const staged = await git(worktree.path, ['diff', '--cached', '--quiet'], options).then(() => false, () => true);
  if (!staged) return { kind: 'nothing_to_commit' };
  const named = await git(worktree.path, ['config', 'user.email'], options).then((v) => v.trim() !== '', () => false);
  const identity = named ? {} : { GIT_AUTHOR_NAME: 'Switchboard', GIT_AUTHOR_EMAIL: 'switchboard@localhost', GIT_COMMITTER_NAME: 'Switchboard', GIT_COMMITTER_EMAIL: 'switchboard@localhost' };
  await git(worktree.path, ['commit', '--quiet', '--no-verify', '-m', message], { ...options, env: { ...process.env, ...identity } });
  return { kind: 'committed', commit: (await git(worktree.path, ['rev-parse', 'HEAD'], options)).trim() };
}

/** Pushes `worktree`'s branch to `remote` under its own name (not forced: a branch that went another way there is refused, and said). CONFLICT with git's words when it fails. */
export async function pushBranch(worktree: Worktree, remote: string, signal?: AbortSignal): Promise<void> {
  await git(worktree.path, ['push', '--quiet', '--end-of-options', remote, `refs/heads/${worktree.branch}:refs/heads/${worktree.branch}`], { worktree, timeoutMs: GIT_NETWORK_TIMEOUT_MS, ...(signal ? { signal } : {}) });
}

/**
 * Removes `worktree` and its branch when they hold nothing of the worker's: no commit past its base,
 * nothing modified, staged or new (ignored files, such as a build's output, go with it). Anything
 * else is kept for the person, as it is. The branch goes as `branch` says: `if-merged` (git's
 * `branch -d`: one git does not see merged into the repository's HEAD stays), or `if-at-base`
 * (while it still points at its base, merged or not: a branch just made, never worked on, from a
 * ref the repository's HEAD may not hold, such as a fetched branch or a tag).
 */
export async function removeUnchangedWorktree(worktree: Worktree, branch: 'if-merged' | 'if-at-base' = 'if-merged'): Promise<{ removed: boolean; branchRemoved: boolean }> {
  const kept = { removed: false, branchRemoved: false };
  const head = (await git(worktree.path, ['rev-parse', 'HEAD'], { worktree })).trim();
  if (head !== worktree.base) return kept;
  const status = await git(worktree.path, ['status', '--porcelain', '--untracked-files=all', '--ignore-submodules=none'], { worktree });
  if (status.trim() !== '') return kept;
  return oneAtATime(worktree.repository, async () => {
    // Without --force, git itself refuses a worktree that is not clean: a file written since the look above stays.
    await git(worktree.repository, ['worktree', 'remove', worktree.path]);
    const removal =
      branch === 'if-at-base'
        ? // Compare and delete: git removes the branch only if it still points at the base (a commit made since the look above keeps it).
          ['update-ref', '-d', `refs/heads/${worktree.branch}`, worktree.base]
        : // -d, not -D: a branch git does not see merged (its base no longer in the repository's history) stays.
          ['branch', '-d', '--quiet', worktree.branch];
    const branchRemoved = await git(worktree.repository, removal).then(
      () => true,
      () => false,
    );
    return { removed: true, branchRemoved };
  });
}

/** What changed in `worktree` since its base: commits and the working tree alike, new files included. */
export async function worktreeChanges(worktree: Worktree, signal?: AbortSignal): Promise<WorktreeChanges> {
  // A scratch index (never the worker's own): the working tree as it is. It starts as a copy of the
  // worker's index, whose file times spare git hashing unchanged files. In a private folder of its
  // own: beside the worktree, where agents write, a link planted at its name would have the copy
  // written over a file of the person's.
  const scratch = mkdtempSync(path.join(tmpdir(), 'sb-index-'));
  const index = path.join(scratch, 'index');
  const env = { ...process.env, GIT_INDEX_FILE: index };
  const options: GitOptions = { worktree, env, ...(signal ? { signal } : {}) };
  try {
    // The worker's own index, in the worktree's git folder (never where its `.git` file points).
    const own = path.join(worktree.gitDir, 'index');
    try {
      copyFileSync(own, index, constants.COPYFILE_EXCL);
    } catch {
      await git(worktree.path, ['read-tree', 'HEAD'], options);
    }
    await git(worktree.path, ['add', '--all', '--', '.'], options);
    const diffArgs = ['diff', '--cached', '--no-ext-diff', '--no-textconv'];
    const names = await git(worktree.path, [...diffArgs, '--name-status', '-z', worktree.base], options);
    const stat = (await git(worktree.path, [...diffArgs, '--shortstat', worktree.base], options)).trim();
    const diff = await git(worktree.path, [...diffArgs, '--no-color', worktree.base], { ...options, maxBuffer: MAX_DIFF_READ, truncate: true });
    return {
      branch: worktree.branch,
      files: parseNameStatus(names),
      ...(stat !== '' ? { diffStat: stat } : {}),
      diff: diff.length > MAX_DIFF_CHARS ? `${diff.slice(0, MAX_DIFF_CHARS)}\n… (cut here: git diff ${worktree.base.slice(0, 12)} in ${worktree.path} has the rest)\n` : diff,
    };
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** `git diff --name-status -z`: a status, then one path (two for a rename or copy), NUL-separated. */
function parseNameStatus(out: string): { path: string; change: string }[] {
  const parts = out.split('\0').filter((p) => p !== '');
  const files: { path: string; change: string }[] = [];
  for (let i = 0; i < parts.length; ) {
    const status = parts[i++] ?? '';
    const letter = status[0] ?? '?';
    const paths = letter === 'R' || letter === 'C' ? [parts[i++], parts[i++]] : [parts[i++]];
    files.push({ path: paths.filter((p) => p !== undefined).join(' → '), change: CHANGE_NAMES[letter] ?? status });
  }
  return files;
}
