/**
 * Node flags for a daemon process started by Switchboard (`switchboard up`, `npm start`): a 2 MiB
 * young generation instead of 16 MiB keeps resident memory down under floods of output (about
 * 15 MiB with ten busy panes) at no measurable cost in throughput; the regexp fallback (also set at
 * run time by safe-regex.ts, for library use) is pinned from the start.
 */
export const DAEMON_NODE_FLAGS = ['--max-semi-space-size=2', '--enable-experimental-regexp-engine-on-excessive-backtracks'] as const;

