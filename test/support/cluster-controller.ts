/**
 * A cluster controller in the test's process, as the cluster tests need one: a real nats-server
 * (startTestCluster), a run ledger in SQLite or PostgreSQL (useTestLedger), the cluster's side of
 * runs (ClusterRuns) and a run service that drives no agent itself, so every run goes to a node.
 */
import { ClusterRuns } from '../../src/cluster-runs/index.js';
import { silentLogger } from '../../src/core/logger.js';
import { parseGovernancePolicy, type GovernancePolicyInput } from '../../src/governance/policy-file.js';
import { RunLedger } from '../../src/ledger/run-ledger.js';
import { RunService } from '../../src/runs/run-service.js';
import { startTestCluster, type TestCluster } from './cluster.js';
import type { TestLedger } from './test-ledger.js';

export interface TestController {
  readonly cluster: TestCluster;
  readonly ledger: RunLedger;
  readonly runs: ClusterRuns;
  readonly service: RunService;
  /** Stops the service, the cluster's side, the ledger and the server, in that order. */
  close(): Promise<void>;
}

/**
 * Starts a controller whose policy's sandbox is `sandboxRoot` (and whose other rules are `policy`'s),
 * its ledger's files there too; `nodeTtlMs`: the nodes' lease TTL (the topology's default unless given);
 * `sweepEveryMs`: how often queued node runs are swept (node-run-sweep.ts's default unless given).
 */
export async function startTestController(testLedger: TestLedger, sandboxRoot: string, options: { nodeTtlMs?: number; sweepEveryMs?: number; policy?: GovernancePolicyInput } = {}): Promise<TestController> {
  const cluster = await startTestCluster();
  let ledger: RunLedger | undefined;
  let runs: ClusterRuns | undefined;
  try {
    ledger = new RunLedger({ store: await testLedger.store(sandboxRoot) });
    runs = await ClusterRuns.open({ nc: cluster.controller.nc, logger: silentLogger, ...(options.nodeTtlMs !== undefined && { nodeTtlMs: options.nodeTtlMs }), ...(options.sweepEveryMs !== undefined && { sweepEveryMs: options.sweepEveryMs }) });
    const { service } = await RunService.start({ ledger, policy: parseGovernancePolicy({ ...options.policy, sandbox: { roots: [sandboxRoot] } }), backends: [], remote: runs, scope: `${sandboxRoot}#controller` });
    await runs.takeEvents(ledger);
    const opened = { ledger, runs };
    return {
      cluster,
      ...opened,
      service,
      async close() {
        await service.dispose();
        await opened.runs.close();
        await opened.ledger.close();
        await cluster.close();
      },
    };
  } catch (err) {
    await runs?.close();
    await ledger?.close();
    await cluster.close();
    throw err;
  }
}
