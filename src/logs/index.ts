export { LogService, type LogServiceOptions, type RunAgentOptions, type PaneStateChange } from './log-service.js';
export { SessionLogs, PANE_LOG_DEFAULTS, MAX_FINISHED_SESSIONS, summarize, type SessionLog, type SessionKind, type SessionSummary } from './session-logs.js';
export { PaneLog } from './pane-log.js';
export { logMsgBytes, type LogMsg } from '../output/log-msg.js';
