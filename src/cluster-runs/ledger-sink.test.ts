/**
 * The controller's sink takes a run's events only from the node it was sent to. A run that waited
 * for a slot may move to another node before it is sent; an event that came from where it waited
 * (a stray, or a misbehaving node) must not leave the sink sure of the old node.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../core/logger.js';
import { RunLedger } from '../ledger/run-ledger.js';
import type { RunSpec } from '../ledger/run-model.js';
import { SqliteLedgerStore } from '../ledger/sqlite-store.js';
import { LedgerSink } from './ledger-sink.js';

const ledgers: RunLedger[] = [];
afterEach(async () => {
  for (const ledger of ledgers.splice(0)) await ledger.close();
});

const spec = (node: string): RunSpec => ({ id: 'run-1', backend: 'claude', mode: 'stdio', prompt: 'p', cwd: '/w', policy: 'default', limits: {}, schema_version: 'v2', parent: null, node, created_at: 1 });

describe('the ledger sink', () => {
  it('takes a moved run’s events from the node it is sent to, once told, whatever it remembered before', async () => {
    const ledger = new RunLedger({ store: new SqliteLedgerStore(':memory:') });
    ledgers.push(ledger);
    ledger.createRun(spec('node-a'));
    const sink = new LedgerSink(ledger, silentLogger);
    // Asked while it waited for node-a: the sink remembers node-a.
    expect(await sink.accepts('node-a', 'run-1')).toBe(true);
    ledger.moveRun('run-1', 'node-b');
    sink.sentTo('run-1', 'node-b');
    expect(await sink.accepts('node-b', 'run-1')).toBe(true);
    expect(await sink.accepts('node-a', 'run-1')).toBe(false);
    expect(await sink.accepts('node-b', 'run-unknown')).toBe(false);
  });
});
