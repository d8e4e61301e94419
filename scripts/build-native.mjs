// Builds Switchboard's native helper (native/: close-on-exec for PTY descriptors) with node-gyp, as
// npm builds node-pty. Plain JavaScript: it runs at install time, before any dev tool is there.
// Windows has no descriptors to mark (node-pty hands ConPTY handles to its own helper), so nothing
// is built there. A failed build is reported and does not fail the install: the daemon then says
// at start that PTY descriptors stay inheritable.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');

if (process.platform === 'win32') {
  console.log('switchboard native helper: not needed on Windows');
  process.exit(0);
}
const gyp = process.env.npm_config_node_gyp;
const [command, args] = gyp ? [process.execPath, [gyp]] : ['node-gyp', []];
const result = spawnSync(command, [...args, 'rebuild', `--directory=${path.join(root, 'native')}`], { stdio: 'inherit' });
if (result.status !== 0) {
  console.warn('switchboard native helper: the build failed (a C compiler, make and python3 are needed, as for node-pty);');
  console.warn('without it, every program the daemon starts inherits the terminals of the panes before it.');
}
