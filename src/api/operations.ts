/**
 * Every method's handler, by group (one file per group, named for it), and the port the surfaces
 * other than JSON-RPC call them through. Surfaces reach them only through `invoke` (invoke.ts):
 * the dispatcher per request, the HTTP API and the MCP server through `operationsPort`.
 */
import type { HandlerTable } from './handler.js';
import { invoke, NO_NOTIFICATIONS, type AnyHandler, type OperationsPort } from './invoke.js';
import type { Services } from './services.js';
import { isSwitchboardError, SwitchboardError } from '../core/errors.js';
import { silentLogger, type Logger } from '../core/logger.js';
import { agentHandlers } from './agent-operations.js';
import { bridgeHandlers } from './bridge-operations.js';
import { approvalHandlers } from './approval-operations.js';
import { askHandlers } from './ask-operations.js';
import { conversationHandlers } from './conversation-operations.js';
import { daemonHandlers } from './daemon-operations.js';
import { executeHandlers } from './execute-operations.js';
import { headlessRunHandlers } from './headless-run-operations.js';
import { logHandlers } from './log-operations.js';
import { paneHandlers } from './pane-operations.js';
import { teamHandlers } from './team-operations.js';
import { tmuxHandlers } from './tmux-operations.js';

export type { HandlerTable } from './handler.js';

export const handlers: HandlerTable = {
  ...paneHandlers,
  ...agentHandlers,
  ...approvalHandlers,
  ...logHandlers,
  ...headlessRunHandlers,
  ...conversationHandlers,
  ...askHandlers,
  ...bridgeHandlers,
  ...executeHandlers,
  ...tmuxHandlers,
  ...teamHandlers,
  ...daemonHandlers,
};

/**
 * Every operation over these services (the daemon's), as one caller at a time: the HTTP API's and
 * the MCP server's way in. A failure that is not a SwitchboardError is logged and answered as the
 * dispatcher answers it, INTERNAL_ERROR without its details.
 */
export function operationsPort(services: Services, table: Partial<Record<string, AnyHandler>> = handlers, logger: Logger = silentLogger): OperationsPort {
  return {
    async call(method, params, { grant, signal }) {
      try {
        return (await invoke(table, { ...services, caller: NO_NOTIFICATIONS, signal, grant }, method, params)) as never;
      } catch (err) {
        if (isSwitchboardError(err)) throw err;
        logger.error('internal error', { method, error: err instanceof Error ? (err.stack ?? err.message) : String(err) });
        throw new SwitchboardError('INTERNAL_ERROR', `internal error while running ${method}`);
      }
    },
  };
}
