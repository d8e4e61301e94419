/**
 * The one place a ledger store is chosen: SQLite in the home (the default, no server) or
 * PostgreSQL at a URL (`--ledger postgres://…`), both behind `LedgerStore`, so everything above
 * the ledger is the same whichever keeps it.
 */
import path from 'node:path';
import { silentLogger, type Logger } from '../core/logger.js';
import { ensurePrivateDir } from '../platform/index.js';
import type { LedgerStore } from './ledger-store.js';
import type { LedgerLocation } from './ledger-location.js';
import { PostgresLedgerStore } from './postgres-store.js';
import { RunLedger, LEDGER_FILE } from './run-ledger.js';
import { SqliteLedgerStore } from './sqlite-store.js';

/** A store opened, and how it may be named anywhere (SQLite's file, or the URL without its password). */
interface OpenedStore {
  store: LedgerStore;
  shown: string;
}

/** Opens the store `location` names; SQLite's file is `ledger.db` in `home` (made private). */
async function openLedgerStore(location: LedgerLocation, options: { home: string; logger?: Logger }): Promise<OpenedStore> {
  if (location.kind === 'postgres') {
    const store = await PostgresLedgerStore.open({ url: location.url, shown: location.shown, logger: options.logger ?? silentLogger });
    return { store, shown: location.shown };
  }
  ensurePrivateDir(options.home);
  const file = path.join(options.home, LEDGER_FILE);
  return { store: new SqliteLedgerStore(file), shown: file };
}

/** The run ledger over the store `location` names. */
export async function openRunLedger(location: LedgerLocation, options: { home: string; rawOutput?: boolean; logger?: Logger }): Promise<{ ledger: RunLedger; shown: string }> {
  const { store, shown } = await openLedgerStore(location, options);
  return { ledger: new RunLedger({ store, rawOutput: options.rawOutput ?? false, logger: options.logger ?? silentLogger }), shown };
}
