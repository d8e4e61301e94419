import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { addWorktree, removeUnchangedWorktree, repositoryOf, worktreeChanges } from './worktrees.js';

const scratch = mkdtempSync(path.join(tmpdir(), 'sb-worktrees-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const git = (cwd: string, ...args: string[]): string => execFileSync('git', args, { cwd, encoding: 'utf8', env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@example.com', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@example.com' } });

function repository(name = 'repo'): string {
  const repo = path.join(scratch, name);
  mkdirSync(path.join(repo, 'src'), { recursive: true });
  git(repo, 'init', '--quiet', '-b', 'main');
  writeFileSync(path.join(repo, 'README.md'), 'hello\n');
  writeFileSync(path.join(repo, 'src', 'old.txt'), 'old\n');
  writeFileSync(path.join(repo, '.gitignore'), 'build/\n');
  git(repo, 'add', '.');
  git(repo, 'commit', '--quiet', '-m', 'first');
  return repo;
}

describe("a worker's git worktree", () => {
  it('is a branch of its own from HEAD, and its changes (committed, staged, new) are read without touching its index', async () => {
    const repo = repository();
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
});
