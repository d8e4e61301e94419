import type { MethodName } from './methods.js';
import type { Scope } from './scopes.js';

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
  run_nodes: 'read',
  team_preset_list: 'read',
  team_preset_get: 'read',
  team_preset_validate: 'read',
  team_preset_export: 'read',
  team_run_list: 'read',
  team_run_get: 'read',
  team_run_report: 'read',
  team_run_events: 'read',
  // What a team tool may do is decided by whose pane the token is (the run's planner, one of its
  // workers): the scope a team's agent pane holds is enough to reach it.
  team_tool: 'read',
  team_mcp_ready: 'read',
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
  // A person's text to a team's workers; the run's risk gate judges it as it judges the planner's.
  team_run_send: 'send',
  team_run_resend: 'send',
  create_pane: 'create',
  run_agent: 'create',
  cancel_run: 'create',
  run_submit: 'create',
  run_cancel: 'create',
  run_interrupt: 'create',
  agent_session_open: 'create',
  agent_session_prompt: 'create',
  agent_session_cancel: 'create',
  agent_session_close: 'create',
  agent_execute: 'create',
  // A preset is a recipe for agents: which CLIs run, in which folders, under which approval rules.
  team_preset_save: 'create',
  team_preset_remove: 'create',
  team_preset_import: 'create',
  // A team run opens agents; steering it (pause, resume, end, marks) is the starter's kind of power.
  team_run_start: 'create',
  team_run_pause: 'create',
  team_run_resume: 'create',
  team_run_end: 'create',
  team_run_mark: 'create',
  team_run_restart: 'create',
  answer_approval: 'approve',
  // Letting a held text through the risk gate is an approval.
  team_run_answer: 'approve',
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
