/**
 * `switchboard ledger migrate`: a home's SQLite ledger moved into PostgreSQL, for a daemon that is
 * to run with `--ledger postgres://…` from then on. Refused while a daemon runs on the home (it
 * would go on writing to the file behind the copy's back); safe to run again (see
 * ledger/migrate-ledger.ts).
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { SwitchboardError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import { isProcessRunning } from '../platform/index.js';
import { LEDGER_FILE, migrateLedger, parseLedgerLocation, PostgresLedgerStore, SqliteLedgerStore, type LedgerMigration } from '../ledger/index.js';
import { readRuntimeFile } from './runtime-file.js';

export interface HomeLedgerMigration extends LedgerMigration {
  /** The SQLite file copied. */
  from: string;
  /** The database written, its URL without the password. */
  to: string;
}

/** Copies `<home>/ledger.db` into the PostgreSQL database at `to`. */
export async function migrateHomeLedger(options: { home: string; to: string; logger?: Logger }): Promise<HomeLedgerMigration> {
  const target = parseLedgerLocation(options.to);
  if (target.kind !== 'postgres') throw new SwitchboardError('INVALID_PARAMS', '--to takes the PostgreSQL URL to move the ledger into (postgres://user:password@host:port/database)');
  const running = readRuntimeFile(options.home);
  if (running && isProcessRunning(running.pid)) {
    throw new SwitchboardError('CONFLICT', `a daemon is running on ${options.home} (pid ${running.pid}) and writes to its ledger: stop it with \`switchboard down\` first`, { pid: running.pid });
  }
  const file = path.join(options.home, LEDGER_FILE);
  if (!existsSync(file)) throw new SwitchboardError('INVALID_PARAMS', `there is no ledger to move: ${file} does not exist`, { file });
  const source = new SqliteLedgerStore(file, { mustExist: true });
  try {
    const into = await PostgresLedgerStore.open({ url: target.url, shown: target.shown, ...(options.logger ? { logger: options.logger } : {}) });
    try {
      return { ...(await migrateLedger(source, into)), from: file, to: target.shown };
    } finally {
      await into.close();
    }
  } finally {
    await source.close();
  }
}
