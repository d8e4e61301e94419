/**
 * The tmux front end against real tmux, in the same run, driven as CCB drives tmux: one `tmux`
 * process per command (CCB polls each pane about 150 times a minute with display-message -p and
 * reads it with capture-pane -p). Ours goes through the launchers `switchboard compat install`
 * writes (the compiled C one, and the Node one it falls back to) to a daemon in its own process.
 */
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DaemonProcess } from './daemon-process.js';
import { percentile, sample, sleep } from './stats.js';

const CLI = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'cli', 'main.js');
/** A listing of every pane, as a tool finds its panes. */
const LIST_FORMAT = '#{pane_id}\t#{session_name}:#{window_index}.#{pane_index}\t#{pane_pid}\t#{pane_dead}\t#{pane_title}';
/** CCB's poll: the pane's state and identity in one display-message. */
const POLL_FORMAT = '#{pane_id}\t#{pane_dead}\t#{pane_title}\t#{pane_pid}\t#{pane_in_mode}\t#{pane_width}\t#{pane_height}\t#{window_zoomed_flag}\t#{session_name}\t#{window_id}\t#{window_name}\t#{@ccb_agent}';

export interface TmuxFrontFigure {
  name: string;
  unit: 'ms';
  ours: number;
  /** tmux's figure; null for a figure of ours alone (a bare Node start). */
  peer: number | null;
}

/**
 * Runs each of `fns` in turn, `n` times after `warmup` rounds; sorted durations in ms per function.
 * Taken in turn, so a busy spell of the machine falls on every side alike.
 */
async function sampleInTurn(n: number, warmup: number, fns: (() => Promise<unknown>)[]): Promise<number[][]> {
  const out = fns.map((): number[] => []);
  for (let i = -warmup; i < n; i++) {
    for (const [k, fn] of fns.entries()) {
      const t0 = performance.now();
      await fn();
      if (i >= 0) out[k]?.push(performance.now() - t0);
    }
  }
  return out.map((d) => d.sort((a, b) => a - b));
}

function run(file: string, args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(file, args, { env, maxBuffer: 64 * 1024 * 1024 }, (err, stdout) => {
      if (err) reject(new Error(`${file} ${args.join(' ')}: ${err.message}`));
      else resolve(stdout);
    });
  });
}

/** Measures display-message -p and capture-pane -p through real tmux and both launchers. */
export async function measureTmuxFrontEnd(samples = 300, warmup = 30): Promise<TmuxFrontFigure[]> {
  const dir = mkdtempSync(path.join(tmpdir(), 'sb-bench-tmux-'));
  const daemon = await DaemonProcess.start();
  const bin = path.join(dir, 'bin');
  const nodeBin = path.join(dir, 'node-bin');
  const cleanEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('SWITCHBOARD_')));
  execFileSync(process.execPath, [CLI, '--home', daemon.home, 'compat', 'install', '--dir', bin], { env: cleanEnv, stdio: 'ignore' });
  execFileSync(process.execPath, [CLI, '--home', daemon.home, 'compat', 'install', '--dir', nodeBin, '--no-compile'], { env: cleanEnv, stdio: 'ignore' });
  // CCB's environment: no Switchboard variables; the launchers find the daemon through the runtime file.
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir, SHELL: '/bin/bash', LANG: 'C.UTF-8', PS1: 'PROMPT$ ' };
  const realSock = path.join(dir, 'real.sock');
  const oursSock = path.join(dir, 'ours.sock');
  const real = (args: string[]): Promise<string> => run('tmux', ['-f', '/dev/null', '-S', realSock, ...args], env);
  const native = (args: string[]): Promise<string> => run(path.join(bin, 'tmux'), ['-S', oursSock, ...args], env);
  const node = (args: string[]): Promise<string> => run(path.join(nodeBin, 'tmux'), ['-S', oursSock, ...args], env);
  const shell = 'bash --norc --noprofile';
  try {
    for (const side of [real, native]) {
      await side(['new-session', '-d', '-x', '120', '-y', '30', '-s', 'bench', '-n', 'main', shell]);
      await side(['set-option', '-p', '-t', '%0', '@ccb_agent', 'codex']);
      // A screen and 120 rows of history to read, the same on both.
      await side(['send-keys', '-t', '%0', 'for i in $(seq 1 200); do echo "line $i of the bench history with some width to it"; done', 'Enter']);
    }
    for (const side of [real, native]) {
      for (let i = 0; i < 200 && !(await side(['capture-pane', '-p', '-t', '%0'])).includes('line 200 of'); i++) await sleep(50);
    }
    const figures: TmuxFrontFigure[] = [];
    const measure = async (label: string, args: string[]): Promise<void> => {
      const [peer = [], c = []] = await sampleInTurn(samples, warmup, [() => real(args), () => native(args)]);
      const n = await sample(Math.max(30, Math.floor(samples / 5)), Math.min(warmup, 10), async () => {
        await node(args);
      });
      for (const q of [50, 99]) {
        figures.push({ name: `tmux front end ${label} p${q} (C launcher)`, unit: 'ms', ours: percentile(c, q), peer: percentile(peer, q) });
        figures.push({ name: `tmux front end ${label} p${q} (Node launcher)`, unit: 'ms', ours: percentile(n, q), peer: percentile(peer, q) });
      }
    };
    await measure('display-message -p', ['display-message', '-p', '-t', '%0', POLL_FORMAT]);
    await measure('capture-pane -p', ['capture-pane', '-p', '-t', '%0']);
    await measure('capture-pane -p -S -120', ['capture-pane', '-p', '-t', '%0', '-S', '-120']);
    await measure('list-panes -F', ['list-panes', '-a', '-F', LIST_FORMAT]);
    // Last, as it types into the shell's line (a letter each time; both shells echo it, as CCB's text is).
    await measure('send-keys', ['send-keys', '-t', '%0', '-l', 'x']);
    // The Node launcher's floor: Node starting and doing nothing.
    const bare = await sample(Math.max(30, Math.floor(samples / 5)), Math.min(warmup, 10), async () => {
      await run(process.execPath, ['-e', '0'], env);
    });
    for (const q of [50, 99]) figures.push({ name: `tmux front end node -e 0 p${q} (a bare Node start)`, unit: 'ms', ours: percentile(bare, q), peer: null });
    // What this harness itself costs a run (execFile from this process: spawn, pipes, exit): `true`,
    // a program that does nothing. Both sides above carry it, so it bounds every ratio.
    const nothing = await sample(samples, warmup, async () => {
      await run('true', [], env);
    });
    for (const q of [50, 99]) figures.push({ name: `tmux front end true p${q} (a process that does nothing)`, unit: 'ms', ours: percentile(nothing, q), peer: null });
    return figures;
  } finally {
    await real(['kill-server']).catch(() => undefined);
    await native(['kill-server']).catch(() => undefined);
    await daemon.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
