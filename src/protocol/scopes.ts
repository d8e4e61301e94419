/**
 * What a token may do, by scope. The owner's token (in the runtime file, and given to the shells
 * the user opens) has every scope. An agent pane's programs get a token of their own with `read`
 * and `ask`, plus what the user grants when creating the pane; never the owner's. Every surface
 * checks the scope of every call (the dispatcher, before the method runs).
 */
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
