/** SQLite ledger files for a test file's tests: every store opened is closed, and every folder removed, after each test. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach } from 'vitest';
import { SqliteLedgerStore } from '../../src/ledger/sqlite-store.js';

export interface LedgerFiles {
  /** A new ledger path in a scratch folder of its own (the file is not made). */
  file: () => string;
  /** The store at `at`, closed after the test. */
  open: (at: string) => SqliteLedgerStore;
}

export function useLedgerFiles(prefix: string): LedgerFiles {
  const dirs: string[] = [];
  const stores: SqliteLedgerStore[] = [];
  afterEach(async () => {
    for (const s of stores.splice(0)) await s.close();
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });
  return {
    file: () => {
      const dir = mkdtempSync(path.join(tmpdir(), prefix));
      dirs.push(dir);
      return path.join(dir, 'ledger.db');
    },
    open: (at) => {
      const store = new SqliteLedgerStore(at);
      stores.push(store);
      return store;
    },
  };
}
