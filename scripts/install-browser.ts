// Installs Debian's Chromium for the dashboard's browser tests (test/browser), part of the test line
// only. Playwright's own browser download cannot work here (it fetches a binary from outside the
// registries); Debian's package can. Skipped when a Chromium is already there, or when
// SWITCHBOARD_CHROMIUM names one.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser'];
const named = process.env.SWITCHBOARD_CHROMIUM;

if (named !== undefined && existsSync(named)) {
  console.log(`chromium: ${named} (SWITCHBOARD_CHROMIUM)`);
} else if (CANDIDATES.some((c) => existsSync(c))) {
  console.log(`chromium: ${CANDIDATES.find((c) => existsSync(c)) ?? ''}`);
} else if (process.platform !== 'linux' || !existsSync('/usr/bin/apt-get')) {
  console.log('chromium: not found and no apt-get here; set SWITCHBOARD_CHROMIUM to a Chromium binary, or the browser tests will fail');
} else {
  console.log('installing Debian chromium for the browser tests');
  const root = process.getuid?.() === 0;
  const run = (args: string[]): void => {
    execFileSync(root ? args[0] ?? 'apt-get' : 'sudo', root ? args.slice(1) : args, { stdio: 'inherit', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
  };
  run(['apt-get', 'update']);
  run(['apt-get', 'install', '-y', '--no-install-recommends', 'chromium']);
}
