import { existsSync, mkdirSync, readFileSync, rmSync, statSync, symlinkSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { git, useTestRepositories } from '../../test/support/git-repositories.js';
import { addWorktree, commitAll, ensureWorktree, isRepositoryTop, markWorktreeUsed, pushBranch, removeUnchangedWorktree, repositoryOf, worktreeChanges, worktreesUnder } from './worktrees.js';

const { scratch, repository } = useTestRepositories('sb-worktrees-');

describe("a worker's git worktree", () => {
  it('is a branch of its own from HEAD, and its changes (committed, staged, new) are read without touching its index', async () => {
    const repo = repository('repo');
    expect(await repositoryOf(path.join(repo, 'src'))).toBe(repo);
    expect(await repositoryOf(scratch)).toBeUndefined();

    const tree = await addWorktree(repo, path.join(scratch, 'home', 'worktrees', 'team-1', 'executor-1'), 'switchboard/team-1/executor-1');
    expect(git(tree.path, 'rev-parse', '--abbrev-ref', 'HEAD').trim()).toBe('switchboard/team-1/executor-1');
    expect(tree.base).toBe(git(repo, 'rev-parse', 'HEAD').trim());
    expect(await worktreeChanges(tree)).toEqual({ branch: 'switchboard/team-1/executor-1', files: [], diff: '' });

    // A commit, an edit, a deletion, a new file, and one git ignores.
    writeFileSync(path.join(tree.path, 'README.md'), 'hello\nmore\n');
    git(tree.path, 'commit', '--quiet', '-am', 'more');
    writeFileSync(path.join(tree.path, 'src', 'new.txt'), 'new ```fence``` inside\n');
    unlinkSync(path.join(tree.path, 'src', 'old.txt'));
    mkdirSync(path.join(tree.path, 'build'));
    writeFileSync(path.join(tree.path, 'build', 'out.bin'), 'ignored\n');
    const statusBefore = git(tree.path, 'status', '--porcelain');

    const changes = await worktreeChanges(tree);
    expect(changes.files).toEqual([
      { path: 'README.md', change: 'modified' },
      { path: 'src/new.txt', change: 'added' },
      { path: 'src/old.txt', change: 'deleted' },
    ]);
    expect(changes.diffStat).toBe('3 files changed, 2 insertions(+), 1 deletion(-)');
    expect(changes.diff).toContain('+more');
    expect(changes.diff).toContain('+new ```fence``` inside');
    expect(changes.diff).not.toContain('ignored');
    // The worker's own index and working tree are as they were; the repository's main tree too.
    expect(git(tree.path, 'status', '--porcelain')).toBe(statusBefore);
    expect(statusBefore).toContain('?? src/new.txt');
    expect(readFileSync(path.join(repo, 'README.md'), 'utf8')).toBe('hello\n');
    expect(git(repo, 'status', '--porcelain')).toBe('');

    // A second worktree on the same branch name is refused with git's reason.
    await expect(addWorktree(repo, path.join(scratch, 'home', 'worktrees', 'team-1', 'again'), 'switchboard/team-1/executor-1')).rejects.toMatchObject({ code: 'CONFLICT', message: expect.stringContaining('already exists') });
  });

  it('is removed at the end with its branch only when it holds nothing of the worker: any change keeps it', async () => {
    const repo = repository('repo-ends');
    const at = (name: string): string => path.join(scratch, 'home', 'worktrees', 'team-2', name);
    const branches = (): string[] => git(repo, 'branch', '--format=%(refname:short)').trim().split('\n').sort();

    const untouched = await addWorktree(repo, at('untouched'), 'switchboard/team-2/untouched');
    // A build's output git ignores does not keep it.
    mkdirSync(path.join(untouched.path, 'build'));
    writeFileSync(path.join(untouched.path, 'build', 'out.bin'), 'ignored\n');
    const newFile = await addWorktree(repo, at('new-file'), 'switchboard/team-2/new-file');
    writeFileSync(path.join(newFile.path, 'notes.md'), 'mine\n');
    const committed = await addWorktree(repo, at('committed'), 'switchboard/team-2/committed');
    writeFileSync(path.join(committed.path, 'README.md'), 'changed\n');
    git(committed.path, 'commit', '--quiet', '-am', 'work');

    expect(await removeUnchangedWorktree(untouched)).toEqual({ removed: true, branchRemoved: true });
    expect(await removeUnchangedWorktree(newFile)).toEqual({ removed: false, branchRemoved: false });
    expect(await removeUnchangedWorktree(committed)).toEqual({ removed: false, branchRemoved: false });
    expect(existsSync(untouched.path)).toBe(false);
    expect(readFileSync(path.join(newFile.path, 'notes.md'), 'utf8')).toBe('mine\n');
    expect(git(committed.path, 'log', '-1', '--format=%s').trim()).toBe('work');
    expect(branches()).toEqual(['main', 'switchboard/team-2/committed', 'switchboard/team-2/new-file']);
    expect(git(repo, 'worktree', 'list', '--porcelain')).not.toContain(untouched.path);
  });

  it('opens and removes many worktrees of one repository at once, all of them whole (git alone races on its worktree list)', async () => {
    const repo = repository('crowded');
    const names = Array.from({ length: 8 }, (_, i) => `executor-${i + 1}`);
    const trees = await Promise.all(names.map((name) => addWorktree(repo, path.join(scratch, 'home', 'worktrees', 'team-3', name), `switchboard/team-3/${name}`)));
    // Each one is a checkout git knows, on its own branch (a worktree git half made has no commondir).
    for (const [i, tree] of trees.entries()) expect(git(tree.path, 'rev-parse', '--abbrev-ref', 'HEAD').trim()).toBe(`switchboard/team-3/${names[i] ?? ''}`);
    const removed = await Promise.all(trees.map((tree) => removeUnchangedWorktree(tree)));
    expect(removed).toEqual(trees.map(() => ({ removed: true, branchRemoved: true })));
    expect(git(repo, 'branch', '--list').trim()).toBe('* main');
  });

  it("starts a branch from a ref; a ref naming nothing, or looking like an option, is refused and nothing is made", async () => {
    const repo = repository('refs');
    const first = git(repo, 'rev-parse', 'HEAD').trim();
    git(repo, 'tag', 'v1');
    writeFileSync(path.join(repo, 'README.md'), 'hello\nsecond\n');
    git(repo, 'commit', '--quiet', '-am', 'second');
    expect(await isRepositoryTop(repo)).toBe(true);
    expect(await isRepositoryTop(path.join(repo, 'src'))).toBe(false);
    expect(await isRepositoryTop(scratch)).toBe(false);

    const at = (name: string): string => path.join(scratch, 'node', 'worktrees', 'refs', name);
    const tree = await addWorktree(repo, at('run_1'), 'switchboard/runs/run_1', 'v1');
    expect(tree.base).toBe(first);
    expect(readFileSync(path.join(tree.path, 'README.md'), 'utf8')).toBe('hello\n');
    for (const ref of ['no-such-branch', '--output=/tmp/x', 'HEAD~9']) {
      await expect(addWorktree(repo, at(`bad-${ref.length}`), `switchboard/runs/bad-${ref.length}`, ref)).rejects.toMatchObject({ code: 'INVALID_PARAMS' });
      expect(existsSync(at(`bad-${ref.length}`))).toBe(false);
    }
  });

  it("commits a run's changes on its branch, pushes the branch, and takes it up again: the same folder, made again from the branch, or fetched from the remote elsewhere", async () => {
    const origin = path.join(scratch, 'origin.git');
    git(scratch, 'init', '--quiet', '--bare', '-b', 'main', origin);
    const repo = repository('pushes');
    git(repo, 'remote', 'add', 'origin', origin);
    git(repo, 'push', '--quiet', 'origin', 'main');
    const dir = path.join(scratch, 'node-a', 'worktrees', 'pushes', 'run_2');
    const tree = await addWorktree(repo, dir, 'switchboard/runs/run_2');
    expect(await commitAll(tree, 'switchboard: run run_2')).toEqual({ kind: 'nothing_to_commit' });
    writeFileSync(path.join(tree.path, 'fix.txt'), 'fixed\n');
    const made = await commitAll(tree, 'switchboard: run run_2');
    const commit = made.kind === 'committed' ? made.commit : '';
    expect(commit).toMatch(/^[0-9a-f]{40}$/);
    expect(git(tree.path, 'log', '-1', '--format=%s').trim()).toBe('switchboard: run run_2');
    expect(git(tree.path, 'status', '--porcelain').trim()).toBe('');
    await pushBranch(tree, 'origin');
    expect(git(origin, 'rev-parse', 'switchboard/runs/run_2').trim()).toBe(commit);

    // The same folder, as it is: its base is where the branch is now.
    expect(await ensureWorktree(repo, dir, 'switchboard/runs/run_2')).toEqual({ path: dir, repository: repo, branch: 'switchboard/runs/run_2', base: commit, gitDir: tree.gitDir });
    // Its folder gone: made again from the branch.
    rmSync(dir, { recursive: true, force: true });
    const again = await ensureWorktree(repo, dir, 'switchboard/runs/run_2', 'origin');
    expect(readFileSync(path.join(again.path, 'fix.txt'), 'utf8')).toBe('fixed\n');

    // Another machine's copy lacks the branch: fetched from the remote; one never pushed is refused, saying so.
    const elsewhere = path.join(scratch, 'node-b-copy');
    git(scratch, 'clone', '--quiet', origin, elsewhere);
    const there = path.join(scratch, 'node-b', 'worktrees', 'pushes', 'run_2');
    await expect(ensureWorktree(elsewhere, there, 'switchboard/runs/run_3')).rejects.toMatchObject({ code: 'CONFLICT', message: expect.stringContaining('is not in') as unknown });
    await expect(ensureWorktree(elsewhere, path.join(scratch, 'node-b', 'x'), 'switchboard/runs/run_9', 'origin')).rejects.toMatchObject({ code: 'CONFLICT', message: expect.stringContaining('its run did not push it') as unknown });
    const fetched = await ensureWorktree(elsewhere, there, 'switchboard/runs/run_2', 'origin');
    expect(fetched.base).toBe(commit);
    expect(readFileSync(path.join(there, 'fix.txt'), 'utf8')).toBe('fixed\n');

    // It goes on there and is pushed: back on the first machine, its folder is brought up to it before the next run.
    writeFileSync(path.join(there, 'other.txt'), 'theirs\n');
    const pushedThere = await commitAll(fetched, 'elsewhere');
    if (pushedThere.kind !== 'committed') throw new Error(`nothing committed elsewhere: ${pushedThere.kind}`);
    await pushBranch(fetched, 'origin');
    const back = await ensureWorktree(repo, dir, 'switchboard/runs/run_2', 'origin');
    expect(back.base).toBe(pushedThere.commit);
    expect(readFileSync(path.join(dir, 'other.txt'), 'utf8')).toBe('theirs\n');

    // Both go on without the other: the branch has gone two ways, refused before any run starts; a push is never forced.
    writeFileSync(path.join(there, 'two.txt'), 'two\n');
    await commitAll({ ...fetched, base: pushedThere.commit }, 'there again');
    await pushBranch(fetched, 'origin');
    writeFileSync(path.join(dir, 'mine.txt'), 'mine\n');
    await commitAll(back, 'here');
    await expect(pushBranch(back, 'origin')).rejects.toMatchObject({ code: 'CONFLICT' });
    await expect(ensureWorktree(repo, dir, 'switchboard/runs/run_2', 'origin')).rejects.toMatchObject({ code: 'CONFLICT', message: expect.stringContaining('gone two ways') as unknown });
  });

  it("never takes the agent's word for where the worktree's git folder is, and commits nothing once the agent left its branch", async () => {
    const repo = repository('guarded');
    const tree = await addWorktree(repo, path.join(scratch, 'node-c', 'worktrees', 'guarded', 'run_g'), 'switchboard/runs/run_g');
    // The agent makes a git folder of its own whose configuration runs a program at `git add`, and points `.git` at it.
    const ran = path.join(scratch, 'filter-ran');
    const own = path.join(tree.path, '.g');
    git(scratch, 'init', '--quiet', '--bare', own);
    git(own, 'config', 'filter.x.clean', `touch ${ran}; cat`);
    writeFileSync(path.join(tree.path, '.gitattributes'), '* filter=x\n');
    writeFileSync(path.join(tree.path, '.git'), `gitdir: ${own}\n`);
    writeFileSync(path.join(tree.path, 'work.txt'), 'work\n');
    expect((await worktreeChanges(tree)).files.map((f) => f.path)).toContain('work.txt');
    expect(await commitAll(tree, 'switchboard: run run_g')).toMatchObject({ kind: 'committed', commit: expect.stringMatching(/^[0-9a-f]{40}$/) as unknown });
    expect(existsSync(ran)).toBe(false);
    expect(git(repo, 'log', '-1', '--format=%s', 'switchboard/runs/run_g').trim()).toBe('switchboard: run run_g');

    // On another branch: nothing committed, said.
    const other = await addWorktree(repo, path.join(scratch, 'node-c', 'worktrees', 'guarded', 'run_h'), 'switchboard/runs/run_h');
    git(other.path, 'checkout', '--quiet', '-b', 'elsewhere');
    writeFileSync(path.join(other.path, 'stray.txt'), 'stray\n');
    expect(await commitAll(other, 'switchboard: run run_h')).toEqual({ kind: 'left_branch', head: 'elsewhere' });
    expect(git(repo, 'rev-parse', 'switchboard/runs/run_h').trim()).toBe(other.base);
  });

  it('finds a worktree reached through a link, and writes its scratch index nowhere an agent could plant a link', async () => {
    const repo = repository('linked');
    const real = path.join(scratch, 'real-root');
    mkdirSync(real);
    const link = path.join(scratch, 'link-root');
    symlinkSync(real, link);
    const dir = path.join(link, 'run_l');
    const tree = await addWorktree(repo, dir, 'switchboard/runs/run_l');
    expect(await ensureWorktree(repo, dir, 'switchboard/runs/run_l')).toMatchObject({ path: dir, gitDir: tree.gitDir });
    // Links at every name beside the worktree: none is written through.
    const victim = path.join(scratch, 'victim.txt');
    writeFileSync(victim, 'mine\n');
    for (let n = 0; n < 20; n++) symlinkSync(victim, `${dir}.switchboard-index-${process.pid}-${n}`);
    writeFileSync(path.join(dir, 'new.txt'), 'new\n');
    expect((await worktreeChanges(tree)).files).toEqual([{ path: 'new.txt', change: 'added' }]);
    expect(readFileSync(victim, 'utf8')).toBe('mine\n');
  });

  it("notes a worktree's use in its git folder, never through a link planted there, and lists it with that time", async () => {
    const repo = repository('marked');
    const tree = await addWorktree(repo, path.join(scratch, 'marked-home', 'worktrees', 'app', 'run_1'), 'switchboard/runs/run_1');
    const victim = path.join(scratch, 'marked-victim.txt');
    writeFileSync(victim, 'mine\n');
    const longAgo = new Date(Date.now() - 30 * 24 * 60 * 60 * 1000);
    utimesSync(victim, longAgo, longAgo);
    symlinkSync(victim, path.join(tree.gitDir, 'switchboard-used'));
    markWorktreeUsed(tree);
    expect(readFileSync(victim, 'utf8')).toBe('mine\n');
    expect(Math.round(statSync(victim).mtimeMs)).toBe(longAgo.getTime());
    // Without a planted link: made, and its time is the worktree's last use.
    rmSync(path.join(tree.gitDir, 'switchboard-used'));
    for (const file of ['index', 'HEAD']) if (existsSync(path.join(tree.gitDir, file))) utimesSync(path.join(tree.gitDir, file), longAgo, longAgo);
    const before = Date.now() - 1_000;
    markWorktreeUsed(tree);
    const [listed] = await worktreesUnder(repo, path.join(scratch, 'marked-home', 'worktrees'));
    expect(listed).toMatchObject({ branch: 'switchboard/runs/run_1' });
    expect(listed?.lastUsedAt).toBeGreaterThan(before);
  });
});
