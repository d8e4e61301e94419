// What the test line, its quick variant, the fixture update and the soak share: the steps, each a
// program run with this Node (no shell, no npm in between, so it is the same on Windows), run one
// after another or side by side, timed. Plain JavaScript: it runs before anything is built, and it
// sets TMPDIR for what it starts before tsx (which caches in the temporary folder) ever runs.
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { performance } from 'node:perf_hooks';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');

/** The programs running now, so a signal to the line ends them too (a CI cancel signals only the line). */
const running = new Set();

/**
 * On SIGINT or SIGTERM: ends every step still running, runs `cleanup` (the temporary folder), and
 * exits 130 or 143, as a shell would.
 */
export function onInterrupt(cleanup) {
  for (const [signal, code] of [['SIGINT', 130], ['SIGTERM', 143]]) {
    process.once(signal, () => {
      for (const child of running) child.kill('SIGTERM');
      try {
        cleanup();
      } finally {
        process.exit(code);
      }
    });
  }
}

/** The command line of an npm package's program, run by this Node: `[node, <its script>, ...args]`. */
export function packageBin(pkg, name, args = []) {
  const dir = path.join(root, 'node_modules', ...pkg.split('/'));
  const { bin } = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8'));
  const script = typeof bin === 'string' ? bin : bin[name];
  return [process.execPath, path.join(dir, script), ...args];
}

/** A TypeScript script of the project, run by this Node through tsx. */
export function tsxScript(file, args = [], nodeFlags = []) {
  return [process.execPath, ...nodeFlags, '--import', 'tsx', path.join(root, file), ...args];
}

export const STEPS = {
  // ESLint, the layer rule on resolved imports (dependency-cruiser, scripts/check-layers.mjs), and
  // knip: no export, file or dependency nobody uses (knip.json names the public entry points).
  lint: (cache) => [
    packageBin('eslint', 'eslint', ['.', ...(cache ? ['--cache', '--cache-strategy', 'content', '--cache-location', path.join(root, 'node_modules', '.cache', 'eslint')] : [])]),
    [process.execPath, path.join(root, 'scripts', 'check-layers.mjs')],
    packageBin('knip', 'knip', ['--no-progress']),
  ],
  typecheck: () => [packageBin('typescript', 'tsc', ['-p', 'tsconfig.json', '--noEmit']), packageBin('typescript', 'tsc', ['-p', 'web', '--noEmit'])],
  build: () => [packageBin('typescript', 'tsc', ['-p', 'tsconfig.build.json']), packageBin('typescript', 'tsc', ['-p', 'tsconfig.build-js.json']), packageBin('vite', 'vite', ['build', '--config', 'web/vite.config.ts', '--logLevel', 'warn']), [process.execPath, path.join(root, 'scripts', 'bundle-launchers.mjs')]],
  agentClis: () => tsxScript('scripts/install-agent-clis.ts'),
  debianPackages: () => tsxScript('scripts/install-debian-packages.ts'),
};

/**
 * Runs `commands` (one command line, or several run in order) with `env` added. With `quiet`,
 * what they print is kept and handed back instead of shown as it comes (for steps run side by
 * side, whose output would interleave). Resolves with how it went; never rejects.
 */
export function runCommands(name, commands, { env = {}, quiet = false } = {}) {
  const list = Array.isArray(commands[0]) ? commands : [commands];
  const started = performance.now();
  let output = '';
  const runOne = (argv) =>
    new Promise((resolve) => {
      const child = spawn(argv[0], argv.slice(1), { cwd: root, env: { ...process.env, ...env }, stdio: quiet ? ['ignore', 'pipe', 'pipe'] : 'inherit' });
      running.add(child);
      child.once('exit', () => running.delete(child));
      if (quiet) {
        child.stdout.on('data', (d) => (output += d));
        child.stderr.on('data', (d) => (output += d));
      }
      child.once('error', (err) => {
        output += `${err.message}\n`;
        resolve(1);
      });
      child.once('close', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
    });
  return (async () => {
    for (const argv of list) {
      const code = await runOne(argv);
      if (code !== 0) return { name, ok: false, code, output, seconds: (performance.now() - started) / 1000 };
    }
    return { name, ok: true, code: 0, output, seconds: (performance.now() - started) / 1000 };
  })();
}

/**
 * Runs each chain of steps side by side (the steps of a chain in order), then prints each chain's
 * output under its name as it ends. Resolves with every step's result, in chain order.
 */
export async function runSideBySide(chains, env) {
  const results = await Promise.all(
    chains.map(async (chain) => {
      const done = [];
      for (const [name, commands] of chain) {
        const result = await runCommands(name, commands, { env, quiet: true });
        done.push(result);
        const text = result.output.trimEnd();
        console.log(`── ${name}: ${result.ok ? 'ok' : `failed (exit ${result.code})`} in ${result.seconds.toFixed(1)} s${text === '' ? '' : `\n${text}`}`);
        if (!result.ok) break;
      }
      return done;
    }),
  );
  return results.flat();
}

/**
 * A temporary folder for the steps before the tests (tsx's cache, npm's and apt's scratch files),
 * removed with what they left once the line is done: the system's temporary folder keeps nothing.
 * The tests make their own (test/support/run-temp.ts), which their teardown checks.
 */
export function stepsTempFolder() {
  const dir = mkdtempSync(path.join(tmpdir(), 'sbl-'));
  const remove = () => {
    try {
      rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
    } catch (err) {
      console.error(`test line: could not remove ${dir}: ${err.message}`);
    }
  };
  return { dir, env: { TMPDIR: dir, TMP: dir, TEMP: dir }, remove };
}

/** Names in the system's temporary folder now, to say afterwards what a run added there. */
export function systemTempEntries() {
  try {
    return new Set(readdirSync(tmpdir()));
  } catch {
    return new Set();
  }
}

/** A table of how long each step took, and the whole. */
export function timingTable(results, totalSeconds) {
  const width = Math.max(...results.map((r) => r.name.length), 5);
  const rows = results.map((r) => `  ${r.name.padEnd(width)}  ${r.seconds.toFixed(1).padStart(7)} s${r.ok ? '' : '  FAILED'}`);
  return [...rows, `  ${'total'.padEnd(width)}  ${totalSeconds.toFixed(1).padStart(7)} s (steps side by side overlap)`].join('\n');
}
