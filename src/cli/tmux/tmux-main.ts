#!/usr/bin/env node
// The `tmux` command `switchboard compat install` puts on PATH (through a small shell or .cmd
// script, or the compiled C launcher's fallback): runs one tmux command line via the daemon.
import { isatty } from 'node:tty';
import { runTmuxLauncher } from './launcher.js';

// No top-level await: the build bundles this entry into CommonJS (scripts/bundle-launchers.mjs).
void runTmuxLauncher(process.argv.slice(2), {
  env: process.env,
  cwd: process.cwd(),
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: () => process.stdin,
  stdinIsTTY: isatty(0),
}).then((code) => {
  process.exitCode = code;
});
