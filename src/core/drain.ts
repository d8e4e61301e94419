import { once } from 'node:events';
import type { Writable } from 'node:stream';

/**
 * Waits for `out` to drain; a stream closed meanwhile (a download the reader gave up on) ends the
 * wait too, so a writer that checks `out.destroyed` next never waits for ever.
 */
export async function drainOrClose(out: Writable): Promise<void> {
  const abort = new AbortController();
  try {
    await Promise.race([once(out, 'drain', { signal: abort.signal }), once(out, 'close', { signal: abort.signal })]);
  } finally {
    abort.abort();
  }
}
