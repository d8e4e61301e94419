/**
 * What a token may do, by scope. The owner's token (in the runtime file, and given to the shells
 * the user opens) has every scope. An agent pane's programs get a token of their own with `read`
 * and `ask`, plus what the user grants when creating the pane; never the owner's. Every surface
 * checks the scope of every call (the dispatcher, before the method runs).
 */
import type { MethodName } from './methods.js';

export const SCOPES = ['read', 'ask', 'send', 'create', 'approve', 'kill', 'export', 'admin'] as const;
export type Scope = (typeof SCOPES)[number];

/** What an agent pane's token can do unless the user grants more. */
export const AGENT_PANE_SCOPES: readonly Scope[] = ['read', 'ask'];

/** What each scope is for, in the words errors and docs use. */
export const SCOPE_MEANINGS: Readonly<Record<Scope, string>> = {
  read: 'list panes, agents and runs, read screens, text, logs and run events, wait, subscribe',
  ask: 'give another agent pane a prompt (send_prompt), unless it waits on an approval; ask it a question and get its answer (ask)',
  send: 'type into any pane (send_text, send_keys, paste, send_prompt), resize',
  create: 'start panes, agents, runs and agent sessions',
  approve: 'answer approval prompts',
  kill: 'kill and remove panes',
  export: 'write session logs to files (log_export)',
  admin: 'shut the daemon down, and open the dashboard (full control)',
};

/**
 * The scope each method needs. `send_prompt` needs `ask` for an agent pane that is not waiting on
 * an approval, `send` otherwise (checked against the pane, api/authorize.ts). A method not listed
 * (a test's own) needs `admin`.
 */
export const METHOD_SCOPES: Readonly<Record<MethodName, Scope>> = {
  ping: 'read',
  info: 'read',
  list: 'read',
  agents: 'read',
  is_alive: 'read',
  get_text: 'read',
  get_screen: 'read',
  wait_for: 'read',
  subscribe: 'read',
  unsubscribe: 'read',
  pane_states: 'read',
  log_sessions: 'read',
  log_subscribe: 'read',
  log_unsubscribe: 'read',
  log_get_history: 'read',
  ask_wait: 'read',
  ask_get: 'read',
  ask_list: 'read',
  ask_targets: 'read',
  run_get: 'read',
  run_list: 'read',
  run_events: 'read',
  run_subscribe: 'read',
  run_backends: 'read',
  send_prompt: 'ask',
  // An ask types only into an idle agent with no dialog open, never into an approval.
  ask: 'ask',
  ask_cancel: 'ask',
  // Marking a pane (not) askable changes what every other agent may do to it.
  set_askable: 'send',
  send_text: 'send',
  send_keys: 'send',
  paste: 'send',
  resize: 'send',
  create_pane: 'create',
  run_agent: 'create',
  cancel_run: 'create',
  run_submit: 'create',
  run_cancel: 'create',
  agent_session_open: 'create',
  agent_session_prompt: 'create',
  agent_session_cancel: 'create',
  agent_session_close: 'create',
  agent_execute: 'create',
  answer_approval: 'approve',
  kill: 'kill',
  remove: 'kill',
  log_export: 'export',
  shutdown: 'admin',
  dashboard_login: 'admin',
  // The least any tmux command needs; each command of the line is then judged by what it does
  // (tmux/command-authority.ts): listing and capturing need read, typing send, new panes create,
  // and a shell, a file or a stored command admin.
  tmux_command: 'read',
};
