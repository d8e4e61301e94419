#!/usr/bin/env node
// The `herdr` command `switchboard compat install` writes (herdr.cmd on Windows, for CCB_HERDR_EXE).
import { runHerdrLauncher } from './herdr-cli.js';

// No top-level await: the build bundles this entry into CommonJS (scripts/bundle-launchers.mjs).
void runHerdrLauncher(process.argv.slice(2), { env: process.env, cwd: process.cwd(), stdout: process.stdout, stderr: process.stderr }).then((code) => {
  process.exitCode = code;
});
