/**
 * Every method's handler, by group (one file per group, named for it), and the port the surfaces
 * other than JSON-RPC call them through. Surfaces reach them only through `invoke` (invoke.ts):
 * the dispatcher per request, the HTTP API and the MCP server through `operationsPort`.
 */
import type { HandlerTable } from './handler.js';
import { invoke, NO_NOTIFICATIONS, type AnyHandler, type OperationsPort } from './invoke.js';
import type { Services } from './services.js';
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
  ...daemonHandlers,
};

/** Every operation over these services (the daemon's), as one caller at a time: the HTTP API's and the MCP server's way in. */
export function operationsPort(services: Services, table: Partial<Record<string, AnyHandler>> = handlers): OperationsPort {
  return {
    async call(method, params, { grant, signal }) {
      return (await invoke(table, { ...services, caller: NO_NOTIFICATIONS, signal, grant }, method, params)) as never;
    },
  };
}
