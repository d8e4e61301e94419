export { SessionService, type RunAgentOptions, type PaneStateChange } from './session-service.js';
export { SessionLogs, PANE_LOG_DEFAULTS, MAX_FINISHED_SESSIONS, summarize, type SessionLog, type SessionKind, type SessionSummary } from './session-logs.js';
export { PaneSession, approvalInfo } from './pane-session.js';
export { logMsgBytes, type LogMsg } from '../events/log-msg.js';
