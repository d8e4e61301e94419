/**
 * The part of the daemon's contract the dashboard uses: JSON-RPC methods over `/ws` (as in
 * docs/rpc.md, without the token, which the server adds from the session cookie), their results,
 * and the notifications the server pushes. Declared here rather than imported from src/protocol,
 * which pulls in zod and Node-only code the browser bundle must not carry.
 */
import type { LogMsg } from '../../../src/events/log-msg.js';

export type { LogMsg };
export type { NormalizedEntry, EntryMetadata } from '../../../src/events/entry.js';

export const AGENT_STATES = ['starting', 'idle', 'thinking', 'executing', 'waiting_approval', 'waiting_input', 'error', 'exited'] as const;
export type AgentState = (typeof AGENT_STATES)[number];

export interface PaneInfo {
  pane_id: string;
  title: string;
  alive: boolean;
  pid?: number;
  cwd: string;
  command: string;
  cols: number;
  rows: number;
  exit_code?: number | null;
  signal?: string | null;
  created_at: string;
  exited_at?: string;
  window_title: string;
  agent?: { name: string; version: string | null };
}

export interface AgentInfo {
  name: string;
  display_name: string;
  builtin: boolean;
  /** Where the program was found; null when it is not installed. */
  binary: string | null;
}

/** An approval prompt on an agent's screen, as the server parsed it. */
export interface Approval {
  /** Names this prompt, so an answer meant for it never lands on the next one. */
  id: string | null;
  tool: string;
  tool_name: string | null;
  command: string | null;
  path: string | null;
  options: { label: string; meaning: string | null }[];
}

export interface PaneStateEntry {
  pane_id: string;
  state: AgentState;
  approval: Approval | null;
}

export interface LogMessage {
  seq: number;
  msg: LogMsg;
}

/** A session with a log: a pane's (its id is the pane's), a structured run's, a multi-turn driver's. */
export interface SessionInfo {
  session_id: string;
  kind: 'pane' | 'run' | 'session';
  title: string;
  agent: string | null;
  created_at: string;
  finished: boolean;
}

export interface CreatePaneParams {
  command?: string;
  cwd?: string;
  title?: string;
  agent?: string;
  agent_home?: string;
  model_url?: string;
}

/** Parameters and result of each method the dashboard calls. */
export interface Methods {
  list: { params: Record<string, never>; result: { panes: PaneInfo[] } };
  agents: { params: Record<string, never>; result: { agents: AgentInfo[]; problems: string[] } };
  pane_states: { params: Record<string, never>; result: { states: PaneStateEntry[] } };
  create_pane: {
    params: CreatePaneParams;
    result: { pane_id: string; title: string; pid: number; agent?: { name: string; version: string | null; ready_ms: number } };
  };
  kill: { params: { pane_id: string }; result: { success: true; exit_code: number | null; signal: string | null } };
  remove: { params: { pane_id: string }; result: { success: true } };
  send_text: { params: { pane_id: string; text: string; add_newline?: boolean }; result: { success: true } };
  answer_approval: {
    params: { pane_id: string; decision: 'allow' | 'deny'; approval_id?: string };
    result: { success: true; answered: { label: string | null; keys: string[] } };
  };
  subscribe: { params: { pane_id?: string; events?: ('output' | 'exit' | 'screen' | 'state')[] }; result: { subscription: string } };
  unsubscribe: { params: { subscription: string }; result: { success: true } };
  log_sessions: { params: Record<string, never>; result: { sessions: SessionInfo[] } };
  log_subscribe: { params: { session_id: string; history?: boolean }; result: { subscription: string; session_id: string } };
  log_unsubscribe: { params: { subscription: string }; result: { success: true } };
}

export type MethodName = keyof Methods;

/** Every notification the dashboard listens for, by method. */
export interface Notifications {
  state: {
    subscription: string;
    pane_id: string;
    state: AgentState;
    previous: AgentState;
    at: string | number;
    approval: Approval | null;
    question?: string;
    error?: string;
  };
  exit: { subscription: string; pane_id: string; exit_code: number | null; signal: string | null };
  pane_created: { subscription: string; pane_id: string; title: string };
  log_message: { subscription: string; session_id: string; messages: LogMessage[] };
  log_finished: { subscription: string; session_id: string };
  log_dropped: { subscription: string; session_id: string; reason: string; last_seq: number };
}

export type NotificationName = keyof Notifications;

/** A control message on a pane's terminal socket (text frames; output comes as binary frames). */
export type PaneControlMessage = { type: 'exit'; exit_code: number | null; signal: string | null } | { type: 'reset' } | { type: 'error'; message: string };
