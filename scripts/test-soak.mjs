// `npm run test:soak -- N`: the process and end-to-end tests N times in a row with two busy loops
// on the cores (CI's machine may be busy), then, per test, in how many rounds it failed. A test
// that depends on timing shows up here before it costs a CI run. Options: --busy K (busy loops,
// default 2), and after `--`, arguments for vitest (a file or a -t filter).
// Each round's JSON report is kept in test-artifacts/soak/, with a summary.json of the table.
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { onInterrupt, packageBin, root, runCommands, runSideBySide, STEPS, stepsTempFolder } from './test-steps.mjs';

const argv = process.argv.slice(2);
const split = argv.indexOf('--');
const own = split === -1 ? argv : argv.slice(0, split);
const vitestArgs = split === -1 ? [] : argv.slice(split + 1);
const busyAt = own.indexOf('--busy');
const busy = busyAt === -1 ? 2 : Number(own[busyAt + 1]);
const positional = busyAt === -1 ? own : [...own.slice(0, busyAt), ...own.slice(busyAt + 2)];
const rounds = Number(positional[0] ?? '3');
if (positional.length > 1 || !Number.isInteger(rounds) || rounds < 1 || !Number.isInteger(busy) || busy < 0) {
  console.error('usage: npm run test:soak -- [N] [--busy K] [-- vitest args]   (N rounds, default 3; K busy loops, default 2)');
  process.exit(64);
}

const outDir = path.join(root, 'test-artifacts', 'soak');
rmSync(outDir, { recursive: true, force: true });
mkdirSync(outDir, { recursive: true });

const temp = stepsTempFolder();
// Ctrl-C or a cancel ends what runs (the steps, a round, the busy loops) and leaves no folder.
const loops = [];
onInterrupt(() => {
  for (const loop of loops) loop.kill('SIGKILL');
  temp.remove();
});
const prepared = await runSideBySide([[['build', STEPS.build()]], [['agent CLIs', STEPS.agentClis()], ['Debian packages', STEPS.debianPackages()]]], temp.env);
temp.remove();
if (prepared.some((r) => !r.ok)) process.exit(1);

// Busy loops: plain Node processes spinning, one per core they should take.
for (let i = 0; i < busy; i++) loops.push(spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }));
const stopLoops = () => {
  for (const loop of loops) loop.kill('SIGKILL');
};
process.once('exit', stopLoops);

/** test id -> { runs, failures, messages } */
const byTest = new Map();
const roundTimes = [];
for (let round = 1; round <= rounds; round++) {
  const report = path.join(outDir, `round-${round}.json`);
  console.log(`\n── soak round ${round} of ${rounds}, ${busy} busy loop${busy === 1 ? '' : 's'}`);
  const result = await runCommands(`round ${round}`, packageBin('vitest', 'vitest', ['run', '--project', 'process', '--project', 'e2e', '--reporter=dot', '--reporter=json', `--outputFile.json=${report}`, ...vitestArgs]));
  roundTimes.push(result.seconds);
  // What no test's result says (the teardown's leak and leftover checks, a crash) is the run's own.
  const run = byTest.get('(the run)') ?? { runs: 0, failures: 0, messages: [] };
  run.runs += 1;
  byTest.set('(the run)', run);
  let files;
  try {
    files = JSON.parse(readFileSync(report, 'utf8')).testResults;
  } catch (err) {
    run.failures += 1;
    run.messages.push(`round ${round}: no report (${err.message}); vitest exited ${result.code}`);
    continue;
  }
  const testsFailed = files.some((f) => f.status === 'failed');
  if (result.code !== 0 && !testsFailed) {
    run.failures += 1;
    run.messages.push(`round ${round}: vitest exited ${result.code} with every test passed (the teardown's checks, see the output above)`);
  }
  for (const file of files) {
    const rel = path.relative(root, file.name);
    // A file that failed before its tests ran (a hook, an import) counts as one failure of its own.
    const tests = file.assertionResults.length > 0 ? file.assertionResults : [{ fullName: '(the file)', status: file.status, failureMessages: [file.message ?? ''] }];
    for (const t of tests) {
      const id = `${rel} > ${t.fullName}`;
      const entry = byTest.get(id) ?? { runs: 0, failures: 0, messages: [] };
      if (t.status === 'passed' || t.status === 'failed') entry.runs += 1;
      if (t.status === 'failed') {
        entry.failures += 1;
        entry.messages.push(`round ${round}: ${(t.failureMessages ?? []).join('\n').split('\n')[0]}`);
      }
      byTest.set(id, entry);
    }
  }
}
stopLoops();

const failing = [...byTest.entries()].filter(([, e]) => e.failures > 0).sort((a, b) => b[1].failures - a[1].failures);
console.log(`\nsoak: ${rounds} round${rounds === 1 ? '' : 's'} with ${busy} busy loop${busy === 1 ? '' : 's'}, ${byTest.size - 1} tests; rounds took ${roundTimes.map((s) => `${s.toFixed(0)} s`).join(', ')}`);
if (failing.length === 0) console.log('no test failed in any round');
else {
  console.log('failed runs  test');
  for (const [id, e] of failing) console.log(`${`${e.failures}/${e.runs}`.padStart(11)}  ${id}\n${e.messages.map((m) => `             ${m}`).join('\n')}`);
}
writeFileSync(path.join(outDir, 'summary.json'), `${JSON.stringify({ rounds, busy, roundSeconds: roundTimes, tests: byTest.size, failures: Object.fromEntries(failing) }, null, 2)}\n`);
process.exit(failing.length === 0 ? 0 : 1);
