/**
 * A process that appends to a run ledger as fast as it can, for the crash test: it says on stdout
 * how many events are committed after each flush, and goes on until it is killed.
 * Usage: node --import tsx test/support/ledger-writer.ts <ledger file>
 */
import { RunLedger } from '../../src/ledger/run-ledger.js';
import { SqliteLedgerStore } from '../../src/ledger/sqlite-store.js';

const file = process.argv[2];
if (!file) throw new Error('usage: ledger-writer.ts <file>');
const ledger = new RunLedger({ store: new SqliteLedgerStore(file) });
let run = 0;
let committed = 0;
for (;;) {
  const id = `crash-${++run}`;
  ledger.createRun({ id, backend: 'fake', mode: 'stdio', prompt: 'p', cwd: '/tmp', policy: 'default', limits: {}, schema_version: 'v2', parent: null, created_at: Date.now() });
  for (let i = 0; i < 2_000; i++) ledger.append(id, { type: 'token', ts: Date.now(), data: { text: `token ${i} ${'x'.repeat(i % 200)}` }, compat: { text: `token ${i}`, status: 'streaming', is_error: false } });
  await ledger.flush();
  committed += 2_000;
  process.stdout.write(`${committed}\n`);
  // Keep appending while the parent decides when to kill: some of these are mid-write when it does.
  await new Promise((resolve) => setImmediate(resolve));
}
