import { defineConfig } from 'vitest/config';

// Two projects: fast units beside the code (the daemon's and the dashboard's), and process/PTY tests under test/ that start real
// shells and daemons. Both run in forked workers (node-pty needs a real process, not a thread).
export default defineConfig({
  test: {
    pool: 'forks',
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
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
    ],
  },
});
