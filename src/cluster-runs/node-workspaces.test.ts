import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { git, useTestRepositories } from '../../test/support/git-repositories.js';
import { silentLogger } from '../core/logger.js';
import type { NewRunEvent } from '../ledger/run-events.js';
import type { RunInput, RunRepo, RunSpec } from '../ledger/run-model.js';
import { NodeWorkspaces } from './node-workspaces.js';

const { scratch, repository } = useTestRepositories('sb-node-workspaces-');

const folders = (home: string): { worktrees: string; clones: string } => ({ worktrees: path.join(scratch, home, 'worktrees'), clones: path.join(scratch, home, 'repos') });

const completed: RunInput = { type: 'complete', message: 'done' };

/** What the node records at the end of run `id` (its agent ended `outcome`). */
const report = (workspaces: NodeWorkspaces, id: string, outcome: RunInput = completed): Promise<NewRunEvent[]> => workspaces.report(spec(id), outcome, new AbortController().signal);

const spec = (id: string): RunSpec => ({ id, backend: 'shell', mode: 'stdio', prompt: 'p', cwd: '.', policy: 'test', limits: {}, schema_version: 'v2', parent: null, created_at: 1 });

/**
 * The git commands `during` ran (git's own trace, GIT_TRACE, which every git the node starts
 * inherits from this process), one line each.
 */
async function gitCommandsDuring(during: () => Promise<unknown>): Promise<string[]> {
  const trace = path.join(mkdtempSync(path.join(scratch, 'trace-')), 'git.trace');
  process.env.GIT_TRACE = trace;
  try {
    await during();
  } finally {
    delete process.env.GIT_TRACE;
  }
  return readFileSync(trace, 'utf8').split('\n').filter((line) => line.includes('trace: built-in: git '));
}

describe("a node's repositories", () => {
  it('refuses a path that is not the top of a repository, and a name runs could not give', async () => {
    const repo = repository('checked');
    const root = { worktrees: path.join(scratch, 'home-a', 'worktrees'), clones: path.join(scratch, 'home-a', 'repos') };
    await expect(NodeWorkspaces.open(new Map([['app', path.join(repo, 'src')]]), root, silentLogger)).rejects.toMatchObject({ code: 'INVALID_PARAMS', details: { repo: 'app' } });
    await expect(NodeWorkspaces.open(new Map([['app', path.join(scratch, 'nowhere')]]), root, silentLogger)).rejects.toMatchObject({ code: 'INVALID_PARAMS' });
    await expect(NodeWorkspaces.open(new Map([['-app', repo]]), root, silentLogger)).rejects.toMatchObject({ code: 'INVALID_PARAMS', details: { repo: '-app' } });
    expect((await NodeWorkspaces.open(new Map([['b', repo], ['a', repo]]), root, silentLogger)).names()).toEqual(['a', 'b']);
  });

  it("runs a run in a worktree of its own and a follow-up in the same one; each reports only what it changed, committed on the branch", async () => {
    const repo = repository('app');
    const workspaces = await NodeWorkspaces.open(new Map([['app', repo]]), folders('home-b'), silentLogger);
    const branch: RunRepo = { name: 'app', branch: 'switchboard/runs/run_1', push: false };
    const folder = await workspaces.prepare('run_1', branch, 'src');
    expect(folder).toBe(path.join(scratch, 'home-b', 'worktrees', 'app', 'run_1', 'src'));
    writeFileSync(path.join(folder, 'old.txt'), 'old changed\n');
    const [patch, ...rest] = await report(workspaces, 'run_1');
    expect(rest).toEqual([]);
    expect(patch).toMatchObject({ type: 'patch', data: { repo: 'app', branch: 'switchboard/runs/run_1', files: [{ path: 'src/old.txt', change: 'modified' }], diff_stat: expect.stringContaining('1 file changed') as unknown }, compat: { status: 'applied' } });
    // Reported once.
    expect(await report(workspaces, 'run_1')).toEqual([]);

    // The follow-up: the same worktree, measured from where the branch is now.
    const again = await workspaces.prepare('run_2', branch, '.');
    expect(readFileSync(path.join(again, 'src', 'old.txt'), 'utf8')).toBe('old changed\n');
    writeFileSync(path.join(again, 'b.txt'), 'b\n');
    const [next] = await report(workspaces, 'run_2');
    expect(next?.data).toMatchObject({ files: [{ path: 'b.txt', change: 'added' }] });
    expect(git(again, 'log', '--format=%s', 'main..HEAD').trim().split('\n')).toEqual(['switchboard: run run_2', 'switchboard: run run_1']);
    // A run that changed nothing reports nothing; the person's checkout never moved.
    await workspaces.prepare('run_3', branch, '.');
    expect(await report(workspaces, 'run_3')).toEqual([]);
    expect(git(repo, 'rev-parse', '--abbrev-ref', 'HEAD').trim()).toBe('main');
    expect(git(repo, 'status', '--porcelain').trim()).toBe('');
  });

  it('says why a run cannot have its worktree: a repository not here, a folder outside it, a push that fails', async () => {
    const repo = repository('other');
    const workspaces = await NodeWorkspaces.open(new Map([['other', repo]]), folders('home-c'), silentLogger);
    await expect(workspaces.prepare('run_4', { name: 'app', branch: 'switchboard/runs/run_4', push: false }, '.')).rejects.toMatchObject({ code: 'INVALID_PARAMS', message: expect.stringContaining('it has other') as unknown });
    await expect(workspaces.prepare('run_5', { name: 'other', branch: 'switchboard/runs/run_5', push: false }, '../..')).rejects.toMatchObject({ code: 'INVALID_PARAMS', details: { cwd: '../..' } });
    // A follow-up's branch that is not here, and was never pushed.
    await expect(workspaces.prepare('run_6', { name: 'other', branch: 'switchboard/runs/run_0', push: false }, '.')).rejects.toMatchObject({ code: 'CONFLICT' });
    // No origin to push to: the run's changes are still reported and committed, and a notice says why the push failed.
    const folder = await workspaces.prepare('run_7', { name: 'other', branch: 'switchboard/runs/run_7', push: true }, '.');
    writeFileSync(path.join(folder, 'c.txt'), 'c\n');
    const events = await report(workspaces, 'run_7');
    expect(events.map((e) => e.type)).toEqual(['patch', 'notice']);
    expect(String(events[1]?.data.text)).toContain('could not push switchboard/runs/run_7 to origin');
    expect(git(folder, 'status', '--porcelain').trim()).toBe('');
  });

  it('lets one run at a time work on a branch, pushes only what a run that completed left, and lists as many files as an event carries', async () => {
    const origin = path.join(scratch, 'held.git');
    git(scratch, 'init', '--quiet', '--bare', '-b', 'main', origin);
    const repo = repository('held');
    git(repo, 'remote', 'add', 'origin', origin);
    const workspaces = await NodeWorkspaces.open(new Map([['held', repo]]), folders('home-e'), silentLogger);
    const branch: RunRepo = { name: 'held', branch: 'switchboard/runs/run_10', push: true };
    const [first, second] = await Promise.allSettled([workspaces.prepare('run_10', branch, '.'), workspaces.prepare('run_11', branch, '.')]);
    expect(first.status).toBe('fulfilled');
    expect(second).toMatchObject({ status: 'rejected', reason: { code: 'CONFLICT', details: { run_id: 'run_10' } } });
    const folder = first.status === 'fulfilled' ? first.value : '';
    for (let i = 0; i < 600; i++) writeFileSync(path.join(folder, `f${String(i).padStart(3, '0')}.txt`), `${i}\n`);
    // Cancelled: committed on the branch here, not pushed.
    const events = await report(workspaces, 'run_10', { type: 'cancel', reason: 'cancelled_by_user', message: 'cancelled' });
    expect(events.map((e) => e.type)).toEqual(['patch', 'notice']);
    expect((events[0]?.data.files as unknown[]).length).toBe(500);
    expect(events[0]?.data.files_more).toBe(100);
    expect(String(events[1]?.data.text)).toContain('was not pushed: the run did not complete');
    expect(git(origin, 'branch', '--list').trim()).toBe('');
    // The branch is held until the run's report is made, then free: its follow-up goes on there, and completes: pushed.
    const next = await workspaces.prepare('run_11', branch, '.');
    const reporting = report(workspaces, 'run_11');
    await expect(workspaces.prepare('run_12', branch, '.')).rejects.toMatchObject({ code: 'CONFLICT', details: { run_id: 'run_11' } });
    await reporting;
    await workspaces.prepare('run_12', branch, '.');
    await workspaces.forget('run_12');
    const last = await workspaces.prepare('run_13', branch, '.');
    expect(last).toBe(next);
    writeFileSync(path.join(next, 'last.txt'), 'last\n');
    expect((await report(workspaces, 'run_13')).map((e) => [e.type, e.data.text])).toEqual([['patch', undefined], ['notice', 'pushed switchboard/runs/run_10 to origin']]);
    expect(git(origin, 'show', 'switchboard/runs/run_10:last.txt')).toBe('last\n');
  });

  it("looks at the worktree's branch once at a run's end, and commits nothing of an agent that left its branch, saying so", async () => {
    const repo = repository('branch-checks');
    const workspaces = await NodeWorkspaces.open(new Map([['app', repo]]), folders('home-g'), silentLogger);
    const folder = await workspaces.prepare('run_30', { name: 'app', branch: 'switchboard/runs/run_30', push: false }, '.');
    writeFileSync(path.join(folder, 'new.txt'), 'new\n');
    let events: NewRunEvent[] = [];
    const commands = await gitCommandsDuring(async () => (events = await report(workspaces, 'run_30')));
    // Committed, then read: the patch is what the agent changed, and the branch was asked for once.
    expect(events.map((e) => e.type)).toEqual(['patch']);
    expect(events[0]?.data).toMatchObject({ files: [{ path: 'new.txt', change: 'added' }], commit: git(repo, 'rev-parse', 'switchboard/runs/run_30').trim() });
    expect(commands.filter((line) => / symbolic-ref /.test(line))).toHaveLength(1);

    // The agent switched branches: nothing committed on either, nothing pushed, a notice says so.
    const branch: RunRepo = { name: 'app', branch: 'switchboard/runs/run_31', push: true };
    const left = await workspaces.prepare('run_31', branch, '.');
    const base = git(left, 'rev-parse', 'HEAD').trim();
    git(left, 'checkout', '--quiet', '-b', 'elsewhere');
    writeFileSync(path.join(left, 'stray.txt'), 'stray\n');
    const [notice, ...rest] = await report(workspaces, 'run_31');
    expect(rest).toEqual([]);
    expect(notice).toMatchObject({ type: 'notice', data: { text: 'the agent left the worktree on elsewhere, not on switchboard/runs/run_31: nothing of it was committed or pushed' } });
    expect(git(repo, 'rev-parse', 'switchboard/runs/run_31').trim()).toBe(base);
    expect(git(repo, 'rev-parse', 'elsewhere').trim()).toBe(base);
    expect(git(left, 'status', '--porcelain').trim()).toBe('?? stray.txt');
  });

  it("removes the worktree and branch a run that never started made, and nothing else: a follow-up's stays, and so does one with anything in it", async () => {
    const repo = repository('unstarted');
    // A branch the person's HEAD does not hold: git's `branch -d` would keep a run's branch made from it.
    git(repo, 'checkout', '--quiet', '-b', 'feature');
    writeFileSync(path.join(repo, 'feature.txt'), 'feature\n');
    git(repo, 'add', '.');
    git(repo, 'commit', '--quiet', '-m', 'feature');
    git(repo, 'checkout', '--quiet', 'main');
    const workspaces = await NodeWorkspaces.open(new Map([['app', repo]]), folders('home-f'), silentLogger);
    const branches = (): string[] => git(repo, 'branch', '--format=%(refname:short)').trim().split('\n').sort();
    const worktrees = (): string => git(repo, 'worktree', 'list', '--porcelain');

    // Refused (or never started) after its worktree was made: folder and branch gone, and the branch free again.
    const refused = await workspaces.prepare('run_20', { name: 'app', ref: 'feature', branch: 'switchboard/runs/run_20', push: false }, '.');
    expect(readFileSync(path.join(refused, 'feature.txt'), 'utf8')).toBe('feature\n');
    await workspaces.forget('run_20');
    expect(existsSync(refused)).toBe(false);
    expect(worktrees()).not.toContain(refused);
    expect(branches()).toEqual(['feature', 'main']);

    // A follow-up that never started, on a branch an earlier run made and left as it found it: both stay.
    const first: RunRepo = { name: 'app', branch: 'switchboard/runs/run_21', push: false };
    const kept = await workspaces.prepare('run_21', first, '.');
    expect(await report(workspaces, 'run_21')).toEqual([]);
    await workspaces.prepare('run_22', first, '.');
    await workspaces.forget('run_22');
    expect(existsSync(kept)).toBe(true);
    expect(branches()).toContain('switchboard/runs/run_21');

    // A new branch with a commit past its base, or a folder with a file in it: kept as they are.
    const committed = await workspaces.prepare('run_23', { name: 'app', branch: 'switchboard/runs/run_23', push: false }, '.');
    writeFileSync(path.join(committed, 'c.txt'), 'c\n');
    git(committed, 'add', '.');
    git(committed, 'commit', '--quiet', '-m', 'something');
    await workspaces.forget('run_23');
    expect(readFileSync(path.join(committed, 'c.txt'), 'utf8')).toBe('c\n');
    const written = await workspaces.prepare('run_24', { name: 'app', branch: 'switchboard/runs/run_24', push: false }, '.');
    writeFileSync(path.join(written, 'w.txt'), 'w\n');
    await workspaces.forget('run_24');
    expect(readFileSync(path.join(written, 'w.txt'), 'utf8')).toBe('w\n');
    expect(branches()).toEqual(['feature', 'main', 'switchboard/runs/run_21', 'switchboard/runs/run_23', 'switchboard/runs/run_24']);
    // Each branch is free once its run is forgotten: a follow-up takes it up.
    expect(await workspaces.prepare('run_25', { name: 'app', branch: 'switchboard/runs/run_23', push: false }, '.')).toBe(committed);
    expect(git(repo, 'status', '--porcelain').trim()).toBe('');
  });

  it('removes the folders of run branches no run used for a while, keeping their branches; a folder in use or holding work stays, and a follow-up makes it again', async () => {
    const repo = repository('pruned');
    const workspaces = await NodeWorkspaces.open(new Map([['app', repo]]), folders('home-p'), silentLogger);
    const on = (id: string): RunRepo => ({ name: 'app', branch: `switchboard/runs/${id}`, push: false });
    // Done: its change committed at its end, a build's output (ignored) beside it.
    const done = await workspaces.prepare('run_1', on('run_1'), '.');
    writeFileSync(path.join(done, 'new.txt'), 'kept on the branch\n');
    mkdirSync(path.join(done, 'build'));
    writeFileSync(path.join(done, 'build', 'out.bin'), 'built\n');
    await report(workspaces, 'run_1');
    // Going on: its branch is held.
    const going = await workspaces.prepare('run_2', on('run_2'), '.');
    writeFileSync(path.join(going, 'wip.txt'), 'not yet\n');
    // Ended, then written to by hand: not committed.
    const touched = await workspaces.prepare('run_3', on('run_3'), '.');
    await report(workspaces, 'run_3');
    writeFileSync(path.join(touched, 'later.txt'), 'by hand\n');

    expect(await workspaces.pruneIdle(7 * 24 * 60 * 60 * 1000)).toEqual([]);
    // A minute from now, every folder has been idle for more than a millisecond.
    const doneReally = realpathSync(done);
    expect(await workspaces.pruneIdle(1, Date.now() + 60_000)).toEqual([doneReally]);
    expect(existsSync(done)).toBe(false);
    expect(existsSync(going) && existsSync(touched)).toBe(true);
    expect(git(repo, 'show', 'switchboard/runs/run_1:new.txt')).toBe('kept on the branch\n');

    // A follow-up on that branch: its folder made again from the branch; what was ignored went.
    const again = await workspaces.prepare('run_4', on('run_1'), '.');
    expect(again).toBe(done);
    expect(readFileSync(path.join(again, 'new.txt'), 'utf8')).toBe('kept on the branch\n');
    expect(existsSync(path.join(again, 'build'))).toBe(false);
    await report(workspaces, 'run_4');
    await report(workspaces, 'run_2');
    await workspaces.dispose();
  });

  it('counts a run that changed nothing as a use, and keeps a folder with edits git was told not to look at, or one that is not its branch own', async () => {
    const repo = repository('pruned-kept');
    const workspaces = await NodeWorkspaces.open(new Map([['app', repo]]), folders('home-q'), silentLogger);
    const on = (id: string): RunRepo => ({ name: 'app', branch: `switchboard/runs/${id}`, push: false });
    const week = 7 * 24 * 60 * 60 * 1000;
    // Last written by git eight days ago: its index, HEAD and use mark say so.
    const quiet = await workspaces.prepare('run_1', on('run_1'), '.');
    await report(workspaces, 'run_1');
    const daysAgo = (days: number): Date => new Date(Date.now() - days * 24 * 60 * 60 * 1000);
    const admin = path.join(repo, '.git', 'worktrees', 'run_1');
    for (const file of ['index', 'HEAD', 'switchboard-used']) if (existsSync(path.join(admin, file))) utimesSync(path.join(admin, file), daysAgo(8), daysAgo(8));
    // Today a follow-up works there and changes nothing git would write: a use all the same.
    await workspaces.prepare('run_2', on('run_1'), '.');
    expect(await report(workspaces, 'run_2')).toEqual([]);
    // Noted by the node itself: git writes nothing it would not have to (its index and HEAD may stay as they were).
    expect(statSync(path.join(admin, 'switchboard-used')).mtimeMs).toBeGreaterThan(daysAgo(1).getTime());
    expect(await workspaces.pruneIdle(week)).toEqual([]);
    expect(existsSync(quiet)).toBe(true);

    // An edit to a file the agent told git to skip: no commit took it, and the folder stays.
    const skipped = await workspaces.prepare('run_3', on('run_3'), '.');
    git(skipped, 'update-index', '--skip-worktree', 'README.md');
    writeFileSync(path.join(skipped, 'README.md'), 'edited where git does not look\n');
    await report(workspaces, 'run_3');
    // A worktree under the root that is not its branch's own folder.
    const stray = path.join(scratch, 'home-q', 'worktrees', 'app', 'stray');
    git(repo, 'worktree', 'add', '--quiet', '-b', 'switchboard/runs/run_9', stray);
    const later = Date.now() + 60_000;
    const quietReally = realpathSync(quiet);
    expect(await workspaces.pruneIdle(1, later)).toEqual([quietReally]);
    expect(readFileSync(path.join(skipped, 'README.md'), 'utf8')).toBe('edited where git does not look\n');
    expect(existsSync(stray)).toBe(true);
    await workspaces.dispose();
  });

  it("clones a repository given by URL into its home once, fetches it before each run that starts a branch, and takes a branch of origin's as fetched", async () => {
    const origin = path.join(scratch, 'remote.git');
    git(scratch, 'init', '--quiet', '--bare', '-b', 'main', origin);
    const person = repository('person');
    git(person, 'push', '--quiet', origin, 'main');
    const url = `file://${origin}`;
    const home = folders('home-d');
    const workspaces = await NodeWorkspaces.open(new Map([['app', url]]), home, silentLogger);
    expect(git(path.join(home.clones, 'app'), 'remote', 'get-url', 'origin').trim()).toBe(url);

    // Someone pushes after the node cloned: a run on main starts from the push.
    writeFileSync(path.join(person, 'README.md'), 'hello\npushed later\n');
    git(person, 'commit', '--quiet', '-am', 'later');
    git(person, 'push', '--quiet', origin, 'main');
    const folder = await workspaces.prepare('run_8', { name: 'app', ref: 'main', branch: 'switchboard/runs/run_8', push: false }, '.');
    expect(readFileSync(path.join(folder, 'README.md'), 'utf8')).toBe('hello\npushed later\n');
    // No ref: origin's HEAD as fetched.
    const head = await workspaces.prepare('run_9', { name: 'app', branch: 'switchboard/runs/run_9', push: false }, '.');
    expect(git(head, 'rev-parse', 'HEAD').trim()).toBe(git(person, 'rev-parse', 'HEAD').trim());

    // Started again: the clone there is kept; a clone of something else under the name is refused.
    expect((await NodeWorkspaces.open(new Map([['app', url]]), home, silentLogger)).names()).toEqual(['app']);
    await expect(NodeWorkspaces.open(new Map([['app', `file://${path.join(scratch, 'elsewhere.git')}`]]), home, silentLogger)).rejects.toMatchObject({ code: 'CONFLICT' });
    await expect(NodeWorkspaces.open(new Map([['gone', `file://${path.join(scratch, 'nothing-here.git')}`]]), home, silentLogger)).rejects.toMatchObject({ code: 'CONFLICT' });
  });
});
