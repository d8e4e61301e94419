/**
 * Node flags for a daemon process started by Switchboard (`switchboard up`, `npm start`): a 2 MiB
 * young generation instead of 16 MiB, and V8's size-over-speed mode, keep resident memory down
 * under floods of output (output strings die old; these collect them sooner): 10 panes running
 * `yes` peaked at 125 MiB with size-over-speed and 273 MiB without it. It costs output throughput
 * (a 64 MB cat: about 12 MB/s against 16 without it, same machine, in turn); the regexp fallback (also set at run time by safe-regex.ts, for library
 * use) is pinned from the start. What panes hold of their output is bounded by the daemon's
 * memory budget, not by these.
 */
export const DAEMON_NODE_FLAGS = ['--max-semi-space-size=2', '--optimize-for-size', '--enable-experimental-regexp-engine-on-excessive-backtracks'] as const;

/**
 * Variables for a daemon process started by Switchboard: glibc's malloc with at most two arenas
 * (its default is eight per core, one per thread that allocates, each keeping freed memory of its
 * own; the daemon's threads are libuv's and V8's workers): about 3 MiB less resident when idle and
 * 5 MiB under a flood of output. A value the user set is kept.
 */
export function daemonEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  if (env.MALLOC_ARENA_MAX !== undefined) return env;
  // The marker says the value is Switchboard's, so that the daemon takes out only what it added.
  return { ...env, MALLOC_ARENA_MAX: '2', SWITCHBOARD_DAEMON_ADDED_ENV: 'MALLOC_ARENA_MAX' };
}

/**
 * Takes what `daemonEnv` added out of `env` (the daemon's own, at start: the C library has read it
 * by then), so that the programs of its panes start with the environment the daemon was given.
 */
export function dropDaemonEnv(env: NodeJS.ProcessEnv): void {
  if (env.SWITCHBOARD_DAEMON_ADDED_ENV !== 'MALLOC_ARENA_MAX') return;
  delete env.MALLOC_ARENA_MAX;
  delete env.SWITCHBOARD_DAEMON_ADDED_ENV;
}
