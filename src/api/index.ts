/** Operations every surface offers, independent of transport. */
export { handlers, type Handler, type HandlerTable } from './operations.js';
export { Caller, OUTPUT_BACKLOG_LIMIT } from './caller.js';
export { paneInfo } from './pane-info.js';
export type { DaemonControl, NotificationSink, OperationContext, CallerLike } from './context.js';
