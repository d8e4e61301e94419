// Installs Debian's tmux for the differential test (test/tmux-differential.test.ts) and the bench,
// part of the test line only: the front end is checked against the real tmux 3.3. Skipped when a
// tmux is already there.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

function installed(): string | undefined {
  try {
    return execFileSync('tmux', ['-V']).toString().trim();
  } catch {
    return undefined;
  }
}

const present = installed();
if (present !== undefined) {
  console.log(`tmux: ${present}`);
} else if (process.platform !== 'linux' || !existsSync('/usr/bin/apt-get')) {
  console.log('tmux: not found and no apt-get here; install tmux 3.3, or the differential test is skipped');
} else {
  console.log('installing Debian tmux for the differential test');
  const root = process.getuid?.() === 0;
  const run = (args: string[]): void => {
    execFileSync(root ? args[0] ?? 'apt-get' : 'sudo', root ? args.slice(1) : args, { stdio: 'inherit', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
  };
  run(['apt-get', 'update']);
  run(['apt-get', 'install', '-y', '--no-install-recommends', 'tmux']);
}
