/** The Run Ledger: every run and event, numbered, replayable, behind one small storage interface; and the asks between agents. */
export { RunLedger, LEDGER_FILE, type RunLedgerOptions, type SubscribeOptions } from './run-ledger.js';
export { SqliteLedgerStore, type SqliteStoreOptions } from './sqlite-store.js';
export type { LedgerStore, LedgerBatch, RunRecord, RunQuery, RetentionRule, PruneResult } from './ledger-store.js';
export { SqliteAskRows, type AskRow, type AskRows } from './ask-rows.js';
