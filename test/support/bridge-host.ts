/**
 * A run service in a process of its own, for the restart test: it opens the ledger in `<home>`,
 * starts a run that never ends on the fake backend, starts a program that carries the service's
 * process marker (as every CLI of its runs does), prints `<run id> <program pid>`, and waits to be
 * killed. Usage: node --import tsx test/support/bridge-host.ts <home>
 */
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { RunLedger } from '../../src/ledger/run-ledger.js';
import { parseGovernancePolicy } from '../../src/governance/policy-file.js';
import { RunService } from '../../src/runs/run-service.js';
import { FakeBackend } from '../../src/runs/backends/fake-backend.js';
import { BRIDGE_MARKER_VARIABLE, bridgeMarkerValue, markerScope } from '../../src/runs/process-marker.js';

const home = process.argv[2];
if (!home) throw new Error('usage: bridge-host.ts <home>');
// The ledger first: it makes the home a private folder, which must not hold others' files yet.
const ledger = RunLedger.openSqlite({ home });
const work = path.join(home, 'work');
mkdirSync(work, { recursive: true });
const { service } = await RunService.start({ ledger, policy: parseGovernancePolicy({ sandbox: { roots: [home] } }), backends: [new FakeBackend()], scope: home });
const run = await service.submit({ backend: 'fake', prompt: 'tokens 3', cwd: work });
while ((await service.get(run.id)).status !== 'completed') await new Promise((r) => setTimeout(r, 10));
const slow = await service.submit({ backend: 'fake', prompt: 'slow', cwd: work });
await ledger.flush();
// A CLI of the run as the supervisor starts one: marked, in a process group of its own.
const cli = spawn('sleep', ['300'], { env: { ...process.env, [BRIDGE_MARKER_VARIABLE]: bridgeMarkerValue(markerScope(home)), SWITCHBOARD_RUN_ID: `orphan-${slow.id}` }, detached: true, stdio: 'ignore' });
cli.unref();
process.stdout.write(`${run.id} ${slow.id} ${cli.pid ?? 0}\n`);
setInterval(() => undefined, 60_000);
