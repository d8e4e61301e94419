/**
 * One agent CLI process as the session drivers run it: started in its own process group with a
 * marker variable (so that ending it ends everything it started, even what left its group), stdout
 * read line by line, the end of stderr kept for error reports, and stdin written a line at a time
 * without ever throwing: a CLI that died turns a write into `false`, never into an EPIPE crash.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { isWindows, terminateProcessTree, type EnvMarker } from '../platform/index.js';

export interface AgentProcessOptions {
  binary: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  /** Carried by the process and everything it starts; `terminate` ends whatever still has it. */
  marker: EnvMarker;
  /** Keep stdin open for writing (stream-json input); otherwise the CLI gets a closed stdin. */
  input: boolean;
  /** Each complete line of stdout, without its line ending (the last one even without a newline). */
  onLine: (line: string) => void;
}

/** How the process ended; `error` when it could not be started at all. */
export interface ProcessExit {
  code: number | null;
  signal: string | null;
  error?: Error;
}

const STDERR_TAIL_CHARS = 4_096;

/** How a process ended, for a sentence that starts with its name: "claude exited with code 1". */
export function describeExit(exit: ProcessExit): string {
  if (exit.error) return `could not be started (${exit.error.message})`;
  return exit.signal ? `was ended by ${exit.signal}` : `exited with code ${String(exit.code)}`;
}

/** The end of what a process wrote to stderr, to append to an error message ('' when it wrote nothing). */
export function stderrSuffix(stderr: string): string {
  const text = stderr.trim();
  return text === '' ? '' : `; stderr: ${text.slice(-1_000)}`;
}
/**
 * After the process exits, how long to wait for its stdout to drain. Not forever: a grandchild
 * that inherited stdout (a background command) can hold the pipe open long after the CLI is gone.
 */
const DRAIN_AFTER_EXIT_MS = 1_000;
const INPUT_LOST_GRACE_MS = 2_000;

export class AgentProcess {
  /** Resolves once the process has exited and its stdout has been read (never rejects). */
  readonly exited: Promise<ProcessExit>;
  private readonly child: ChildProcess;
  private ended: ProcessExit | undefined;
  private stderr = '';
  private partial = '';
  private inputBroken = false;
  /** The terminations begun so far, chained (see `terminated`). */
  private ending: Promise<void> = Promise.resolve();

  constructor(private readonly options: AgentProcessOptions) {
    const { binary, args, cwd, env, marker, input } = options;
    // PWD too: some CLIs take their project folder from $PWD rather than from the process's cwd.
    // Detached: its own process group, so that ending the session ends everything the CLI started.
    this.child = spawn(binary, args, { cwd, env: { ...env, PWD: cwd, [marker.name]: marker.value }, stdio: [input ? 'pipe' : 'ignore', 'pipe', 'pipe'], detached: !isWindows, windowsHide: true });
    // EPIPE and friends arrive here when the CLI is gone or stopped reading; writeLine reports
    // them as `false`.
    this.child.stdin?.on('error', () => this.loseInput());
    this.child.stdout?.setEncoding('utf8').on('data', (chunk: string) => this.read(chunk));
    this.child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      this.stderr = (this.stderr + chunk).slice(-STDERR_TAIL_CHARS);
    });
    this.exited = new Promise<ProcessExit>((resolve) => {
      const finish = (exit: ProcessExit): void => {
        if (this.ended) return;
        if (this.partial !== '') this.deliver(this.partial);
        this.partial = '';
        this.ended = exit;
        resolve(exit);
      };
      this.child.once('error', (error) => finish({ code: null, signal: null, error }));
      this.child.once('exit', (code, signal) => {
        const timer = setTimeout(() => finish({ code, signal }), DRAIN_AFTER_EXIT_MS);
        this.child.once('close', () => {
          clearTimeout(timer);
          finish({ code, signal });
        });
      });
    });
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** True until the process has exited (or failed to start). */
  get running(): boolean {
    return this.ended === undefined && this.child.exitCode === null && this.child.signalCode === null && this.child.pid !== undefined;
  }

  /** True once a write to stdin failed: the CLI stopped reading (and is being ended for it). */
  get inputLost(): boolean {
    return this.inputBroken;
  }

  /** The end of what the CLI wrote to stderr. */
  get stderrTail(): string {
    return this.stderr;
  }

  /** Writes one line to stdin; false when the CLI can no longer read it (exited, pipe broken). */
  writeLine(line: string): boolean {
    const stdin = this.child.stdin;
    if (!stdin || !this.running || this.inputBroken || stdin.destroyed || stdin.writableEnded) return false;
    try {
      stdin.write(`${line}\n`, (err) => {
        if (err) this.loseInput();
      });
      return true;
    } catch {
      this.loseInput();
      return false;
    }
  }

  /** Closes stdin: a stream-json CLI ends its session when its input ends. */
  endInput(): void {
    const stdin = this.child.stdin;
    if (stdin && !stdin.destroyed && !stdin.writableEnded) stdin.end();
  }

  /**
   * Ends the process tree (HUP and TERM, KILL after `graceMs`) and whatever else carries the
   * marker, then waits for the exit. Safe after the process has exited: the marker still finds
   * what it left behind.
   */
  async terminate(graceMs: number): Promise<ProcessExit> {
    const pid = this.child.pid;
    if (pid !== undefined) {
      // Best effort: a process that cannot be looked at or signalled is not ours to end.
      const ending = terminateProcessTree(pid, { graceMs, marker: this.options.marker, rootExited: !this.running }).then(
        () => undefined,
        () => undefined,
      );
      const before = this.ending;
      this.ending = before.then(() => ending);
      await ending;
    }
    return this.exited;
  }

  /**
   * Resolves once every `terminate` begun so far is over, its last look for the marker included.
   * A session starts its next process with the same marker only after this: started sooner, the
   * new process is found by that last look and killed with the old one's leftovers.
   */
  get terminated(): Promise<void> {
    return this.ending;
  }

  /**
   * A CLI that can no longer be written to can never be given another prompt, and would leave the
   * turn under way waiting forever: it is ended, and its exit tells the session why.
   */
  private loseInput(): void {
    if (this.inputBroken) return;
    this.inputBroken = true;
    void this.terminate(INPUT_LOST_GRACE_MS);
  }

  private read(chunk: string): void {
    const lines = (this.partial + chunk).split('\n');
    this.partial = lines.pop() ?? '';
    for (const line of lines) this.deliver(line);
  }

  private deliver(line: string): void {
    const text = line.replace(/\r$/, '');
    try {
      this.options.onLine(text);
    } catch {
      // A reader's bug must not take the pipe (and the host process) down with it.
    }
  }
}
