import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

/** The built CLI (the test line builds before it runs the tests). */
export const CLI = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'dist', 'cli', 'main.js');

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `switchboard --home HOME args...` to completion. */
export function runCli(home: string, args: string[], options: { input?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): Promise<CliResult> {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run npm run build first`);
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [CLI, '--home', home, ...args],
      { env: options.env ?? cleanEnv(), timeout: options.timeoutMs ?? 60_000 },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
    if (options.input !== undefined) child.stdin?.end(options.input);
    else child.stdin?.end();
  });
}

/** Starts `switchboard --home HOME args...` and leaves it running. */
export function spawnCli(home: string, args: string[]): ChildProcess {
  return spawn(process.execPath, [CLI, '--home', home, ...args], { env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
}

/**
 * This process's environment without any Switchboard variables a surrounding pane may have set;
 * the test run's own marker stays (global-setup.ts: what this run starts is known by it).
 */
export function cleanEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([key]) => key === 'SWITCHBOARD_TEST_RUN' || (!key.startsWith('SWITCHBOARD_') && !key.startsWith('ENSO_RPC_'))));
}
