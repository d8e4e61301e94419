/**
 * The daemon's agent bridge (seed 004): the run ledger in the Switchboard home (`ledger.db`, 0600),
 * or in PostgreSQL when `--ledger postgres://…` says so,
 * the governance policy (`policy.yaml` there, defaults without one), the backends (every agent
 * profile: its structured mode on stdio, its screen in a PTY as the fallback) and the run service
 * over them, which at start records runs a dead daemon left in flight as `failed (interrupted)` and
 * ends the CLIs it left behind. A broken policy or ledger turns the bridge off (logged, and every
 * run call answers CONFLICT saying so), never the daemon.
 *
 * With `cluster` it is a controller too (issue 26): it lays out the cluster's topology on NATS, and
 * a run of a backend some node has goes to a node (cluster-runs/), its events into this ledger.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { errorMessage } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import type { AgentCatalog, AgentPanes } from '../agents/index.js';
import type { PaneRegistry } from '../pane/index.js';
import { killMarkedNow } from '../platform/index.js';
import { openRunLedger, type LedgerLocation, type RunLedger } from '../ledger/index.js';
import { loadGovernancePolicy, parseGovernancePolicy, POLICY_FILE } from '../governance/index.js';
import { BRIDGE_MARKER_VARIABLE, defaultBackends, RunService, type BackendDriver, type RecoveryReport } from '../runs/index.js';
import { bridgeMarkerValue, markerScope } from '../runs/process-marker.js';
import type { ClusterConnection, NatsOptions } from '../cluster/index.js';
import type { ClusterRuns } from '../cluster-runs/index.js';
import type { ClusterPanes } from '../cluster-panes/index.js';

export interface BridgeOptions {
  /** Point every CLI at this model from an isolated HOME per backend under `agentHome` (demos, offline use, tests). */
  agentHome?: string;
  modelUrl?: string;
  /** Where the CLIs are, besides PATH and $SWITCHBOARD_AGENT_PATH. */
  binaryDirs?: string[];
  /** The backends to offer instead of every profile's (tests). */
  backends?: BackendDriver[];
  /** The policy file (default: policy.yaml in the home). */
  policyFile?: string;
  /** Where the run ledger is kept (default: SQLite in the home). */
  ledger?: LedgerLocation;
  /** The daemon's panes, where a PTY run's agent runs (listed, on the dashboard, its approvals answered by a person). */
  panes?: { registry: PaneRegistry; agentPanes: AgentPanes };
  /** Be the cluster's controller: NATS as checked by parseNatsOptions (`--cluster`), and a node's lease TTL. */
  cluster?: { nats: NatsOptions; nodeTtlMs?: number };
}

/** The controller's side of the cluster, while the bridge runs. */
interface StartedCluster {
  connection: ClusterConnection;
  runs: ClusterRuns;
  /** The nodes' panes, as the pane methods and the dashboard reach them. */
  panes: ClusterPanes;
}

export interface StartedBridge {
  service: RunService;
  ledger: RunLedger;
  recovered: RecoveryReport;
  /** Where the policy came from (its file, or `default`). */
  policy: string;
  /** Where the ledger is, as it may be shown: SQLite's file, or PostgreSQL's URL without its password. */
  ledgerShown: string;
  /** The marker every CLI of this daemon's runs carries, for the last-resort kill. */
  marker: { name: string; value: string };
  /** The cluster this daemon controls (`--cluster`), if any. */
  cluster?: StartedCluster;
}

/** Opens the ledger, reads the policy and starts the run service; undefined (with the reason logged) when it cannot. */
export async function startBridge(home: string, agents: AgentCatalog, options: BridgeOptions, logger: Logger): Promise<{ bridge: StartedBridge } | { problem: string }> {
  let ledger: RunLedger | undefined;
  let cluster: StartedCluster | undefined;
  try {
    const file = options.policyFile ?? path.join(home, POLICY_FILE);
    const policy = existsSync(file) || options.policyFile !== undefined ? loadGovernancePolicy({ file }) : parseGovernancePolicy({}, { origin: 'default' });
    const opened = await openRunLedger(options.ledger ?? { kind: 'sqlite' }, { home, rawOutput: policy.rawOutput, logger });
    ledger = opened.ledger;
    const { agentHome, modelUrl } = options;
    const sandbox = agentHome !== undefined && modelUrl !== undefined ? (backend: string) => ({ home: path.join(agentHome, backend), modelUrl }) : undefined;
    const backends = options.backends ?? defaultBackends({ catalog: agents, logger, ...(sandbox ? { sandbox } : {}), ...(options.binaryDirs ? { binaryDirs: options.binaryDirs } : {}), ...options.panes });
    // The scope is the home: another daemon's (another home's) CLIs are never touched.
    // A run that names no folder (the chat proxy's) works in the first sandbox root.
    const defaultCwd = policy.forBackend('').roots[0];
    cluster = options.cluster ? await startCluster(options.cluster, logger) : undefined;
    const { service, recovered } = await RunService.start({ ledger, policy, backends, scope: home, logger, ...(defaultCwd !== undefined ? { defaultCwd } : {}), ...(cluster ? { remote: cluster.runs } : {}) });
    // After the service took up the runs in flight on nodes, so that their events find them live.
    await cluster?.runs.takeEvents(ledger);
    if (recovered.interrupted.length > 0 || recovered.processes > 0) logger.warn('agent bridge: runs left in flight by a daemon that died are recorded as failed (interrupted)', { runs: recovered.interrupted, processes: recovered.processes });
    return { bridge: { service, ledger, recovered, policy: policy.origin, ledgerShown: opened.shown, marker: { name: BRIDGE_MARKER_VARIABLE, value: bridgeMarkerValue(markerScope(home)) }, ...(cluster ? { cluster } : {}) } };
  } catch (err) {
    if (cluster) await stopCluster(cluster, logger);
    await ledger?.close().catch(() => undefined);
    const problem = errorMessage(err);
    logger.error('agent bridge is off', { error: problem });
    return { problem };
  }
}

/** Ends every run (`cancelled (shutdown)`) and its processes, and closes the ledger. */
export async function stopBridge(bridge: StartedBridge, logger: Logger): Promise<void> {
  try {
    await bridge.service.dispose();
  } catch (err) {
    logger.warn('agent bridge did not stop cleanly', { error: errorMessage(err) });
  }
  // The runs on nodes go on there; what the ledger has not taken waits in the stream for the next controller.
  if (bridge.cluster) await stopCluster(bridge.cluster, logger);
  await bridge.ledger.close().catch((err: unknown) => logger.warn('run ledger did not close cleanly', { error: errorMessage(err) }));
}

/** The last resort (a second signal): every CLI of this daemon's runs killed at once. */
export function killBridgeNow(bridge: StartedBridge): void {
  killMarkedNow(bridge.marker);
}

/** Connects to NATS as the controller, lays out the topology, and starts the cluster's side of runs. */
async function startCluster(options: NonNullable<BridgeOptions['cluster']>, logger: Logger): Promise<StartedCluster> {
  // The NATS client and the cluster's modules are loaded by a controller only: a daemon on one
  // machine (the default) would hold their hundred modules for nothing (issue 25's memory budget).
  const [{ connectCluster }, { ClusterRuns }, { ClusterPanes }] = await Promise.all([import('../cluster/index.js'), import('../cluster-runs/index.js'), import('../cluster-panes/index.js')]);
  const connection = await connectCluster(options.nats, { name: 'switchboard-controller', logger });
  try {
    const runs = await ClusterRuns.open({ nc: connection.nc, logger, ...(options.nodeTtlMs !== undefined ? { nodeTtlMs: options.nodeTtlMs } : {}) });
    try {
      const panes = new ClusterPanes({ nc: connection.nc, nodes: () => runs.nodes().map((node) => node.name), logger });
      return { connection, runs, panes };
    } catch (err) {
      await runs.close().catch(() => undefined);
      throw err;
    }
  } catch (err) {
    await connection.close();
    throw err;
  }
}

async function stopCluster(cluster: StartedCluster, logger: Logger): Promise<void> {
  cluster.panes.close();
  await cluster.runs.close().catch((err: unknown) => logger.warn('the cluster did not stop cleanly', { error: errorMessage(err) }));
  await cluster.connection.close().catch(() => undefined);
}
