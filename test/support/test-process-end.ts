/**
 * Clean-ups for when the test process ends without the tests' own (a failed hook, a run cut
 * short): at 'exit', and at the SIGTERM vitest sends a worker it tears down. Node's default for
 * SIGTERM ends the process without running 'exit' handlers, so a nats-server or a frozen node
 * process it started would outlive it. After the clean-ups the process still ends by SIGTERM, as
 * it would have. Clean-ups are synchronous (kill by PID, remove a folder): nothing async runs then.
 */
const cleanups: (() => void)[] = [];
let installed = false;

export function atTestProcessEnd(cleanup: () => void): void {
  cleanups.push(cleanup);
  if (installed) return;
  installed = true;
  const runAll = (): void => {
    for (const run of cleanups.splice(0)) {
      try {
        run();
      } catch {
        // The next one runs all the same.
      }
    }
  };
  process.once('exit', runAll);
  process.once('SIGTERM', () => {
    runAll();
    // Our listener is gone: with nobody else's, the signal's default (the end) applies again.
    if (process.listenerCount('SIGTERM') === 0) process.kill(process.pid, 'SIGTERM');
  });
}
