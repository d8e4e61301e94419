/** The Run Ledger: every run and event, numbered, replayable, behind one small storage interface; the asks between agents, and team runs. */
export { RunLedger, LEDGER_FILE } from './run-ledger.js';
export { SqliteLedgerStore } from './sqlite-store.js';
export { PostgresLedgerStore } from './postgres-store.js';
export { openRunLedger } from './open-ledger.js';
export { parseLedgerLocation, type LedgerLocation } from './ledger-location.js';
export { migrateLedger, type LedgerMigration } from './migrate-ledger.js';
export type { LedgerStore, RunRecord, RunQuery, RetentionRule } from './ledger-store.js';
export { type AskRow, type AskRows } from './ask-rows.js';
export { type TeamEventRow, type TeamRows, type TeamRunRow } from './team-rows.js';
