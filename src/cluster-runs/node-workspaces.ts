/**
 * A node's repositories (issue 26 item 5): the git repositories it has at hand, by the names it
 * registers them under (`switchboard node --repo NAME=PATH|URL`: a clone of the person's, or one
 * the node keeps itself in its home's `repos/<name>`, fetched before each run that starts a branch,
 * its refs taken from `origin` as fetched), and a worktree of one per repository
 * run, on the run's own branch, under the node's home (`worktrees/<repo>/<run>`). No filesystem is
 * shared with the controller: what a run changed goes to it as the run's last `patch` event, and
 * the branch can be pushed to the repository's `origin`, from where a resume on another node
 * fetches it.
 *
 * A follow-up and a resume go on in the worktree of the run that made the branch (made again from
 * the branch when its folder went). A run that never started has the worktree and branch it made
 * removed, when nothing is in them. Once a run's agent is done, before its end is recorded
 * (RunService's `beforeEnd`), what it changed since its start is read, committed on the branch
 * (so the branch is the whole record, and a resume elsewhere has it; the commit names only the
 * run, never its prompt), and pushed when asked.
 */
import { realpathSync } from 'node:fs';
import path from 'node:path';
import { errorMessage, SwitchboardError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import { addWorktree, commitAll, ensureClone, ensureWorktree, fetchRemote, isGitUrl, isRepositoryTop, markWorktreeUsed, pushBranch, remoteBranchOr, removeCommittedWorktree, removeUnchangedWorktree, worktreeChanges, worktreesUnder, type Worktree, type WorktreeChanges } from '../git/index.js';
import { noticeEvent, type NewRunEvent } from '../ledger/run-events.js';
import { REPO_NAME_PATTERN, type RunInput, type RunRepo, type RunSpec } from '../ledger/run-model.js';

/** Where a branch is pushed to and fetched from: the repository's own upstream. */
const PUSH_REMOTE = 'origin';
const BRANCH_PREFIX = 'switchboard/runs/';
/** The most files a patch event lists, and the most characters of their paths: the rest is counted (an event crosses NATS whole, under its max_payload). */
const MAX_PATCH_FILES = 500;
const MAX_PATCH_PATH_CHARS = 100_000;
/** How often the worktrees no run has used for a while are looked for (keepPruned). */
const PRUNE_EVERY_MS = 60 * 60 * 1000;

/** A repository the node has: its folder, and whether the node keeps the clone itself (cloned from a URL). */
interface Repository {
  folder: string;
  ownClone: boolean;
}

/** Where a node keeps its worktrees and the clones it makes. */
export interface WorkspaceFolders {
  worktrees: string;
  clones: string;
}

/** A repository run's worktree while the run goes on, and what to do at its end. */
interface Workspace {
  worktree: Worktree;
  repo: RunRepo;
  /** This run made the worktree and its branch (it starts the branch): neither is an earlier run's. */
  made: boolean;
}

export class NodeWorkspaces {
  private readonly going = new Map<string, Workspace>();
  /** The run working on each branch (`<repo> <branch>`), from its prepare to its report: one at a time. */
  private readonly branchHolders = new Map<string, string>();
  private pruning: NodeJS.Timeout | undefined;
  /** The prune under way, if one is: the next waits for it. */
  private pruned: Promise<unknown> = Promise.resolve();

  /**
   * @param repos the repositories, by name: each the top folder of a git repository on this machine.
   * @param root where the worktrees go (the node's policy's sandbox must hold it).
   */
  private constructor(
    private readonly repos: ReadonlyMap<string, Repository>,
    private readonly root: string,
    private readonly logger: Logger,
  ) {}

  /**
   * The node's repositories, by name, each a path or a URL, checked: INVALID_PARAMS naming the one
   * whose path is not the top folder of a git repository (a folder inside one would give its run
   * the whole repository). A URL is cloned into `folders.clones` unless cloned there before;
   * CONFLICT when what is there is a clone of something else, and git's words when it cannot be cloned.
   */
  static async open(repos: ReadonlyMap<string, string>, folders: WorkspaceFolders, logger: Logger): Promise<NodeWorkspaces> {
    const checked = new Map<string, Repository>();
    for (const [name, source] of repos) {
      if (!REPO_NAME_PATTERN.test(name)) throw new SwitchboardError('INVALID_PARAMS', `${JSON.stringify(name)} is no repository name: letters, digits, ., _ and -, at most 64, not starting with . or -`, { repo: name });
      if (isGitUrl(source)) {
        const folder = path.join(folders.clones, name);
        logger.info('the clone of a repository', { repo: name, url: source, folder });
        await ensureClone(source, folder);
        checked.set(name, { folder, ownClone: true });
        continue;
      }
      const top = path.resolve(source);
      if (!(await isRepositoryTop(top).catch(() => false))) throw new SwitchboardError('INVALID_PARAMS', `repository ${name}: ${top} is not the top folder of a git repository`, { repo: name, path: top });
      checked.set(name, { folder: top, ownClone: false });
    }
    return new NodeWorkspaces(checked, folders.worktrees, logger);
  }

  /**
   * Removes the worktree folders of run branches no run has used for `idleMs` (each run's start and
   * end is noted there: markWorktreeUsed). The branch stays, and with it everything a run did, committed
   * at its end: a follow-up or a resume makes the folder again from it. What is not on the branch
   * goes with the folder: ignored files, such as a build's output or installed packages. A folder
   * holding anything not committed stays, and so does one whose branch a run holds now or asks for
   * meanwhile. Resolves with the folders removed.
   */
  pruneIdle(idleMs: number, now = Date.now()): Promise<string[]> {
    const run = this.pruned.then(() => this.pruneNow(idleMs, now));
    this.pruned = run.catch(() => undefined);
    return run;
  }

  /** Prunes (pruneIdle) now and every hour, until dispose. */
  keepPruned(idleMs: number): void {
    const prune = (): void => {
      this.pruneIdle(idleMs).catch((err: unknown) => this.logger.warn('could not look for idle worktrees', { error: errorMessage(err) }));
    };
    clearInterval(this.pruning);
    this.pruning = setInterval(prune, PRUNE_EVERY_MS);
    this.pruning.unref();
    prune();
  }

  /** Stops pruning; resolves once a prune under way is done. */
  async dispose(): Promise<void> {
    clearInterval(this.pruning);
    this.pruning = undefined;
    await this.pruned;
  }

  private async pruneNow(idleMs: number, now: number): Promise<string[]> {
    const removed: string[] = [];
    // Real, as the repository's list has its folders (the root may be reached through a link).
    let root: string;
    try {
      root = realpathSync(this.root);
    } catch {
      return removed;
    }
    for (const [name, repository] of this.repos) {
      const listed = await worktreesUnder(repository.folder, path.join(this.root, name));
      // The repository's list names the folder and the branch (an agent that can write the
      // repository could change either): only a run branch's own folder, named once, is looked at.
      const named = new Map<string, number>();
      for (const w of listed) named.set(w.path, (named.get(w.path) ?? 0) + 1);
      for (const worktree of listed) {
        const key = `${name} ${worktree.branch}`;
        const own = worktree.branch.startsWith(BRANCH_PREFIX) && worktree.path === path.join(root, name, worktree.branch.slice(BRANCH_PREFIX.length));
        if (!own || named.get(worktree.path) !== 1 || now - worktree.lastUsedAt < idleMs || this.branchHolders.has(key)) continue;
        try {
          if (await removeCommittedWorktree(worktree, () => this.branchHolders.has(key))) {
            removed.push(worktree.path);
            this.logger.info('removed the worktree of a run branch no run used for a while (the branch stays)', { repo: name, branch: worktree.branch, folder: worktree.path, idle_days: Math.floor((now - worktree.lastUsedAt) / 86_400_000) });
          }
        } catch (err) {
          this.logger.warn('could not remove an idle worktree', { repo: name, branch: worktree.branch, folder: worktree.path, error: errorMessage(err) });
        }
      }
    }
    return removed;
  }

  /** The repositories' names, as the node's lease lists them. */
  names(): string[] {
    return [...this.repos.keys()].sort();
  }

  /**
   * The folder run `runId` works in: `cwd` inside its worktree of `repo`, made for a run that
   * starts the branch, taken up for one that goes on with it. INVALID_PARAMS or CONFLICT, saying
   * why, when it cannot be (a repository this node lacks, a ref that names no commit, a branch not
   * here nor on the remote, a folder outside the worktree).
   */
  async prepare(runId: string, repo: RunRepo, cwd: string): Promise<string> {
    const known = this.repos.get(repo.name);
    if (known === undefined) throw new SwitchboardError('INVALID_PARAMS', `this node has no repository ${repo.name} (it has ${this.names().join(', ') || 'none'})`, { repo: repo.name });
    if (!repo.branch.startsWith(BRANCH_PREFIX)) throw new SwitchboardError('INVALID_PARAMS', `${repo.branch} is no run's branch`, { branch: repo.branch });
    const dir = path.join(this.root, repo.name, repo.branch.slice(BRANCH_PREFIX.length));
    const folder = path.resolve(dir, cwd);
    const inside = path.relative(dir, folder);
    if (inside === '..' || inside.startsWith(`..${path.sep}`) || path.isAbsolute(inside)) throw new SwitchboardError('INVALID_PARAMS', `${cwd} is outside the run's worktree`, { cwd });
    // One run at a time in a branch's folder: a second would have the first's half-done work committed as its own.
    const key = `${repo.name} ${repo.branch}`;
    const holder = this.branchHolders.get(key);
    if (holder !== undefined) throw new SwitchboardError('CONFLICT', `run ${holder} is working on ${repo.branch} on this node: one run at a time goes on with a branch`, { branch: repo.branch, run_id: holder });
    this.branchHolders.set(key, runId);
    try {
      const starts = repo.branch === `${BRANCH_PREFIX}${runId}`;
      const repository = known.folder;
      // Going on with a branch: what was pushed of it from elsewhere is fetched first, whether or not this run pushes.
      const worktree = starts ? await addWorktree(repository, dir, repo.branch, await this.startOf(runId, repo, known)) : await ensureWorktree(repository, dir, repo.branch, PUSH_REMOTE);
      this.going.set(runId, { worktree, repo, made: starts });
      this.markUsed(runId, worktree);
      this.logger.info('worktree for a run', { run_id: runId, repo: repo.name, branch: repo.branch, base: worktree.base, made: starts });
      return folder;
    } catch (err) {
      this.branchHolders.delete(key);
      throw err;
    }
  }

  /**
   * What a new branch starts from: the ref as given, in a clone of the person's (they keep it up to
   * date); in the node's own clone, fetched first, and a branch of that name taken from `origin`
   * (its own branches are the clone's first checkout, never moved). A fetch that fails is said in
   * the log, and the run starts from what was fetched before.
   */
  private async startOf(runId: string, repo: RunRepo, known: Repository): Promise<string> {
    const ref = repo.ref ?? 'HEAD';
    if (!known.ownClone) return ref;
    try {
      await fetchRemote(known.folder, PUSH_REMOTE);
    } catch (err) {
      this.logger.warn('could not fetch a repository before a run; it starts from what was fetched before', { run_id: runId, repo: repo.name, error: errorMessage(err) });
    }
    return remoteBranchOr(known.folder, ref, PUSH_REMOTE);
  }

  /**
   * What run `spec` changed, as its last events (RunService's beforeEnd): a `patch` with its files,
   * stat line and diff since it started, once committed on its branch; and, asked to push, the
   * branch pushed when the agent completed and nothing stopped the run meanwhile, or a notice
   * saying why not. A worktree the agent left on another branch is neither committed nor pushed.
   * `stopped` ends a push under way; what is read and committed here is done whatever stops the
   * run (it is quick, and a next run on the branch must not take this one's work for its own).
   * The branch is held until the report is made. Nothing for a run with no worktree here.
   */
  async report(spec: RunSpec, outcome: RunInput, stopped: AbortSignal): Promise<NewRunEvent[]> {
    const workspace = this.going.get(spec.id);
    if (!workspace) return [];
    this.going.delete(spec.id);
    try {
      return await this.reportOf(spec, workspace, outcome, stopped);
    } finally {
      // Used until now, whether or not it changed anything git would write.
      this.markUsed(spec.id, workspace.worktree);
      this.release(spec.id);
    }
  }

  /** Notes the worktree's use (pruneIdle reads it); a failure is said, and the worktree looks used as git last wrote it. */
  private markUsed(runId: string, worktree: Worktree): void {
    try {
      markWorktreeUsed(worktree);
    } catch (err) {
      this.logger.warn("could not note a worktree's use", { run_id: runId, folder: worktree.path, error: errorMessage(err) });
    }
  }

  private async reportOf(spec: RunSpec, workspace: Workspace, outcome: RunInput, stopped: AbortSignal): Promise<NewRunEvent[]> {
    const { worktree, repo } = workspace;
    const events: NewRunEvent[] = [];
    let changes: WorktreeChanges;
    let commit: string | undefined;
    try {
      // Committed first, then read: the changes run from the base to the working tree, the same
      // before the commit as after, and commitAll's look at the branch is the only one needed.
      // Only the run's id: the prompt stays out of a history that may be pushed.
      const committed = await commitAll(worktree, `switchboard: run ${spec.id}`);
      if (committed.kind === 'left_branch') return [noticeEvent(Date.now(), `the agent left the worktree on ${committed.head ?? 'no branch'}, not on ${repo.branch}: nothing of it was committed${repo.push ? ' or pushed' : ''}`)];
      commit = committed.kind === 'committed' ? committed.commit : undefined;
      changes = await worktreeChanges(worktree);
    } catch (err) {
      this.logger.warn("a run's changes could not be read or committed", { run_id: spec.id, branch: repo.branch, error: errorMessage(err) });
      const done = commit !== undefined ? `committed as ${commit.slice(0, 12)}, but could not read what changed` : 'could not read or commit what the run changed';
      return [noticeEvent(Date.now(), `${repo.branch}: ${done}: ${errorMessage(err)}`)];
    }
    if (changes.files.length > 0) {
      const summary = `${repo.branch}: ${changes.diffStat ?? `${changes.files.length} files changed`}`;
      events.push({
        type: 'patch',
        ts: Date.now(),
        data: { id: `worktree:${spec.id}`, path: null, summary, applied: true, repo: repo.name, branch: repo.branch, base: worktree.base, ...(commit !== undefined ? { commit } : {}), ...listedFiles(changes.files), ...(changes.diffStat !== undefined ? { diff_stat: changes.diffStat } : {}), diff: changes.diff },
        compat: { text: summary, status: 'applied', is_error: false },
      });
    }
    if (repo.push && (outcome.type !== 'complete' || stopped.aborted)) {
      events.push(noticeEvent(Date.now(), `${repo.branch} was not pushed: the run did not complete (its changes are committed on the branch on this node)`));
    } else if (repo.push) {
      try {
        await pushBranch(worktree, PUSH_REMOTE, stopped);
        events.push(noticeEvent(Date.now(), `pushed ${repo.branch} to ${PUSH_REMOTE}`));
      } catch (err) {
        this.logger.warn('a run branch could not be pushed', { run_id: spec.id, branch: repo.branch, error: errorMessage(err) });
        events.push(noticeEvent(Date.now(), `could not push ${repo.branch} to ${PUSH_REMOTE}: ${errorMessage(err)}`));
      }
    }
    return events;
  }

  /**
   * Forgets a run that ended without its report: its agent never ran (refused by the node's
   * policy, a program that could not be started, cancelled while it waited). The worktree and
   * branch it made are removed when nothing is in them (no commit past its base, nothing changed
   * in its folder): no follow-up goes on with a run that never ran, and kept, every refused run
   * would leave a folder in the node's home and a branch in the repository. A follow-up's or a
   * resume's worktree stays (its branch is an earlier run's), as does anything with work in it.
   * The branch is held until then. Never fails: what could not be removed is logged, and stays.
   */
  async forget(runId: string): Promise<void> {
    const workspace = this.going.get(runId);
    this.going.delete(runId);
    try {
      if (workspace?.made === true) await this.removeUnused(runId, workspace.worktree);
    } finally {
      this.release(runId);
    }
  }

  /** Removes the worktree and branch a run made and never used; kept, and said in the log, when anything is in them. */
  private async removeUnused(runId: string, worktree: Worktree): Promise<void> {
    try {
      // At base, not merged: the branch starts from a ref the repository's HEAD may lack (origin's branch as fetched, a tag).
      const { removed, branchRemoved } = await removeUnchangedWorktree(worktree, 'if-at-base');
      this.logger.info(removed ? 'worktree of a run that never started removed' : 'worktree of a run that never started kept: something is in it', { run_id: runId, branch: worktree.branch, folder: worktree.path, branch_removed: branchRemoved });
    } catch (err) {
      this.logger.warn('could not remove the worktree of a run that never started', { run_id: runId, branch: worktree.branch, folder: worktree.path, error: errorMessage(err) });
    }
  }

  /** Lets go of the branch run `runId` held. */
  private release(runId: string): void {
    for (const [key, holder] of this.branchHolders) if (holder === runId) this.branchHolders.delete(key);
  }
}

/** A patch's files, as many as an event carries (MAX_PATCH_FILES, MAX_PATCH_PATH_CHARS), and how many more there are. */
function listedFiles(files: readonly { path: string; change: string }[]): { files: { path: string; change: string }[]; files_more?: number } {
  const listed: { path: string; change: string }[] = [];
  let chars = 0;
  for (const file of files) {
    if (listed.length >= MAX_PATCH_FILES || chars + file.path.length > MAX_PATCH_PATH_CHARS) break;
    listed.push(file);
    chars += file.path.length;
  }
  return listed.length < files.length ? { files: listed, files_more: files.length - listed.length } : { files: listed };
}
