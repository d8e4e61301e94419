// Installs the Debian packages the test line and the bench drive, part of the test line only:
// Chromium for the dashboard's browser tests (test/e2e/browser; Playwright's own download fetches a
// binary from outside the registries, Debian's package does not), tmux 3.3 for the differential
// test (test/tmux-differential.test.ts), bubblewrap for the agent pane sandbox
// (test/security/agent-pane-sandbox.test.ts), PostgreSQL for the ledger's tests on a real server
// (test/support/postgres-server.ts starts its own, in a temporary folder; the package's system
// cluster is not used) and nats-server for the cluster's (issue 26). One `apt-get update` for all
// that is missing; nothing when all is there. SWITCHBOARD_CHROMIUM names a Chromium of the user's
// instead.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';

const CHROMIUM_CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser'];

function chromium(): string | undefined {
  const named = process.env.SWITCHBOARD_CHROMIUM;
  if (named !== undefined && existsSync(named)) return `${named} (SWITCHBOARD_CHROMIUM)`;
  return CHROMIUM_CANDIDATES.find((c) => existsSync(c));
}

function tmux(): string | undefined {
  try {
    return execFileSync('tmux', ['-V'], { stdio: ['ignore', 'pipe', 'ignore'] }).toString().trim();
  } catch {
    return undefined;
  }
}

function bubblewrap(): string | undefined {
  try {
    return execFileSync('bwrap', ['--version'], { stdio: ['ignore', 'pipe', 'ignore'] }).toString().trim();
  } catch {
    return undefined;
  }
}

/** Where Debian puts each PostgreSQL major version's programs (what the test harness runs). */
const POSTGRES_LIB = '/usr/lib/postgresql';

function postgresql(): string | undefined {
  const versions = existsSync(POSTGRES_LIB) ? readdirSync(POSTGRES_LIB).filter((v) => existsSync(path.join(POSTGRES_LIB, v, 'bin', 'postgres'))) : [];
  const newest = versions.sort((a, b) => Number(b) - Number(a))[0];
  if (newest === undefined) return undefined;
  try {
    return execFileSync(path.join(POSTGRES_LIB, newest, 'bin', 'postgres'), ['--version'], { stdio: ['ignore', 'pipe', 'ignore'] }).toString().trim();
  } catch {
    return undefined;
  }
}

/**
 * The nats-server the cluster harness runs (test/support/nats-server.ts): Debian puts it in /usr/sbin,
 * which a user's PATH often lacks, so it is looked for there, not on PATH.
 */
const NATS_SERVER = process.env.SWITCHBOARD_NATS_SERVER ?? '/usr/sbin/nats-server';

function natsServer(): string | undefined {
  try {
    return execFileSync(NATS_SERVER, ['--version'], { stdio: ['ignore', 'pipe', 'ignore'] }).toString().trim();
  } catch {
    return undefined;
  }
}

const wanted = [
  { name: 'chromium', found: chromium(), use: 'the browser tests', otherwise: 'set SWITCHBOARD_CHROMIUM to a Chromium binary, or the browser tests will fail' },
  { name: 'tmux', found: tmux(), use: 'the differential test', otherwise: 'install tmux 3.3, or the differential test is skipped' },
  { name: 'bubblewrap', found: bubblewrap(), use: 'the agent pane sandbox test', otherwise: 'install bubblewrap, or the agent pane sandbox test is skipped' },
  { name: 'postgresql', found: postgresql(), use: 'the ledger on PostgreSQL', otherwise: 'install PostgreSQL (its server programs under /usr/lib/postgresql/N/bin), or the ledger tests on PostgreSQL will fail' },
  { name: 'nats-server', found: natsServer(), use: 'the cluster', otherwise: 'install nats-server, or the cluster tests will fail' },
];
for (const w of wanted) if (w.found !== undefined) console.log(`${w.name}: ${w.found}`);
const missing = wanted.filter((w) => w.found === undefined);

if (missing.length > 0) {
  if (process.platform !== 'linux' || !existsSync('/usr/bin/apt-get')) {
    for (const w of missing) console.log(`${w.name}: not found and no apt-get here; ${w.otherwise}`);
  } else {
    console.log(`installing Debian ${missing.map((w) => `${w.name} for ${w.use}`).join(' and ')}`);
    const root = process.getuid?.() === 0;
    const run = (args: string[]): void => {
      execFileSync(root ? (args[0] ?? 'apt-get') : 'sudo', root ? args.slice(1) : args, { stdio: 'inherit', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
    };
    run(['apt-get', 'update']);
    run(['apt-get', 'install', '-y', '--no-install-recommends', ...missing.map((w) => w.name)]);
  }
}
