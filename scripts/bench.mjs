// `npm run bench [-- section ...]`: the build, the pinned agent CLIs and Debian packages, then
// bench/run.ts, everything with its own temporary folder (TMPDIR, and TMUX_TMPDIR for tmux's
// sockets), removed afterwards. Agent CLIs unpack native libraries, sockets and scratch folders into
// their temporary folder; the system's keeps none of it.
import { spawn } from 'node:child_process';
import { onInterrupt, runSideBySide, STEPS, stepsTempFolder, tsxScript } from './test-steps.mjs';

const temp = stepsTempFolder();
let bench;
onInterrupt(() => {
  bench?.kill('SIGTERM');
  temp.remove();
});
const env = { ...temp.env, TMUX_TMPDIR: temp.dir, TSX_DISABLE_CACHE: '1' };
const prepared = await runSideBySide([[['build', STEPS.build()]], [['agent CLIs', STEPS.agentClis()], ['Debian packages', STEPS.debianPackages()]]], env);
if (prepared.some((r) => !r.ok)) {
  temp.remove();
  process.exit(1);
}
const [program, ...args] = tsxScript('bench/run.ts', process.argv.slice(2), ['--expose-gc']);
bench = spawn(program, args, { stdio: 'inherit', env: { ...process.env, ...env } });
const code = await new Promise((resolve) => bench.once('exit', (c, signal) => resolve(c ?? (signal ? 1 : 0))));
temp.remove();
process.exit(code);
