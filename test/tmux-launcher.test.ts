/**
 * The `tmux` launchers `switchboard compat install` writes, run the way CCB runs them (no
 * SWITCHBOARD_* variables, HOME somewhere else): the compiled C launcher and the Node launcher give
 * the same answers; with no daemon running, a command that needs a tmux server starts one (as tmux
 * starts its server) while one that does not answers tmux's "no server" error and starts nothing;
 * the token never appears in a launcher or on a command line.
 */
import { execFile, execFileSync } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readRuntimeFile } from '../src/daemon/index.js';
import { isProcessRunning } from '../src/platform/index.js';
import { launcherHome } from '../src/cli/tmux/launcher.js';
import { CLI, cleanEnv, runCli } from './support/cli.js';
import { tempDir } from './support/shell.js';

const work = tempDir('sb-launch-');
const home = path.join(work.dir, 'home');
const bin = path.join(work.dir, 'bin');
const nodeBin = path.join(work.dir, 'node-bin');
let env: Record<string, string>;

function launch(launcher: string, args: string[]): Promise<{ stdout: string; stderr: string; code: number }> {
  return new Promise((resolve) => {
    const child = execFile(launcher, args, { env, cwd: work.dir, timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ stdout, stderr, code: err ? (typeof err.code === 'number' ? err.code : 1) : 0 });
    });
    child.stdin?.end();
  });
}

beforeAll(() => {
  execFileSync('mkdir', ['-m', '700', '-p', home]);
  execFileSync(process.execPath, [CLI, '--home', home, 'compat', 'install', '--dir', bin], { env: cleanEnv() });
  execFileSync(process.execPath, [CLI, '--home', home, 'compat', 'install', '--dir', nodeBin, '--no-compile'], { env: cleanEnv() });
  env = { PATH: `${bin}${path.delimiter}/usr/bin:/bin`, HOME: path.join(work.dir, 'rewritten-home'), SHELL: '/bin/sh', LANG: 'C.UTF-8' };
});

afterAll(async () => {
  await runCli(home, ['down']);
  work.cleanup();
});

describe('the tmux launchers', () => {
  it('find the Switchboard home from the user database, not $HOME', () => {
    expect(launcherHome({ HOME: '/somewhere/else' })).not.toContain('/somewhere/else');
    expect(launcherHome({ HOME: '/x', SWITCHBOARD_HOME: '/chosen' })).toBe(path.resolve('/chosen'));
  });

  it('answer without a daemon, and start one only for a command that starts a tmux server', async () => {
    const sock = path.join(work.dir, 'a.sock');
    const native = path.join(bin, 'tmux');
    expect(await launch(native, ['-S', sock, 'has-session', '-t', 'x'])).toEqual({ stdout: '', stderr: `error connecting to ${sock} (No such file or directory)\n`, code: 1 });
    expect(readRuntimeFile(home)).toBeUndefined();
    expect(await launch(native, ['-V'])).toEqual({ stdout: 'tmux 3.3a\n', stderr: '', code: 0 });
    expect(await launch(native, ['-S', sock, 'new-session', '-d', '-s', 'x', '-n', 'main', 'sleep 600'])).toEqual({ stdout: '', stderr: '', code: 0 });
    const runtime = readRuntimeFile(home);
    expect(runtime && isProcessRunning(runtime.pid)).toBe(true);
    expect(statSync(path.join(home, 'daemon.json')).mode & 0o777).toBe(0o600);
  });

  it('the C and the Node launcher give the same answers, and the token is in neither', async () => {
    const sock = path.join(work.dir, 'b.sock');
    const native = path.join(bin, 'tmux');
    const node = path.join(nodeBin, 'tmux');
    expect(readFileSync(native).subarray(0, 4).toString('latin1')).toBe('\x7fELF');
    // Both run the build's CommonJS bundles (no ESM loader to set up at each start).
    expect(readFileSync(node, 'utf8')).toContain('tmux-main.cjs');
    expect(readFileSync(native).includes('tmux-main.cjs')).toBe(true);
    expect(readFileSync(path.join(nodeBin, 'herdr'), 'utf8')).toContain('herdr-main.cjs');
    expect((await launch(native, ['-S', sock, 'new-session', '-d', '-x', '100', '-y', '20', '-s', 'y', '-n', 'main', 'sleep 600'])).code).toBe(0);
    for (const args of [
      ['display-message', '-p', '-t', 'y', '#{pane_id} #{session_name} #{pane_width}x#{pane_height} #{window_layout}'],
      ['list-panes', '-a', '-F', '#{pane_id}\t#{pane_active}'],
      ['has-session', '-t', 'nosuch'],
      ['display', '-p', 'ünïcödé ✓ \t tab'],
      ['bogus'],
    ]) {
      const viaC = await launch(native, ['-S', sock, ...args]);
      const viaNode = await launch(node, ['-S', sock, ...args]);
      expect(viaC, args.join(' ')).toEqual(viaNode);
    }
    expect((await launch(native, ['-S', sock, 'display', '-p', 'ünïcödé ✓'])).stdout).toBe('ünïcödé ✓\n');
    const token = readRuntimeFile(home)?.token ?? 'missing';
    for (const file of [native, node, path.join(nodeBin, 'herdr')]) expect(readFileSync(file).includes(token)).toBe(false);
    expect((await launch(native, ['-S', sock, 'kill-server'])).code).toBe(0);
  });
});
