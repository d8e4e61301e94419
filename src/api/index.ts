/**
 * The operations every surface offers, independent of transport: the one service object
 * (`Services`, built by the daemon), a handler per method (by group), one caller's subscriptions,
 * authorization, the authenticate step over the daemon's tokens, attaching a terminal to a pane,
 * and the domain-to-wire mapping.
 */
export { handlers, operationsPort } from './operations.js';
export { checkedParams, invoke, type AnyHandler, type OperationCaller, type OperationsPort, type PortMethod } from './invoke.js';
export { Caller } from './caller.js';
export { createServices, TMUX_DIALOGS, type Services, type DaemonControl, type TmuxDialogs } from './services.js';
export { narrowGrant, requireScope, OWNER_GRANT, type Grant } from './authorize.js';
export { TokenRegistry, type Authenticate } from './tokens.js';
export { CallerOrigins } from './caller-origin.js';
export { findPaneTerminal } from './terminal-attach.js';
export type { PaneTerminal, TerminalAttachment, TerminalSink } from './terminal.js';
export { NODE_PANE_METHODS, nodePaneId, type NodeLogPage, type NodePaneEvent, type NodePaneExit, type NodePaneFollow, type NodePaneState, type NodePaneListener, type NodePaneMethod, type NodePaneRef, type RemotePanes } from './remote-panes.js';
export { PaneSubscription } from './pane-subscription.js';
export { localPaneMethods, type PaneContext } from './pane-operations.js';
export { logPage, nodeLogExport, sessionExport } from './log-operations.js';
export type { OperationContext } from './context.js';
export type { NotificationSink } from './notification-sink.js';
export { bridgeRuns, callerOf, renderWire, runOperations, runServiceOf, type RunOperation, type RunsPort, type RunEvent, type RunView } from './bridge-operations.js';
export { approvalInfo, paneInfo, sessionInfo, stateChangeInfo } from './to-wire.js';
