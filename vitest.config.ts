import { configDefaults, defineConfig } from 'vitest/config';

/**
 * Three projects, by what a test needs:
 * - unit: beside the code (the daemon's and the dashboard's), in-process, nothing started;
 * - process: test/ outside e2e/: real shells in real PTYs, real daemons, the built CLI, tmux;
 * - e2e: test/e2e/: the real agent CLIs against the scripted model, and the dashboard in Chromium.
 * `npm run test:quick` runs the first two (no agent CLI, no browser). All run in forked workers
 * (node-pty needs a real process, not a thread).
 */
export default defineConfig({
  test: {
    pool: 'forks',
    // Most process and e2e time is spent waiting on other programs (a CLI starting, a model's
    // scripted delay), so more files than cores run at once; vitest's default (cores - 1) is one
    // file at a time on a 2-core machine. SWITCHBOARD_TEST_WORKERS overrides it.
    maxWorkers: Number(process.env.SWITCHBOARD_TEST_WORKERS ?? '') || 3,
    globalSetup: ['test/support/global-setup.ts'],
    projects: [
      {
        test: {
          name: 'unit',
          include: ['src/**/*.test.ts', 'web/src/**/*.test.ts'],
          testTimeout: 20_000,
        },
      },
      {
        test: {
          name: 'process',
          include: ['test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, 'test/e2e/**', 'test/agent-clis/**'],
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
      {
        test: {
          name: 'e2e',
          include: ['test/e2e/**/*.test.ts'],
          testTimeout: 120_000,
          hookTimeout: 120_000,
        },
      },
    ],
  },
});
