/**
 * A program run to its end with no terminal to ask on, and ended whole.
 *
 * A program started the usual way shares the daemon's controlling terminal when the daemon runs in
 * one, and anything it starts can open /dev/tty and wait there for a person who is not watching:
 * ssh under git asks there for a host key or a key's passphrase whatever git's own prompt setting
 * says. On POSIX the program is spawned detached, which puts it in a session of its own (setsid):
 * a session has no controlling terminal until its leader opens one, so /dev/tty cannot be opened
 * by it or by anything it starts. ssh then takes the user's askpass program where one is set up
 * (SSH_ASKPASS with a display, or SSH_ASKPASS_REQUIRE=force) and fails at once otherwise, which is
 * what a daemon wants; nothing of the user's ssh configuration is overridden.
 *
 * Past its time, or when its signal aborts, the program's whole process group is ended, not the
 * program alone: ssh under git holds git's output pipes, and ending git alone left ssh behind,
 * waiting on the terminal, with the call waiting for the pipes to close.
 *
 * On Windows `detached` means a console of its own, not a new session: the program is started
 * hidden (windowsHide), not detached, and its tree is ended by taskkill.
 */
import { spawn } from 'node:child_process';
import { killProcessGroupNow, terminateProcessTree } from './processes.js';

const isWindows = process.platform === 'win32';

/** Between the polite end of a group (TERM: git removes its lock files then) and KILL to what is left of it. */
const KILL_GRACE_MS = 2_000;
/**
 * How long the pipes of a program that exited on its own may stay open: a process it started in a
 * session of its own may hold them (a helper that went to the background) and is not waited for.
 */
const PIPES_AFTER_EXIT_MS = 2_000;

export interface NoTerminalOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Ended past this long (`timed_out`). */
  timeoutMs: number;
  /** The most bytes of stdout, and of stderr, kept: past it the program is ended (`output_limit`) and what came is kept. */
  maxOutputBytes: number;
  /** Ends the program (`aborted`) when it aborts. */
  signal?: AbortSignal;
}

/** How a program run without a terminal ended: on its own, ended here (and why), or never started. */
export type NoTerminalOutcome =
  | { end: 'exited'; code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }
  | { end: 'timed_out' | 'aborted' | 'output_limit'; stdout: string; stderr: string }
  | { end: 'not_started'; error: NodeJS.ErrnoException };

/** Process groups of programs still running, ended when this process exits (in its own session, nothing else would end them). */
const running = new Set<number>();
let endAtExit = false;

/**
 * Runs `file` with `args` (no shell) in a session of its own, with no controlling terminal, and
 * resolves once it has ended and its output pipes have closed; see the module's comment.
 */
export function runWithoutTerminal(file: string, args: readonly string[], options: NoTerminalOptions): Promise<NoTerminalOutcome> {
  if (options.signal?.aborted === true) return Promise.resolve({ end: 'aborted', stdout: '', stderr: '' });
  return new Promise((resolve) => {
    const child = spawn(file, args, { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'], detached: !isWindows, windowsHide: true });
    const stdout = new Output(options.maxOutputBytes);
    const stderr = new Output(options.maxOutputBytes);
    let endedHere: 'timed_out' | 'aborted' | 'output_limit' | undefined;
    let exited = false;
    let pipesTimer: NodeJS.Timeout | undefined;
    // The program gone: a process that left its group (a helper that made a session of its own) may
    // still hold its pipes, and is not waited for. Its output so far is kept.
    const destroyPipes = (): void => {
      child.stdout.destroy();
      child.stderr.destroy();
    };
    const letGoOfPipes = (): void => {
      if (endedHere === undefined || !exited) return;
      destroyPipes();
    };
    const endHere = (why: 'timed_out' | 'aborted' | 'output_limit'): void => {
      if (endedHere !== undefined || child.pid === undefined) return;
      endedHere = why;
      endGroup(child.pid);
      letGoOfPipes();
    };
    const timer = setTimeout(() => endHere('timed_out'), options.timeoutMs);
    const onAbort = (): void => endHere('aborted');
    options.signal?.addEventListener('abort', onAbort, { once: true });
    const settle = (outcome: NoTerminalOutcome): void => {
      clearTimeout(timer);
      clearTimeout(pipesTimer);
      options.signal?.removeEventListener('abort', onAbort);
      if (child.pid !== undefined) running.delete(child.pid);
      resolve(outcome);
    };
    if (child.pid !== undefined) watchAtExit(child.pid);
    child.stdout.on('data', (chunk: Buffer) => {
      if (!stdout.take(chunk)) endHere('output_limit');
    });
    child.stderr.on('data', (chunk: Buffer) => {
      if (!stderr.take(chunk)) endHere('output_limit');
    });
    // Every error heard (one not listened for would end this process); only a program that never started ends here.
    child.on('error', (error: NodeJS.ErrnoException) => {
      if (child.pid === undefined) settle({ end: 'not_started', error });
    });
    child.once('exit', () => {
      exited = true;
      letGoOfPipes();
      // Exited on its own: what it wrote is in the pipes by now, and comes within the grace (read
      // in one more turn of the loop first: a loop that was busy runs its timers before its reads).
      if (endedHere === undefined) pipesTimer = setTimeout(() => setImmediate(destroyPipes), PIPES_AFTER_EXIT_MS);
    });
    // After every pipe has closed: a process of the group that still held one is gone by then.
    child.once('close', (code: number | null, signal: NodeJS.Signals | null) => {
      if (child.pid === undefined) return;
      const out = { stdout: stdout.text(), stderr: stderr.text() };
      settle(endedHere !== undefined ? { end: endedHere, ...out } : { end: 'exited', code, signal, ...out });
    });
  });
}

/**
 * Ends the process group led by `pid`: TERM now, KILL after KILL_GRACE_MS to what ignored it, even
 * once the program's pipes have closed (a process that ignores TERM may have let go of them). The
 * group id stays the program's while any process of the group lives, so no other process is
 * signalled this way. On Windows, taskkill ends the tree at once.
 */
function endGroup(pid: number): void {
  if (isWindows) {
    void terminateProcessTree(pid, { graceMs: 0 });
    return;
  }
  signalGroup(pid, 'SIGTERM');
  setTimeout(() => signalGroup(pid, 'SIGKILL'), KILL_GRACE_MS).unref();
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // Gone already.
  }
}

/** Ends what is still running of `pid`'s group when this process exits: detached, it would outlive the daemon (a fetch going on for minutes, ssh waiting). */
function watchAtExit(pid: number): void {
  running.add(pid);
  if (endAtExit) return;
  endAtExit = true;
  process.once('exit', () => {
    for (const group of running) {
      if (isWindows) killProcessGroupNow(group);
      else signalGroup(group, 'SIGTERM');
    }
  });
}

/** A stream's bytes, up to a limit: the rest is dropped. */
class Output {
  private readonly chunks: Buffer[] = [];
  private bytes = 0;

  constructor(private readonly limit: number) {}

  /** Keeps what fits of `chunk`: false once the limit is passed. */
  take(chunk: Buffer): boolean {
    const room = this.limit - this.bytes;
    if (room <= 0) return chunk.length === 0;
    const kept = chunk.length > room ? chunk.subarray(0, room) : chunk;
    this.chunks.push(kept);
    this.bytes += kept.length;
    return kept.length === chunk.length;
  }

  text(): string {
    return Buffer.concat(this.chunks).toString('utf8');
  }
}
