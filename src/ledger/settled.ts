/**
 * A synchronous store call (better-sqlite3's) behind an asynchronous interface: done before the
 * call returns, so SQLite keeps its order for free, with a throw turned into a rejection so that
 * every store fails the same way.
 */
export function settled<T>(work: () => T): Promise<T> {
  try {
    return Promise.resolve(work());
  } catch (err) {
    return Promise.reject(err instanceof Error ? err : new Error(String(err)));
  }
}
