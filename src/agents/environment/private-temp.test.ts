import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createPrivateTemp, sweepPrivateTemps } from './private-temp.js';
import { agentTempRoot } from '../../platform/index.js';

let scratch: string | undefined;
const newRoot = (): string => {
  scratch = mkdtempSync(path.join(tmpdir(), 'sb-private-temp-'));
  return path.join(scratch, 'tmp');
};
afterEach(() => {
  if (scratch) rmSync(scratch, { recursive: true, force: true });
  scratch = undefined;
});

/** A pid that was used and is free again: a process that has already exited. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  return Number(child.stdout);
}

describe('an agent process\u2019s private temporary folder', () => {
  it('is a folder of its own under the root, named for this process, that every temp variable names', () => {
    const root = newRoot();
    const temp = createPrivateTemp(root);
    expect(path.dirname(temp.dir)).toBe(root);
    expect(path.basename(temp.dir)).toMatch(new RegExp(`^${process.pid}-[A-Za-z0-9]{6}$`));
    expect(temp.env).toEqual({ TMPDIR: temp.dir, TMP: temp.dir, TEMP: temp.dir });
    if (process.platform !== 'win32') {
      expect(statSync(temp.dir).mode & 0o777).toBe(0o700);
      expect(statSync(root).mode & 0o777).toBe(0o700);
    }
    temp.release();
  });

  it('goes, with whatever the agent left in it, when released; twice is harmless', () => {
    const root = newRoot();
    const temp = createPrivateTemp(root);
    mkdirSync(path.join(temp.dir, 'claude-0', 'project'), { recursive: true });
    writeFileSync(path.join(temp.dir, '.9afbdebbe3fefddf-00000000.so'), 'native library');
    temp.release();
    temp.release();
    expect(existsSync(temp.dir)).toBe(false);
    expect(readdirSync(root)).toEqual([]);
  });

  it('lies under the home it is for, or, for a home too deep for the sockets CLIs make there, in a private folder of the system\u2019s', () => {
    expect(agentTempRoot('/home/someone/.switchboard')).toBe(path.join('/home/someone/.switchboard', 'tmp'));
    const deep = `/home/someone/${'very-long-folder-name/'.repeat(4)}.switchboard`;
    const root = agentTempRoot(deep);
    expect(path.dirname(root)).toBe(tmpdir());
    expect(path.basename(root)).toMatch(/^switchboard-\d+-[0-9a-f]{12}$/);
    expect(agentTempRoot(deep)).toBe(root);
    expect(agentTempRoot(`${deep}-2`)).not.toBe(root);
  });

  it('is released when what it was made for could not start', () => {
    const root = newRoot();
    const temp = createPrivateTemp(root);
    expect(() =>
      temp.guard(() => {
        throw new Error('spawn refused');
      }),
    ).toThrow('spawn refused');
    expect(existsSync(temp.dir)).toBe(false);
    const kept = createPrivateTemp(root);
    expect(kept.guard(() => 42)).toBe(42);
    expect(existsSync(kept.dir)).toBe(true);
    kept.release();
  });

  it('cannot be made in a root that is not a folder: SPAWN_FAILED, naming the root', () => {
    const root = newRoot();
    mkdirSync(path.dirname(root), { recursive: true });
    writeFileSync(root, 'a file where the folder should be');
    expect(() => createPrivateTemp(root)).toThrow(expect.objectContaining({ code: 'SPAWN_FAILED', message: expect.stringContaining(root) as unknown }) as Error);
  });
});

describe('a sweep of the root', () => {
  it('removes the folders of owners that are gone, and keeps live owners\u2019 and anything not made here', () => {
    const root = newRoot();
    const mine = createPrivateTemp(root);
    const dead = path.join(root, `${deadPid()}-AbCdEf`);
    mkdirSync(path.join(dead, 'opencode'), { recursive: true });
    writeFileSync(path.join(dead, 'opencode', 'lib.so'), 'x');
    // Alive: this test's parent (vitest's main process).
    const alive = path.join(root, `${process.ppid}-GhIjKl`);
    mkdirSync(alive);
    const foreign = path.join(root, 'notes');
    mkdirSync(foreign);
    expect(sweepPrivateTemps(root)).toEqual([path.basename(dead)]);
    expect(existsSync(dead)).toBe(false);
    expect(existsSync(alive)).toBe(true);
    expect(existsSync(foreign)).toBe(true);
    expect(existsSync(mine.dir)).toBe(true);
    mine.release();
  });

  it.runIf(process.platform === 'linux')('keeps a dead owner\u2019s folder while a running process still has it as its temporary folder', async () => {
    const root = newRoot();
    mkdirSync(root, { recursive: true, mode: 0o700 });
    const orphaned = path.join(root, `${deadPid()}-StUvWx`);
    mkdirSync(orphaned);
    // An agent that outlived the Switchboard process that started it.
    const agent = spawn('sleep', ['30'], { env: { ...process.env, TMPDIR: orphaned }, stdio: 'ignore' });
    try {
      await new Promise((resolve) => agent.once('spawn', resolve));
      expect(sweepPrivateTemps(root)).toEqual([]);
      expect(existsSync(orphaned)).toBe(true);
    } finally {
      agent.kill('SIGKILL');
      await new Promise((resolve) => agent.once('exit', resolve));
    }
    expect(sweepPrivateTemps(root)).toEqual([path.basename(orphaned)]);
  });

  it('of a root that does not exist finds nothing', () => {
    expect(sweepPrivateTemps(path.join(newRoot(), 'none'))).toEqual([]);
  });

  it('happens at the first folder a process makes under a root, so a dead host\u2019s leftovers go even without a daemon', () => {
    const root = newRoot();
    mkdirSync(root, { recursive: true, mode: 0o700 });
    const dead = path.join(root, `${deadPid()}-MnOpQr`);
    mkdirSync(dead);
    const temp = createPrivateTemp(root);
    expect(existsSync(dead)).toBe(false);
    temp.release();
  });
});
