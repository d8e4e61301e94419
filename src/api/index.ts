/** Operations every surface offers, independent of transport. */
export { handlers, type Handler, type HandlerTable } from './operations.js';
export { Session, OUTPUT_BACKLOG_LIMIT } from './session.js';
export { paneInfo } from './pane-info.js';
export type { DaemonControl, NotificationSink, OperationContext, SessionLike } from './context.js';
