/**
 * A role's quality gate (issue 24 item 11): its `check` command (such as `npm test`), run by
 * Switchboard through the user's default shell in the worker's folder when the worker says a task
 * is done. Its output (stdout and stderr as they came, the end kept) goes back to the worker when
 * it fails. It has a time limit, and ends with its whole process tree when the run ends.
 */
import { spawn } from 'node:child_process';
import { shellCommandLine, terminateProcessTree } from '../platform/index.js';

export interface CheckResult {
  command: string;
  passed: boolean;
  /** Its exit code; null when a signal or the time limit ended it. */
  exitCode: number | null;
  /** The end of what it printed (at most MAX_CHECK_OUTPUT characters). */
  output: string;
  ms: number;
}

/** Past this, a check is ended and fails. */
const CHECK_TIMEOUT_MS = 10 * 60_000;
const MAX_CHECK_OUTPUT = 8_000;

/** Runs `command` in `cwd` with `env`; never rejects (a check that cannot start fails, saying why). */
export function runCheck(command: string, cwd: string, env: NodeJS.ProcessEnv, signal: AbortSignal, timeoutMs = CHECK_TIMEOUT_MS): Promise<CheckResult> {
  const started = performance.now();
  const line = shellCommandLine(command, env);
  return new Promise((resolve) => {
    let output = '';
    let ended: string | undefined;
    const keep = (chunk: Buffer): void => {
      output = (output + chunk.toString('utf8')).slice(-MAX_CHECK_OUTPUT);
    };
    const child = spawn(line.file, line.args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], windowsHide: true });
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    const stop = (why: string): void => {
      ended ??= why;
      if (child.pid !== undefined) void terminateProcessTree(child.pid, { graceMs: 2_000 });
    };
    const timer = setTimeout(() => stop(`it ran past ${Math.round(timeoutMs / 100) / 10} s and was ended`), timeoutMs);
    const onAbort = (): void => stop('the run ended while it ran');
    signal.addEventListener('abort', onAbort, { once: true });
    if (signal.aborted) onAbort();
    const finish = (exitCode: number | null, problem?: string): void => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      const why = problem ?? ended;
      const text = why === undefined ? output : `${output}${output === '' || output.endsWith('\n') ? '' : '\n'}(${why})\n`;
      resolve({ command, passed: why === undefined && exitCode === 0, exitCode, output: text.slice(-MAX_CHECK_OUTPUT), ms: Math.round(performance.now() - started) });
    };
    child.once('error', (err) => finish(null, `it could not start: ${err.message}`));
    child.once('close', (code) => finish(code));
  });
}
