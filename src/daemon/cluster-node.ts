/**
 * `switchboard node`'s composition (issue 26): a run service of its own (this machine's policy,
 * its drivers, enforced here) whose ledger keeps its runs in `node-ledger.db` in the home and
 * publishes every event for the controller, and a RunNode over it that registers, joins and pulls
 * the controller's runs. No API and no panes of its own yet: the controller is where people look.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { errorMessage } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import { ensurePrivateDir } from '../platform/index.js';
import { connectCluster, EventPublisher, nodeInboxPrefix, type ClusterConnection, type NatsOptions } from '../cluster/index.js';
import { PublishingLedgerStore, RunNode } from '../cluster-runs/index.js';
import { RunLedger, SqliteLedgerStore } from '../ledger/index.js';
import { loadGovernancePolicy, parseGovernancePolicy, POLICY_FILE } from '../governance/index.js';
import { defaultBackends, RunService, type BackendDriver } from '../runs/index.js';

/** The node's own copy of its runs, in its home (apart from `ledger.db`, which a daemon there owns). */
const NODE_LEDGER_FILE = 'node-ledger.db';

interface ClusterNodeOptions {
  home: string;
  nats: NatsOptions;
  name: string;
  labels?: readonly string[];
  /** Runs at once. */
  slots: number;
  /** Only these backends (default: every profile's; only those whose CLI is here are offered). */
  only?: readonly string[];
  /** The drivers instead of the profiles' (tests). */
  backends?: BackendDriver[];
  logger: Logger;
}

interface StartedClusterNode {
  readonly node: RunNode;
  readonly service: RunService;
  /** Stops pulling, ends the runs going (`cancelled (shutdown)`, published), leaves the cluster and disconnects. */
  close(): Promise<void>;
}

/** Starts a node: resolves once it pulls its runs (it waits for a controller to answer its join). */
export async function startClusterNode(options: ClusterNodeOptions): Promise<StartedClusterNode> {
  const { home, logger } = options;
  ensurePrivateDir(home);
  const file = path.join(home, POLICY_FILE);
  const policy = existsSync(file) ? loadGovernancePolicy({ file }) : parseGovernancePolicy({}, { origin: 'default' });
  const connection: ClusterConnection = await connectCluster(options.nats, { name: `switchboard-node-${options.name}`, logger, inboxPrefix: nodeInboxPrefix(options.name) });
  let ledger: RunLedger | undefined;
  let service: RunService | undefined;
  try {
    const publisher = new EventPublisher({ nc: connection.nc, node: options.name, logger });
    ledger = new RunLedger({ store: new PublishingLedgerStore(new SqliteLedgerStore(path.join(home, NODE_LEDGER_FILE)), publisher), rawOutput: policy.rawOutput, logger });
    const backends = options.backends ?? defaultBackends({ logger, ...(options.only ? { only: options.only } : {}) });
    const defaultCwd = policy.forBackend('').roots[0];
    // Its own scope: a daemon of the same home never touches the node's processes, nor the node the daemon's.
    service = (await RunService.start({ ledger, policy, backends, scope: `${home}#node`, logger, ...(defaultCwd !== undefined ? { defaultCwd } : {}) })).service;
    const node = await RunNode.start({ nc: connection.nc, service, outlet: publisher, name: options.name, labels: options.labels ?? [], slots: options.slots, logger });
    const running = service;
    const opened = ledger;
    return {
      node,
      service: running,
      async close() {
        await node.close();
        await running.dispose().catch((err: unknown) => logger.warn('the node\'s runs did not stop cleanly', { error: errorMessage(err) }));
        await opened.close().catch((err: unknown) => logger.warn('the node\'s ledger did not close cleanly', { error: errorMessage(err) }));
        await connection.close();
      },
    };
  } catch (err) {
    await service?.dispose().catch(() => undefined);
    await ledger?.close().catch(() => undefined);
    await connection.close();
    throw err;
  }
}
