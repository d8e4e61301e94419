export { LogService } from './log-service.js';
export { SessionLogs, PANE_LOG_DEFAULTS, type SessionLog, type SessionKind, type SessionSummary } from './session-logs.js';
export { PaneLog } from './pane-log.js';
