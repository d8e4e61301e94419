/**
 * Which ledger a bridge test's runs go into: SQLite (a file in the test's folder) or PostgreSQL (a
 * fresh database on a server the test file starts with test/support/postgres-server.ts and stops
 * after its tests). The bridge's tests name their kind, so every run of the line has them on both:
 * e2e/bridge-http.test.ts and e2e/bridge-http-postgres.test.ts (one suite, bridge-http-suite.ts),
 * and bridge/daemon-bridge.test.ts. The cluster tests leave it to $SWITCHBOARD_TEST_LEDGER
 * (`sqlite`, the default, or `postgres`), set by hand to try them on PostgreSQL:
 * `SWITCHBOARD_TEST_LEDGER=postgres npx vitest run test/cluster test/e2e/cluster-`.
 */
import path from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import type { LedgerStore } from '../../src/ledger/ledger-store.js';
import { parseLedgerLocation, type LedgerLocation } from '../../src/ledger/ledger-location.js';
import { PostgresLedgerStore } from '../../src/ledger/postgres-store.js';
import { SqliteLedgerStore } from '../../src/ledger/sqlite-store.js';
import { startPostgres, type PostgresServer } from './postgres-server.js';

export const LEDGER_KINDS = ['sqlite', 'postgres'] as const;
export type LedgerKind = (typeof LEDGER_KINDS)[number];

/** The kind $SWITCHBOARD_TEST_LEDGER names (sqlite when unset); anything else fails the file at once. */
function ledgerKindFromEnv(): LedgerKind {
  const value = process.env.SWITCHBOARD_TEST_LEDGER ?? 'sqlite';
  if (!(LEDGER_KINDS as readonly string[]).includes(value)) throw new Error(`SWITCHBOARD_TEST_LEDGER must be one of ${LEDGER_KINDS.join(', ')}, not ${value}`);
  return value as LedgerKind;
}

export interface TestLedger {
  readonly kind: LedgerKind;
  /** A new store: SQLite's `ledger.db` in `folder`, or a new PostgreSQL database. */
  store(folder: string): Promise<LedgerStore>;
  /** A ledger opened again and again (a controller restarted): each call opens the same SQLite file or PostgreSQL database. */
  reopenable(folder: string): Promise<() => Promise<LedgerStore>>;
  /** Where a daemon keeps its ledger: undefined for SQLite (its home), or a new PostgreSQL database. */
  daemonLedger(): Promise<LedgerLocation | undefined>;
}

/**
 * The ledger of `kind` for this test file (call at the top level of a file or a describe): for
 * PostgreSQL, a server started before its tests and stopped after them.
 */
export function useTestLedger(kind: LedgerKind = ledgerKindFromEnv()): TestLedger {
  let server: PostgresServer | undefined;
  if (kind === 'postgres') {
    beforeAll(async () => {
      server = await startPostgres();
    });
    afterAll(async () => {
      await server?.stop();
    });
  }
  const database = async (): Promise<LedgerLocation> => {
    if (!server) throw new Error('the PostgreSQL server for this test file has not started');
    return parseLedgerLocation(await server.createDatabase());
  };
  return {
    kind,
    async store(folder) {
      if (kind === 'sqlite') return new SqliteLedgerStore(path.join(folder, 'ledger.db'));
      const location = await database();
      if (location.kind !== 'postgres') throw new Error('not a PostgreSQL location');
      return PostgresLedgerStore.open({ url: location.url, shown: location.shown });
    },
    async reopenable(folder) {
      if (kind === 'sqlite') return () => Promise.resolve(new SqliteLedgerStore(path.join(folder, 'ledger.db')));
      const location = await database();
      if (location.kind !== 'postgres') throw new Error('not a PostgreSQL location');
      return () => PostgresLedgerStore.open({ url: location.url, shown: location.shown });
    },
    async daemonLedger() {
      return kind === 'sqlite' ? undefined : database();
    },
  };
}
