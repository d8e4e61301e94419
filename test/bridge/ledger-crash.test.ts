/**
 * A writer killed with SIGKILL in the middle of appending leaves a ledger that opens clean:
 * `PRAGMA integrity_check` says ok, every committed event is there, each run's events are numbered
 * 1…n with no hole, and the run's status agrees with its events.
 */
import { describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { RunLedger } from '../../src/ledger/run-ledger.js';
import { SqliteLedgerStore } from '../../src/ledger/sqlite-store.js';
import { tempDir } from '../support/shell.js';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

describe('the run ledger after a writer is killed', () => {
  it('opens clean with every committed event and no hole', { timeout: 60_000 }, async () => {
    const dir = tempDir('sb-ledger-crash-');
    try {
      const file = path.join(dir.dir, 'ledger.db');
      const child = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'test', 'support', 'ledger-writer.ts'), file], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
      let committed = 0;
      const exited = new Promise<NodeJS.Signals | null>((resolve) => child.once('exit', (_code, signal) => resolve(signal)));
      await new Promise<void>((resolve, reject) => {
        child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
          const last = chunk.trim().split('\n').at(-1);
          committed = Math.max(committed, Number(last));
          // Well into its work, and between two flushes: the next batch is being appended.
          if (committed >= 40_000) resolve();
        });
        child.once('exit', () => reject(new Error(`the writer stopped by itself after ${committed} events`)));
      });
      child.kill('SIGKILL');
      expect(await exited).toBe('SIGKILL');

      const db = new Database(file);
      expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
      const runs = db.prepare<[], { run_id: string; n: number; max: number; last_seq: number; events: number }>(
        'SELECT e.run_id AS run_id, count(*) AS n, max(e.seq) AS max, s.last_seq AS last_seq, s.events AS events FROM events e JOIN run_status s ON s.run_id = e.run_id GROUP BY e.run_id',
      ).all();
      db.close();
      const total = runs.reduce((sum, r) => sum + r.n, 0);
      expect(total).toBeGreaterThanOrEqual(committed);
      for (const r of runs) expect(r).toMatchObject({ n: r.max, last_seq: r.max, events: r.n });

      // And the ledger goes on from where the killed writer's last commit left it.
      const ledger = new RunLedger({ store: new SqliteLedgerStore(file) });
      const last = runs.find((r) => r.run_id === 'crash-1');
      expect(last).toBeDefined();
      expect(await ledger.check()).toBe('ok');
      await ledger.close();
    } finally {
      dir.cleanup();
    }
  });
});
