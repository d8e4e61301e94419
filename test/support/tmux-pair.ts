/**
 * Real tmux and Switchboard's tmux front end side by side: the same command lines, with the same
 * environment and directory, against a private tmux server (`-f /dev/null -S <socket>`) and a
 * namespace of the front end; their answers normalized (socket paths, dates, pids, terminals) so a
 * test can compare them.
 */
import { execFile, execFileSync } from 'node:child_process';
import path from 'node:path';
import { expect } from 'vitest';
import type { SwitchboardClient } from '../../src/client/index.js';
import { sleep } from './shell.js';

export interface TmuxAnswer {
  stdout: string;
  stderr: string;
  exitCode: number;
}

/** tmux's version, or undefined when it is not installed. */
export function realTmuxVersion(): string | undefined {
  try {
    return execFileSync('tmux', ['-V']).toString().trim();
  } catch {
    return undefined;
  }
}

const CTIME = /\b(Mon|Tue|Wed|Thu|Fri|Sat|Sun) (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) [ \d]\d \d\d:\d\d:\d\d \d{4}\b/g;

export class TmuxPair {
  readonly realSocket: string;
  readonly oursSocket: string;

  constructor(
    private readonly client: SwitchboardClient,
    readonly dir: string,
    readonly env: Record<string, string>,
    name: string,
  ) {
    this.realSocket = path.join(dir, `${name}-real.sock`);
    this.oursSocket = path.join(dir, `${name}-ours.sock`);
  }

  /** Runs a command line on real tmux. */
  real(argv: readonly string[], stdin?: string): Promise<TmuxAnswer> {
    return new Promise((resolve) => {
      const child = execFile('tmux', ['-f', '/dev/null', '-S', this.realSocket, ...argv], { cwd: this.dir, env: this.env, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
        const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : 1) : 0;
        resolve({ stdout, stderr, exitCode: code });
      });
      // tmux reads stdin only for load-buffer -: it may close it first.
      child.stdin?.on('error', () => undefined);
      child.stdin?.end(stdin ?? '');
    });
  }

  /** Runs a command line on the front end (the launcher's call, over the daemon's socket). */
  async ours(argv: readonly string[], stdin?: string): Promise<TmuxAnswer> {
    const reply = await this.client.tmuxCommand({ argv: ['-f', '/dev/null', '-S', this.oursSocket, ...argv], env: this.env, cwd: this.dir, tty: false, ...(stdin !== undefined ? { stdin } : {}) });
    return { stdout: reply.stdout, stderr: reply.stderr, exitCode: reply.exit_code };
  }

  /** Replaces what legitimately differs between the two: socket paths, dates, pids, terminal names. */
  normalize(answer: TmuxAnswer, side: 'real' | 'ours'): TmuxAnswer {
    const socket = side === 'real' ? this.realSocket : this.oursSocket;
    const clean = (text: string): string =>
      text
        .split(socket)
        .join('SOCKET')
        .replace(CTIME, 'DATE')
        .replace(/\[pid:\d+\]/g, '[pid:N]')
        .replace(/\[time:\d+\]/g, '[time:N]')
        .replace(/\/dev\/pts\/\d+/g, '/dev/pts/N');
    return { stdout: clean(answer.stdout), stderr: clean(answer.stderr), exitCode: answer.exitCode };
  }

  /** Runs a command line on both and expects the same answer; returns it (normalized). */
  async same(argv: readonly string[], options: { stdin?: string; label?: string } = {}): Promise<TmuxAnswer> {
    const real = this.normalize(await this.real(argv, options.stdin), 'real');
    const ours = this.normalize(await this.ours(argv, options.stdin), 'ours');
    expect(ours, `tmux ${argv.join(' ')}${options.label ? ` (${options.label})` : ''}`).toEqual(real);
    return real;
  }

  /** Polls a command on both sides until its output matches (a program's output has arrived); returns both. */
  async until(argv: readonly string[], test: (stdout: string) => boolean, timeoutMs = 20_000): Promise<{ real: TmuxAnswer; ours: TmuxAnswer }> {
    const deadline = Date.now() + timeoutMs;
    let real = await this.real(argv);
    let ours = await this.ours(argv);
    while (!(test(real.stdout) && test(ours.stdout))) {
      if (Date.now() > deadline) throw new Error(`never matched: tmux ${argv.join(' ')}\nreal:\n${real.stdout}${real.stderr}\nours:\n${ours.stdout}${ours.stderr}`);
      await sleep(50);
      if (!test(real.stdout)) real = await this.real(argv);
      if (!test(ours.stdout)) ours = await this.ours(argv);
    }
    return { real: this.normalize(real, 'real'), ours: this.normalize(ours, 'ours') };
  }

  /** Polls a command on real tmux alone until its output matches; whether it did within the time. */
  async untilReal(argv: readonly string[], test: (stdout: string) => boolean, timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (!test((await this.real(argv)).stdout)) {
      if (Date.now() > deadline) return false;
      await sleep(50);
    }
    return true;
  }

  /** Ends both servers (and anything real tmux left running). */
  async stop(): Promise<void> {
    await this.real(['kill-server']);
    await this.ours(['kill-server']);
  }
}
