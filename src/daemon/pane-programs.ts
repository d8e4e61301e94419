/**
 * Switchboard's own commands for the programs in its panes. An agent asks another from its shell
 * tool (`lask --async "…"` from inside Codex, as CCB's agents do), so `switchboard` and the ask
 * aliases must be found on a pane's PATH even when the package's bins are not on the daemon's (a
 * daemon started from a checkout, or by an absolute path, or inside a test). The daemon writes
 * launchers for the built CLI into its home's `bin` folder and appends that folder to every pane's
 * PATH: appended, so a program of the same name the user put on PATH (CCB's own `lask`, say)
 * still wins. The launchers hold no token: a pane's programs find the daemon and their pane's
 * token through the variables every pane gets.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensurePrivateDir, pathWithAppended, writeNodeLaunchers } from '../platform/index.js';

/** The commands put on panes' PATH, each the built CLI's script of that name. */
export const PANE_COMMANDS: Readonly<Record<string, string>> = {
  switchboard: 'main.js',
  cask: path.join('aliases', 'cask.js'),
  gask: path.join('aliases', 'gask.js'),
  oask: path.join('aliases', 'oask.js'),
  lask: path.join('aliases', 'lask.js'),
};

/** The built CLI's folder: beside this file's folder once built, under dist/ when running from the sources. */
export function builtCliDir(): string | undefined {
  const here = path.dirname(fileURLToPath(import.meta.url));
  return [path.join(here, '..', 'cli'), path.join(here, '..', '..', 'dist', 'cli')].find((dir) => existsSync(path.join(dir, 'main.js')));
}

/**
 * Writes the launchers for the built CLI in `cliDir` into `<home>/bin` and returns the PATH panes should get (`env`'s with that
 * folder appended), or undefined when there is no built CLI to launch (running from the sources
 * unbuilt): panes then keep the daemon's PATH as it is.
 */
export function preparePaneCommands(home: string, env: NodeJS.ProcessEnv, cliDir: string | undefined): { dir: string; path: string } | undefined {
  if (cliDir === undefined) return undefined;
  const dir = path.join(home, 'bin');
  ensurePrivateDir(dir);
  const scripts = Object.fromEntries(Object.entries(PANE_COMMANDS).map(([name, script]) => [name, path.join(cliDir, script)]));
  writeNodeLaunchers(dir, scripts, 'Written by the Switchboard daemon: its commands for the programs in its panes.');
  return { dir, path: pathWithAppended(env, dir) };
}
