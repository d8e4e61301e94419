/**
 * Busy loops: a process spinning on one core each, for figures taken on a machine whose cores
 * are shared (`SWITCHBOARD_BENCH_BUSY=2 npm run bench -- …`), as CI's often are.
 */
import { spawn, type ChildProcess } from 'node:child_process';

/** A busy loop on one core, in a process of its own (ended by its pid). */
export function busyLoop(): ChildProcess {
  return spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' });
}

/** Starts `count` busy loops; the returned function ends them. */
export function busyLoops(count: number): () => void {
  const loops = Array.from({ length: count }, busyLoop);
  return () => {
    for (const loop of loops) loop.kill('SIGKILL');
  };
}
