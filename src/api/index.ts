/**
 * The operations every surface offers, independent of transport: the one service object
 * (`Services`, built by the daemon), a handler per method (by group), one caller's subscriptions,
 * authorization, the authenticate step over the daemon's tokens, attaching a terminal to a pane,
 * and the domain-to-wire mapping.
 */
export { handlers, type Handler, type HandlerTable } from './operations.js';
export { Caller, OUTPUT_BACKLOG_LIMIT } from './caller.js';
export { createServices, TmuxFrontEnd, AgentBridge, type Services, type DaemonControl } from './services.js';
export { authorize, narrowGrant, requireScope, scopesForNewPane, OWNER_GRANT, type Grant } from './authorize.js';
export { asksPort, type AsksPort, type AskOperation, type AskCaller } from './ask-operations.js';
export { TokenRegistry, type Authenticate } from './tokens.js';
export { CallerOrigins } from './caller-origin.js';
export { findPaneTerminal, type PaneTerminal, type TerminalAttachment, type TerminalSink } from './terminal-attach.js';
export { sessionExport } from './log-operations.js';
export { paneInfo, approvalInfo } from './to-wire.js';
export type { OperationContext, CallerLike } from './context.js';
export type { NotificationSink } from './notification-sink.js';
export { bridgeRuns, bridgeHandlers, callerOf, renderWire, runServiceOf, type RunsPort, type BackendInfo, type RunEvent, type RunView, type SubmitRequest, type WireRunEvent, type RunQuery, type SchemaVersion } from './bridge-operations.js';
