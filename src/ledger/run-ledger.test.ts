import { afterEach, describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { describeLedgerStore, recordRun, spec } from '../../test/support/ledger-contract.js';
import { RunLedger, LEDGER_FILE } from './run-ledger.js';
import { SqliteLedgerStore } from './sqlite-store.js';

const dirs: string[] = [];
const ledgers: RunLedger[] = [];
afterEach(async () => {
  for (const l of ledgers.splice(0)) await l.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function home(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'sb-ledger-'));
  dirs.push(dir);
  return path.join(dir, 'home');
}

function open(dir = home(), rawOutput = false): RunLedger {
  const ledger = RunLedger.openSqlite({ home: dir, rawOutput });
  ledgers.push(ledger);
  return ledger;
}

// What every store does (test/support/ledger-contract.ts), here on a SQLite file per test.
describeLedgerStore('SQLite', () => {
  const file = path.join(path.dirname(home()), LEDGER_FILE);
  return Promise.resolve({ open: () => Promise.resolve(new SqliteLedgerStore(file)) });
});

describe('the run ledger in SQLite', () => {
  it('lives in the Switchboard home as a private file in WAL mode', async () => {
    const dir = home();
    const ledger = open(dir);
    recordRun(ledger, spec(), 3);
    await ledger.flush();
    const file = path.join(dir, LEDGER_FILE);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(existsSync(`${file}-wal`)).toBe(true);
    expect(statSync(`${file}-wal`).mode & 0o777).toBe(0o600);
    const db = new Database(file, { readonly: true });
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    db.close();
  });

  it('moves with SWITCHBOARD_HOME', async () => {
    const dir = home();
    const previous = process.env.SWITCHBOARD_HOME;
    process.env.SWITCHBOARD_HOME = dir;
    try {
      const ledger = RunLedger.openSqlite();
      ledgers.push(ledger);
      recordRun(ledger, spec(), 1);
      await ledger.flush();
      expect(statSync(path.join(dir, LEDGER_FILE)).mode & 0o777).toBe(0o600);
    } finally {
      if (previous === undefined) delete process.env.SWITCHBOARD_HOME;
      else process.env.SWITCHBOARD_HOME = previous;
    }
  });

  it('is append-only: the database refuses to change a recorded event or run', async () => {
    const dir = home();
    const ledger = open(dir);
    recordRun(ledger, spec(), 1);
    await ledger.flush();
    const db = new Database(path.join(dir, LEDGER_FILE));
    expect(() => db.prepare("UPDATE events SET body = '{}'").run()).toThrow(/append-only/);
    expect(() => db.prepare("UPDATE runs SET backend = 'x'").run()).toThrow(/append-only/);
    db.close();
  });
});
