// Installs the real agent CLIs the end-to-end tests drive (test/agent-clis), pinned by its lockfile.
// Part of the test line only: a user installing Switchboard never downloads them. Skips the install
// when the installed versions already match the pins.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'test', 'agent-clis');
// The CLIs, and the plugin package OpenCode would otherwise fetch from the registry at start.
const dirs = [root, path.join(root, 'opencode-plugin')];

function readJson(file: string): Record<string, unknown> {
  return JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
}

function installedVersion(dir: string, name: string): unknown {
  const file = path.join(dir, 'node_modules', ...name.split('/'), 'package.json');
  return existsSync(file) ? readJson(file).version : undefined;
}

for (const dir of dirs) {
  const wanted = readJson(path.join(dir, 'package.json')).dependencies as Record<string, string>;
  const pins = Object.entries(wanted).map(([n, v]) => `${n}@${v}`).join(', ');
  const stale = Object.entries(wanted).filter(([name, version]) => installedVersion(dir, name) !== version);
  if (stale.length === 0) {
    console.log(`up to date: ${pins}`);
    continue;
  }
  console.log(`installing for the end-to-end tests: ${pins}`);
  // Not `npm ci`: the lockfile can only list the platform packages the registry serves (OpenCode's
  // and msgpackr's other-OS binaries are absent from ours), and `npm ci` refuses a lockfile that
  // lacks an optional dependency. `npm install --no-save` installs exactly the locked versions
  // and leaves the lockfile untouched.
  // npm is a .cmd shim on Windows, which Node only runs through a shell.
  const windows = process.platform === 'win32';
  const args = ['install', '--no-save', '--no-audit', '--no-fund'];
  // npm trusts its hidden lockfile over what is on disk: one that already names the new pins (left
  // by a lockfile-only update) makes it report "up to date" and keep the old package.
  rmSync(path.join(dir, 'node_modules', '.package-lock.json'), { force: true });
  execFileSync(windows ? 'npm.cmd' : 'npm', args, { cwd: dir, stdio: 'inherit', shell: windows });
}
