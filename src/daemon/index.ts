/** The daemon: composes the pane registry and the surfaces, and publishes how to reach them. */
export { AGENT_SANDBOX_MODES, TMUX_DIALOGS, type TmuxDialogs, Daemon, DAEMON_NODE_FLAGS, daemonEnv, dropDaemonEnv, DEFAULT_DASHBOARD_PORT, DEFAULT_HOST, DEFAULT_PORT, type AgentSandboxMode, type DaemonOptions } from './daemon.js';
export { readRuntimeFile, runtimeFilePath, type RuntimeInfo } from './runtime-file.js';
export { DAEMON_MARKER_VARIABLE, homeId } from './recovery.js';
export { migrateHomeLedger } from './ledger-migration.js';
export { parseLedgerLocation } from '../ledger/index.js';
export { startClusterNode } from './cluster-node-loader.js';
// From its own file, not cluster/'s barrel: checking `--cluster` must not load the NATS client.
export { parseNatsOptions } from '../cluster/nats-options.js';
