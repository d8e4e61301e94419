/**
 * A node run in a terminal: git's own prompt is off, but ssh under git opened the terminal to ask
 * for a host key or a passphrase, and waited there for nobody. git now runs with no controlling
 * terminal, so ssh cannot open one (and takes the user's askpass program, or fails at once).
 */
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawn as spawnPty } from 'node-pty';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanEnv } from './support/cli.js';
import { tempDir } from './support/shell.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const work = tempDir('sb-git-tty-');
afterAll(() => work.cleanup());

/** A stand-in for ssh that writes whether it could open /dev/tty, and fails as a refused connection would. */
function fakeSsh(report: string): string {
  const script = path.join(work.dir, `ssh-${path.basename(report, '.txt')}.sh`);
  // `true`, not `:`: a failed redirection of a special built-in ends a POSIX shell.
  writeFileSync(script, `#!/bin/sh\nif { true < /dev/tty; } 2>/dev/null; then echo opened > '${report}'; else echo 'no terminal' > '${report}'; fi\nexit 255\n`);
  chmodSync(script, 0o755);
  return script;
}

/** Runs `file` in a pseudo-terminal (its controlling terminal) to its end, in the project's folder (where `--import tsx` finds tsx): what it printed. */
function inTerminal(file: string, args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve) => {
    const pty = spawnPty(file, args, { cols: 100, rows: 20, cwd: root, env });
    let output = '';
    pty.onData((data) => (output += data));
    pty.onExit(() => resolve(output));
  });
}

describe.runIf(process.platform !== 'win32')('git run by Switchboard in a terminal', () => {
  it('starts ssh with no terminal to open, where git run plainly in the same terminal gives it one', async () => {
    // The plain way, as the node ran git before: ssh opens the terminal.
    const plain = path.join(work.dir, 'plain.txt');
    await inTerminal('git', ['ls-remote', 'ssh://git.example.invalid/repo.git'], { ...cleanEnv(), GIT_TERMINAL_PROMPT: '0', GIT_SSH_COMMAND: fakeSsh(plain), GIT_SSH_VARIANT: 'ssh' });
    expect(readFileSync(plain, 'utf8').trim()).toBe('opened');

    // Switchboard's git from a process in the same kind of terminal: ssh has none; git fails, saying so.
    const ours = path.join(work.dir, 'ours.txt');
    const output = await inTerminal(process.execPath, ['--import', 'tsx', path.join(root, 'test', 'support', 'git-on-a-terminal.ts'), work.dir, fakeSsh(ours)], cleanEnv());
    expect(output).toContain('git: CONFLICT');
    expect(readFileSync(ours, 'utf8').trim()).toBe('no terminal');
  });
});
