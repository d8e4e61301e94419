/** Runs across machines (issue 26): a node that runs a controller's runs, and the controller's side of them. */
export { RunNode } from './run-node.js';
export { NodeWorkspaces } from './node-workspaces.js';
export { ConversationCarrier } from './conversation-carrier.js';
export { ClusterRuns } from './cluster-runs.js';
export { EventOutbox } from './event-outbox.js';
export { OutboxLedgerStore } from './outbox-store.js';
