import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isProcessRunning, listProcesses } from '../platform/index.js';
import { until } from '../../test/support/processes.js';
import { git } from './run-git.js';

const scratch = mkdtempSync(path.join(tmpdir(), 'sb-run-git-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/**
 * A stand-in for ssh that does what the real one does when it wants a host key confirmed or a
 * passphrase: opens /dev/tty, and otherwise waits (here with a child of its own, as ssh waiting on
 * a prompt holds git's pipes). It writes whether it could open the terminal, then its pid and its
 * child's, each file whole (written aside, then moved).
 */
function fakeSsh(folder: string): string {
  const script = path.join(folder, 'fake-ssh.sh');
  writeFileSync(
    script,
    [
      '#!/bin/sh',
      `dir='${folder}'`,
      // `true`, not `:`: a failed redirection of a special built-in ends a POSIX shell.
      'if { true < /dev/tty; } 2>/dev/null; then echo opened > "$dir/tty.tmp"; else echo "no terminal" > "$dir/tty.tmp"; fi',
      'mv "$dir/tty.tmp" "$dir/tty.txt"',
      'sleep 600 &',
      'echo $! > "$dir/child.tmp" && mv "$dir/child.tmp" "$dir/child.pid"',
      'echo $$ > "$dir/ssh.tmp" && mv "$dir/ssh.tmp" "$dir/ssh.pid"',
      'wait',
      '',
    ].join('\n'),
  );
  chmodSync(script, 0o755);
  return script;
}

/** git asked for an ssh remote, with the stand-in as its ssh (GIT_SSH_VARIANT: git does not probe it with -G first). */
const sshEnv = (script: string): NodeJS.ProcessEnv => ({ ...process.env, GIT_SSH_COMMAND: script, GIT_SSH_VARIANT: 'ssh' });

const pidIn = (file: string): number => Number(readFileSync(file, 'utf8').trim());

/**
 * Waits until none of `pids` runs. A zombie counts as gone: an orphan is reaped by whatever adopts
 * it, and some containers' first process never reaps (process.kill(pid, 0) succeeds on a zombie).
 */
const untilGone = (pids: number[]): Promise<void> => until(() => pids.every((pid) => !isProcessRunning(pid)), `processes ${pids.join(', ')} to end`);

describe.skipIf(process.platform === 'win32')('git run with no terminal', () => {
  it('starts ssh in a session of its own, where it cannot open a terminal, and a stop ends ssh and its child with git', async () => {
    const folder = mkdtempSync(path.join(scratch, 'stopped-'));
    const stop = new AbortController();
    const call = git(folder, ['ls-remote', 'ssh://git.example.invalid/repo.git'], { env: sshEnv(fakeSsh(folder)), signal: stop.signal });
    // Caught now, looked at once stopped: a rejection nobody holds would be reported as unhandled.
    const ended = call.catch((err: unknown) => err);
    await until(() => existsSync(path.join(folder, 'ssh.pid')), 'the stand-in for ssh to start');
    const ssh = pidIn(path.join(folder, 'ssh.pid'));
    const child = pidIn(path.join(folder, 'child.pid'));
    expect(readFileSync(path.join(folder, 'tty.txt'), 'utf8').trim()).toBe('no terminal');
    // Not this process's session (a terminal of ours, if it has one, is not ssh's), and not a session of ssh's own making.
    const sessionOf = (pid: number): number | undefined => listProcesses().find((p) => p.pid === pid)?.sid;
    expect(sessionOf(ssh)).toBeDefined();
    expect(sessionOf(ssh)).not.toBe(sessionOf(process.pid));
    expect(sessionOf(ssh)).not.toBe(ssh);

    stop.abort();
    expect(await ended).toMatchObject({ code: 'SHUTTING_DOWN' });
    await untilGone([ssh, child]);
  });

  it('past its time ends ssh and its child with git: TIMEOUT, nothing of it left', async () => {
    const folder = mkdtempSync(path.join(scratch, 'timed-out-'));
    // Long enough for git to start its ssh on a loaded machine; the stand-in itself never ends.
    await expect(git(folder, ['ls-remote', 'ssh://git.example.invalid/repo.git'], { env: sshEnv(fakeSsh(folder)), timeoutMs: 3_000 })).rejects.toMatchObject({ code: 'TIMEOUT' });
    expect(readFileSync(path.join(folder, 'tty.txt'), 'utf8').trim()).toBe('no terminal');
    await untilGone([pidIn(path.join(folder, 'ssh.pid')), pidIn(path.join(folder, 'child.pid'))]);
  });

  it('keeps what it was given of a long output when told to cut it, and says git failed otherwise', async () => {
    const folder = mkdtempSync(path.join(scratch, 'output-'));
    await git(folder, ['init', '--quiet']);
    expect(await git(folder, ['version'], { maxBuffer: 5, truncate: true })).toBe('git v');
    await expect(git(folder, ['version'], { maxBuffer: 5 })).rejects.toMatchObject({ code: 'CONFLICT', message: expect.stringContaining('more than 5 bytes') as unknown });
    await expect(git(folder, ['rev-parse', '--verify', 'no-such-ref'])).rejects.toMatchObject({ code: 'CONFLICT', message: expect.stringContaining('git rev-parse failed') as unknown });
    // A folder that is not there is said so, not taken for git not being installed.
    await expect(git(path.join(folder, 'gone'), ['status'])).rejects.toMatchObject({ code: 'INVALID_PARAMS', message: expect.stringContaining('is not there') as unknown });
  });
});
