/**
 * A role's quality gate (issue 24 item 11): its `check` command (such as `npm test`), run by
 * Switchboard through the user's default shell in the worker's folder when the worker says a task
 * is done. Its output (stdout and stderr as they came, the end kept) goes back to the worker when
 * it fails. It has a time limit, and ends with its whole process tree when the run ends.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
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

/** The variable each check's processes carry: what it left running in the background is found by it and ended. */
const CHECK_MARKER = 'SWITCHBOARD_CHECK';

/**
 * Runs `command` in `cwd` with `env`; never rejects (a check that cannot start fails, saying why).
 * An abort ends it; the abort's reason, when it is a string, says why in its output.
 */
export function runCheck(command: string, cwd: string, env: NodeJS.ProcessEnv, signal: AbortSignal, timeoutMs = CHECK_TIMEOUT_MS): Promise<CheckResult> {
  const started = performance.now();
  const marker = { name: CHECK_MARKER, value: randomBytes(8).toString('hex') };
  const line = shellCommandLine(command, env);
  return new Promise((resolve) => {
    let output = '';
    let ended: string | undefined;
    let settled = false;
    const keep = (chunk: Buffer): void => {
      output = (output + chunk.toString('utf8')).slice(-MAX_CHECK_OUTPUT);
    };
    const child = spawn(line.file, line.args, { cwd, env: { ...env, [marker.name]: marker.value }, stdio: ['ignore', 'pipe', 'pipe'], windowsHide: true });
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    const stop = (why: string): void => {
      ended ??= why;
      if (child.pid !== undefined) void terminateProcessTree(child.pid, { graceMs: 2_000, marker });
    };
    const timer = setTimeout(() => stop(`it ran past ${Math.round(timeoutMs / 100) / 10} s and was ended`), timeoutMs);
    const onAbort = (): void => stop(typeof signal.reason === 'string' ? signal.reason : 'it was stopped');
    signal.addEventListener('abort', onAbort, { once: true });
    if (signal.aborted) onAbort();
    const finish = (exitCode: number | null, problem?: string): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      const why = problem ?? ended;
      const text = why === undefined ? output : `${output}${output === '' || output.endsWith('\n') ? '' : '\n'}(${why})\n`;
      resolve({ command, passed: why === undefined && exitCode === 0, exitCode, output: text.slice(-MAX_CHECK_OUTPUT), ms: Math.round(performance.now() - started) });
    };
    child.once('error', (err) => finish(null, `it could not start: ${err.message}`));
    child.once('exit', () => {
      // What it left running in the background would hold its output open (and 'close' back): ended.
      if (child.pid === undefined) return;
      void terminateProcessTree(child.pid, { graceMs: 1_000, marker, rootExited: true }).finally(() => {
        child.stdout.destroy();
        child.stderr.destroy();
      });
    });
    child.once('close', (code) => finish(code));
  });
}
