/**
 * The method contract shared by the server and the client: every method's parameters (as zod
 * schemas that validate and give precise errors) and results (as types). Names and shapes follow
 * seed 000 for its six methods; the rest extend them in the same style (snake_case).
 */
import { z } from 'zod';
import type { LogMsg } from '../output/log-msg.js';
// Type only: the wire names the states the tracker has (src/agents/state-tracker.ts).
import type { AgentState } from '../agents/state-tracker.js';
import { SCOPES } from './scopes.js';

/** An optional parameter: absent, undefined and JSON null all mean "not given". */
const optional = <T extends z.ZodType>(schema: T) => schema.nullish().transform((v) => v ?? undefined);

const paneId = z.string().min(1, 'pane_id must not be empty').max(128);
const sessionId = z.string().min(1, 'session_id must not be empty').max(128);
const subscriptionId = z.string().min(1).max(128);
const int = (min: number, max: number) => z.number().int().min(min).max(max);
const MAX_TEXT = 1024 * 1024;

export const SIGNALS = ['TERM', 'INT', 'HUP', 'QUIT', 'KILL', 'USR1', 'USR2'] as const;
export const SUBSCRIBE_EVENTS = ['output', 'exit', 'screen', 'state'] as const;

export const paramSchemas = {
  create_pane: z
    .strictObject({
      command: optional(z.string().max(64 * 1024)),
      argv: optional(z.array(z.string().max(64 * 1024)).min(1).max(4096)),
      cwd: optional(z.string().min(1).max(4096)),
      title: optional(z.string().max(256)),
      env: optional(z.record(z.string(), z.string().max(128 * 1024))),
      cols: optional(int(2, 1000)),
      rows: optional(int(1, 500)),
      scrollback: optional(int(0, 1_000_000)),
      /** Start this agent's CLI (a profile name) and return once it sits at its idle prompt. */
      agent: optional(z.string().min(1).max(64)),
      /** Arguments added to the agent's own. */
      args: optional(z.array(z.string().max(64 * 1024)).max(256)),
      /** Run the agent from this isolated HOME (seeded with config) against model_url. */
      agent_home: optional(z.string().min(1).max(4096)),
      model_url: optional(z.url().max(2048)),
      /** How to answer first-run questions (all true by default). */
      first_run: optional(z.strictObject({ trust_folder: optional(z.boolean()), use_env_api_key: optional(z.boolean()), keep_current_model: optional(z.boolean()) })),
      ready_timeout_ms: optional(int(1_000, 600_000)),
      /** Scopes the agent pane's token gets beyond read and ask (docs/rpc.md, "Tokens and scopes"). */
      grants: optional(z.array(z.enum(SCOPES)).max(SCOPES.length)),
    })
    .refine((p) => p.agent === undefined || (p.command === undefined && p.argv === undefined), { message: 'give agent, or command/argv, not both' })
    // An agent works on a project: starting one in whatever folder the daemon runs from is never meant.
    .refine((p) => p.agent === undefined || p.cwd !== undefined, { message: 'an agent needs cwd: the folder it works in' })
    .refine((p) => (p.agent_home === undefined) === (p.model_url === undefined), { message: 'agent_home and model_url go together' })
    .refine((p) => p.agent !== undefined || (p.agent_home === undefined && p.args === undefined && p.first_run === undefined && p.grants === undefined), {
      message: 'agent_home, model_url, args, first_run and grants need an agent',
    }),
  send_text: z.strictObject({
    pane_id: paneId,
    text: z.string().max(MAX_TEXT),
    add_newline: optional(z.boolean()),
  }),
  send_keys: z.strictObject({
    pane_id: paneId,
    keys: z.array(z.string().min(1).max(64)).min(1).max(4096),
    /** Write each key on its own, this many ms apart (TUI menus read a burst of keys as one event). */
    interval_ms: optional(int(0, 5_000)),
  }),
  send_prompt: z.strictObject({
    pane_id: paneId,
    text: z.string().min(1).max(MAX_TEXT),
  }),
  paste: z.strictObject({
    pane_id: paneId,
    text: z.string().max(MAX_TEXT),
    bracketed: optional(z.enum(['auto', 'always', 'never'])),
  }),
  is_alive: z.strictObject({ pane_id: paneId }),
  get_text: z.strictObject({
    pane_id: paneId,
    lines: optional(int(0, 1_000_000)),
    join_wrapped: optional(z.boolean()),
  }),
  get_screen: z.strictObject({
    pane_id: paneId,
    ansi: optional(z.boolean()),
  }),
  list: z.strictObject({}),
  kill: z.strictObject({
    pane_id: paneId,
    signal: optional(z.enum(SIGNALS)),
    grace_ms: optional(int(0, 60_000)),
  }),
  remove: z.strictObject({
    pane_id: paneId,
    grace_ms: optional(int(0, 60_000)),
  }),
  resize: z.strictObject({
    pane_id: paneId,
    cols: int(2, 1000),
    rows: int(1, 500),
  }),
  wait_for: z
    .strictObject({
      pane_id: paneId,
      pattern: optional(z.string()),
      flags: optional(z.string().max(8)),
      idle_ms: optional(int(1, 3_600_000)),
      timeout_ms: optional(int(1, 3_600_000)),
      lines: optional(int(1, 100_000)),
    })
    .refine((p) => p.pattern !== undefined || p.idle_ms !== undefined, { message: 'give pattern, idle_ms, or both' }),
  subscribe: z.strictObject({
    pane_id: optional(paneId),
    events: optional(z.array(z.enum(SUBSCRIBE_EVENTS)).min(1).max(SUBSCRIBE_EVENTS.length)),
    replay: optional(z.boolean()),
  }),
  unsubscribe: z.strictObject({ subscription: subscriptionId }),
  /** Every session with a log: each pane's, and each structured run's. */
  log_sessions: z.strictObject({}),
  /** The state of every agent pane now, with the approval it waits on. */
  pane_states: z.strictObject({}),
  /** A fresh one-time login URL for the web dashboard. */
  dashboard_login: z.strictObject({}),
  /** Answers the approval an agent pane waits on, with the option that means allow-once or deny. */
  answer_approval: z.strictObject({ pane_id: paneId, decision: z.enum(['allow', 'deny']), approval_id: optional(z.string().min(1).max(256)) }),
  /** Seed 001's logStream:subscribe: the session's retained history (unless history is false), then live. */
  log_subscribe: z.strictObject({ session_id: sessionId, history: optional(z.boolean()) }),
  log_unsubscribe: z.strictObject({ subscription: subscriptionId }),
  /** Seed 001's logStream:getHistory: retained messages after `after_seq`, oldest first, at most `limit`. */
  log_get_history: z.strictObject({ session_id: sessionId, after_seq: optional(int(0, Number.MAX_SAFE_INTEGER)), limit: optional(int(1, 10_000)) }),
  /** Writes the session's whole log (spilled part included) as JSONL to a private file in the daemon's home. */
  log_export: z.strictObject({ session_id: sessionId }),
  /** Runs a prompt in an agent's structured headless mode; its entries become a new session's log. */
  run_agent: z
    .strictObject({
      agent: z.string().min(1).max(64),
      prompt: z.string().min(1).max(MAX_TEXT),
      cwd: z.string().min(1).max(4096),
      args: optional(z.array(z.string().max(64 * 1024)).max(256)),
      agent_home: optional(z.string().min(1).max(4096)),
      model_url: optional(z.url().max(2048)),
    })
    .refine((p) => (p.agent_home === undefined) === (p.model_url === undefined), { message: 'agent_home and model_url go together' }),
  cancel_run: z.strictObject({ session_id: sessionId }),
  /** Opens a multi-turn session on an agent's structured mode (one conversation across prompts). */
  agent_session_open: z
    .strictObject({
      agent: z.string().min(1).max(64),
      cwd: z.string().min(1).max(4096),
      args: optional(z.array(z.string().max(64 * 1024)).max(256)),
      agent_home: optional(z.string().min(1).max(4096)),
      model_url: optional(z.url().max(2048)),
      /** How permission requests are judged: auto (allow inside the workdir) or ask (everything is asked, so denied). */
      policy: optional(z.enum(['auto', 'ask'])),
    })
    .refine((p) => (p.agent_home === undefined) === (p.model_url === undefined), { message: 'agent_home and model_url go together' }),
  agent_session_prompt: z.strictObject({ session_id: sessionId, prompt: z.string().min(1).max(MAX_TEXT) }),
  /**
   * Runs a task to its end in a daemon pane (CodingAgent.execute() inside the daemon): the pane is
   * listed, on the dashboard and answerable through answer_approval while the task runs.
   */
  agent_execute: z
    .strictObject({
      agent: z.string().min(1).max(64),
      task: z.string().min(1).max(MAX_TEXT),
      cwd: z.string().min(1).max(4096),
      /** How approvals are judged: auto (shell and file tools inside cwd), ask (default: everything asked), or a policy ({rules, default}). */
      policy: optional(z.union([z.enum(['auto', 'ask']), z.record(z.string(), z.unknown())])),
      /** An approval the policy leaves open waits for answer_approval instead of ending the task with needs_input. */
      wait_for_approval: optional(z.boolean()),
      timeout_ms: optional(int(1_000, 24 * 3_600_000)),
      idle_timeout_ms: optional(int(1_000, 24 * 3_600_000)),
      /** Leave the pane running at its prompt once the task ends (default: removed). */
      keep_pane: optional(z.boolean()),
      args: optional(z.array(z.string().max(64 * 1024)).max(256)),
      agent_home: optional(z.string().min(1).max(4096)),
      model_url: optional(z.url().max(2048)),
    })
    .refine((p) => (p.agent_home === undefined) === (p.model_url === undefined), { message: 'agent_home and model_url go together' }),
  agent_session_cancel: z.strictObject({ session_id: sessionId }),
  agent_session_close: z.strictObject({ session_id: sessionId }),
  /** Runs one tmux command line (the `tmux` launcher's argv) against the daemon's tmux front end. */
  tmux_command: z.strictObject({
    argv: z.array(z.string().max(MAX_TEXT)).max(4096),
    /** The client's whole environment (tmux's server takes it at start; TMUX_PANE names the client's pane). */
    env: optional(z.record(z.string(), z.string().max(128 * 1024))),
    cwd: optional(z.string().min(1).max(4096)),
    /** The client's standard input is a terminal (attach-session and new-session without -d need one). */
    tty: optional(z.boolean()),
    /** The client's standard input, sent once a reply asked for it (load-buffer -). */
    stdin: optional(z.string().max(16 * MAX_TEXT)),
  }),
  agents: z.strictObject({}),
  info: z.strictObject({}),
  ping: z.strictObject({}),
  shutdown: z.strictObject({}),
} as const;

export type MethodName = keyof typeof paramSchemas;
export const METHOD_NAMES = Object.keys(paramSchemas) as MethodName[];

/** What a caller sends (before defaults and null handling). */
export type ParamsInput<M extends MethodName> = z.input<(typeof paramSchemas)[M]>;
/** What a handler receives after validation. */
export type Params<M extends MethodName> = z.output<(typeof paramSchemas)[M]>;

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
  /** The agent CLI the pane runs, if started as one. */
  agent?: { name: string; version: string | null };
  /** Where the pane sits when the tmux front end made it. */
  tmux?: { socket: string; session: string; window: string; window_index: number; pane: string; title: string };
}

export interface AgentInfo {
  name: string;
  display_name: string;
  builtin: boolean;
  /** Where the program was found, or null. */
  binary: string | null;
}

export interface ScreenResult {
  text: string;
  lines: string[];
  cols: number;
  rows: number;
  cursor: { x: number; y: number; visible: boolean };
  alt_screen: boolean;
  window_title: string;
}

export interface WaitForResult {
  matched: boolean;
  reason: 'matched' | 'idle' | 'timeout' | 'exited' | 'cancelled';
  match?: string;
  line?: string;
  elapsed_ms: number;
}

export interface InfoResult {
  name: 'switchboard';
  version: string;
  pid: number;
  started_at: string;
  uptime_ms: number;
  panes: { total: number; alive: number };
  transports: { tcp?: { host: string; port: number }; socket?: string; dashboard?: { host: string; port: number } };
  limits: { max_request_bytes: number; max_connections: number };
  /** The daemon process's memory, in bytes. */
  memory: { rss: number; heap_total: number; heap_used: number; external: number; array_buffers: number };
  /** The budget for what panes and sessions hold of their output: each member (pane or session) has an equal share. */
  output_budget: { total_bytes: number; members: number; share_bytes: number; spill_total_bytes: number };
  /** What the daemon found at start of a daemon of the same home that had died (SIGKILL, a crash), and ended. */
  recovered?: {
    daemon_pids: number[];
    panes: number;
    processes: number;
    survivors: number[];
    runtime_file_removed: boolean;
    socket_removed: boolean;
  };
}

/** An approval prompt as parsed from an agent's screen. */
export interface ApprovalInfo {
  /** Names this prompt for answer_approval (the toolCallId of its entry in the pane's log). */
  id: string | null;
  tool: string;
  tool_name: string | null;
  command: string | null;
  path: string | null;
  options: { label: string; meaning: string | null }[];
}

/** An agent pane's state (see src/agents/state-tracker.ts for the states). */
export interface PaneStateInfo {
  pane_id: string;
  state: AgentState;
  approval: ApprovalInfo | null;
}

/** One approval of a task run by agent_execute, and how it was answered. */
export interface ExecuteApprovalInfo {
  at: number;
  id: string;
  /** What the prompt asked for, as read off the screen (null when it could not be read). */
  request: { tool: string; tool_name: string | null; command: string | null; path: string | null; certain: boolean; doubts: string[]; options: { label: string; meaning: string | null }[] } | null;
  decision: 'allow' | 'deny' | 'ask';
  reason: string;
  /** policy, callback, person (answer_approval), default, or none (asked: the task returned needs_input). */
  decided_by: string;
  answered: { label: string; keys: string[] } | null;
  presses: number;
}

/** What agent_execute returns: seed 002's execute() result. */
export interface ExecuteResultInfo {
  status: 'completed' | 'error' | 'timeout' | 'cancelled' | 'needs_input';
  /** The pane the task ran in (null when the agent never started). */
  pane_id: string | null;
  files_changed: string[];
  file_changes: { path: string; change: string }[];
  output_log: string;
  final_message: string | null;
  duration_ms: number;
  approvals: ExecuteApprovalInfo[];
  error_message: string | null;
  error_code: string | null;
  question: string | null;
  states: { state: AgentState; previous: AgentState; at: number; evidence: { rule: string; pattern: string; line: string; row: number } | null }[];
  completed_by: string[];
}

/** A session as log_sessions lists it. */
export interface SessionInfo {
  session_id: string;
  kind: 'pane' | 'run' | 'session';
  title: string;
  agent: string | null;
  created_at: string;
  finished: boolean;
  stats: { retained: number; retainedBytes: number; evicted: number; lastSeq: number; subscribers: number; dropped: number; unspilled: number };
}

/** One message of a session's log with its place in it (seq counts from 1, never repeats). */
export interface LogMessage {
  seq: number;
  msg: LogMsg;
}

export interface Results {
  create_pane: {
    pane_id: string;
    title: string;
    pid: number;
    agent?: { name: string; version: string | null; ready_ms: number; dialogs: { id: string; decision: 'accept' | 'decline' }[] };
  };
  send_prompt: { success: true };
  /** `problems`: entries of the user's profile file that were skipped, and why. */
  agents: { agents: AgentInfo[]; problems: string[] };
  send_text: { success: true };
  send_keys: { success: true };
  paste: { success: true; bracketed: boolean };
  is_alive: { alive: boolean; pid?: number; exit_code?: number | null; signal?: string | null };
  get_text: { text: string; total_lines: number };
  get_screen: ScreenResult;
  list: { panes: PaneInfo[] };
  kill: { success: true; exit_code: number | null; signal: string | null };
  remove: { success: true };
  resize: { success: true; cols: number; rows: number };
  wait_for: WaitForResult;
  subscribe: { subscription: string };
  unsubscribe: { success: true };
  log_sessions: { sessions: SessionInfo[] };
  pane_states: { states: PaneStateInfo[] };
  dashboard_login: { url: string };
  answer_approval: { success: true; answered: { label: string | null; keys: string[] } };
  log_subscribe: { subscription: string; session_id: string };
  log_unsubscribe: { success: true };
  log_get_history: { session_id: string; messages: LogMessage[]; finished: boolean; evicted: number; last_seq: number };
  log_export: { session_id: string; path: string; messages: number };
  run_agent: { session_id: string };
  cancel_run: { cancelled: boolean };
  agent_session_open: { session_id: string };
  agent_session_prompt: {
    status: 'completed' | 'failed' | 'cancelled';
    stop_reason: string | null;
    duration_ms: number;
    entries: number;
    permissions: { tool_name: string; decision: 'allow' | 'deny'; reason: string; decided_by: string }[];
    reply: string | null;
  };
  agent_session_cancel: { success: true };
  agent_session_close: { success: true };
  agent_execute: ExecuteResultInfo;
  /** What tmux would have printed and its exit code; `attach` names a pane to attach the terminal to; `need_stdin` asks for the call again with stdin. */
  tmux_command: { stdout: string; stderr: string; exit_code: number; attach?: string; need_stdin?: boolean };
  info: InfoResult;
  ping: { pong: true; time: string };
  shutdown: { success: true };
}

export type Result<M extends MethodName> = Results[M];

/** Server-to-client notifications for subscriptions. */
export interface Notifications {
  /** Output of a pane, in order, after the screen parsed it. `offset` is the byte offset in the pane's output stream where `data` starts. */
  output: { subscription: string; pane_id: string; data: string; offset: number };
  /** A pane's process exited. */
  exit: { subscription: string; pane_id: string; exit_code: number | null; signal: string | null };
  /** A pane's screen changed: the rows that differ from the last frame sent (all rows when `full`). */
  screen: {
    subscription: string;
    pane_id: string;
    full: boolean;
    cols: number;
    rows: number;
    cursor: { x: number; y: number; visible: boolean };
    alt_screen: boolean;
    modes: { bracketed_paste: boolean; application_cursor_keys: boolean; mouse_tracking: string; send_focus: boolean };
    changed: [number, string][];
  };
  /** The client read too slowly and output was dropped; re-read the screen to catch up. */
  overflow: { subscription: string; pane_id: string; dropped_bytes: number; resume_offset: number };
  /** An agent pane's state changed (subscribe with events ['state']). */
  state: { subscription: string; pane_id: string; state: AgentState; previous: AgentState; at: number; approval: ApprovalInfo | null; question?: string; error?: string };
  /** New messages of a session's log, in order, batched (seed 001's logStream:message). */
  log_message: { subscription: string; session_id: string; messages: LogMessage[] };
  /** The session ended; no message follows (seed 001's logStream:finished). */
  log_finished: { subscription: string; session_id: string };
  /** The subscriber fell too far behind and was let go; read log_get_history to catch up. */
  log_dropped: { subscription: string; session_id: string; reason: string; last_seq: number };
  /** A subscription to all panes saw a new pane. */
  pane_created: { subscription: string; pane_id: string; title: string };
}

export type NotificationName = keyof Notifications;

/** Formats zod issues as one readable line: `lines: Too big: expected number to be <=1000000`. */
export function describeIssues(error: z.ZodError): string {
  return error.issues
    .map((issue) => {
      if (issue.code === 'unrecognized_keys') return `unknown parameter${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => `'${k}'`).join(', ')}`;
      const where = issue.path.length > 0 ? `${issue.path.join('.')}: ` : '';
      return `${where}${issue.message}`;
    })
    .join('; ');
}
