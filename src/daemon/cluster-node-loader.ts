/**
 * `switchboard node`'s entry, loaded when called: the node's modules bring the NATS client and the
 * cluster's hundred modules with them, which a daemon on one machine never uses and would hold in
 * memory for nothing (issue 25's budget: the idle daemon under 60 MiB).
 */
import type { ClusterNodeOptions, StartedClusterNode } from './cluster-node.js';

/** Starts a node (see cluster-node.ts): resolves once it pulls its runs. */
export async function startClusterNode(options: ClusterNodeOptions): Promise<StartedClusterNode> {
  const { startClusterNode: start } = await import('./cluster-node.js');
  return start(options);
}
