/**
 * Node flags for a daemon process started by Switchboard (`switchboard up`, `npm start`): a 2 MiB
 * young generation instead of 16 MiB, and V8's size-over-speed mode, keep resident memory down
 * under floods of output (output strings die old; these collect them sooner) at no measurable
 * cost in throughput; the regexp fallback (also set at run time by safe-regex.ts, for library
 * use) is pinned from the start. What panes hold of their output is bounded by the daemon's
 * memory budget, not by these.
 */
export const DAEMON_NODE_FLAGS = ['--max-semi-space-size=2', '--optimize-for-size', '--enable-experimental-regexp-engine-on-excessive-backtracks'] as const;
