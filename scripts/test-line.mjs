// The test line: `npm test` (everything: lint, type check, build, the pinned agent CLIs, Chromium
// and tmux installed when missing, then every test), `npm run test:quick` (lint, type check, build,
// and the unit and process tests: no agent CLI, no browser) and `npm run fixtures:update` (the
// end-to-end tests, recording the screens they pass through as the tracked detector fixtures).
// Arguments after the mode (or, without one, all of them: `npm test -- test/pane.test.ts`) go to
// vitest, a file or a -t filter.
//
// The steps before the tests run side by side where they do not depend on each other (the
// checks use the CPU, the installs mostly the network), and a table at the end says where the time
// went. Nothing is left in the system's temporary folder: the steps get a folder of their own,
// removed at the end, and the tests make and check theirs (test/support/run-temp.ts).
import { performance } from 'node:perf_hooks';
import { onInterrupt, packageBin, runCommands, runSideBySide, STEPS, stepsTempFolder, systemTempEntries, timingTable } from './test-steps.mjs';

const MODES = {
  all: {
    chains: [[['lint', STEPS.lint(false)]], [['typecheck', STEPS.typecheck()], ['build', STEPS.build()]], [['agent CLIs', STEPS.agentClis()], ['Debian packages', STEPS.debianPackages()]]],
    projects: [],
  },
  quick: {
    // The lint cache makes a second run take seconds; the full line lints from scratch.
    chains: [[['lint', STEPS.lint(true)]], [['typecheck', STEPS.typecheck()], ['build', STEPS.build()]]],
    projects: ['unit', 'process'],
  },
  fixtures: {
    chains: [[['build', STEPS.build()]], [['agent CLIs', STEPS.agentClis()], ['Debian packages', STEPS.debianPackages()]]],
    projects: ['e2e'],
    env: { SWITCHBOARD_UPDATE_FIXTURES: '1' },
  },
};

const args = process.argv.slice(2);
const named = args[0] !== undefined && Object.hasOwn(MODES, args[0]);
const modeName = named ? args[0] : 'all';
const vitestArgs = named ? args.slice(1) : args;
const mode = MODES[modeName];

const started = performance.now();
const systemBefore = systemTempEntries();
const temp = stepsTempFolder();
onInterrupt(temp.remove);
const results = await runSideBySide(mode.chains, temp.env).finally(() => temp.remove());
if (results.every((r) => r.ok)) {
  const projects = mode.projects.flatMap((p) => ['--project', p]);
  // The tests' own temporary folder is made by their global setup, not under the steps' one.
  results.push(await runCommands('tests', packageBin('vitest', 'vitest', ['run', ...projects, ...vitestArgs]), { env: mode.env ?? {} }));
}
const failed = results.some((r) => !r.ok);

console.log(`\ntest line (${modeName}):\n${timingTable(results, (performance.now() - started) / 1000)}`);
// Other programs on the machine write there too: said, not failed.
const added = [...systemTempEntries()].filter((name) => !systemBefore.has(name));
if (added.length > 0) console.log(`new in the system's temporary folder since the line began (this run's, or another program's): ${added.join(', ')}`);
process.exit(failed ? 1 : 0);
