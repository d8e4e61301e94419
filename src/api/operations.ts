/**
 * Every method's handler, by group (one file per group, named for it). Surfaces call these
 * through the dispatcher and never reach around them.
 */
import type { HandlerTable } from './handler.js';
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
