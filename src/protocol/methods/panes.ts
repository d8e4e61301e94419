/**
 * The pane methods (seed 000's six and their extensions): create, type into, read, wait on,
 * subscribe to, resize, kill and remove panes; and the notifications a pane subscription sends.
 */
import { z } from 'zod';
import { SCOPES } from '../scopes.js';
import { agentStateSchema, approvalInfoSchema, int, MAX_TEXT, nodeNameSchema, optional, paneId, subscriptionId, success } from './common.js';

const SIGNALS = ['TERM', 'INT', 'HUP', 'QUIT', 'KILL', 'USR1', 'USR2'] as const;
const SUBSCRIBE_EVENTS = ['output', 'exit', 'screen', 'state'] as const;

export const paneParams = {
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
      /** On a cluster controller: open the pane on this node (a program; an agent on a node runs as a run). */
      node: optional(nodeNameSchema),
    })
    .refine((p) => p.agent === undefined || (p.command === undefined && p.argv === undefined), { message: 'give agent, or command/argv, not both' })
    // An agent works on a project: starting one in whatever folder the daemon runs from is never meant.
    .refine((p) => p.agent === undefined || p.cwd !== undefined, { message: 'an agent needs cwd: the folder it works in' })
    .refine((p) => (p.agent_home === undefined) === (p.model_url === undefined), { message: 'agent_home and model_url go together' })
    .refine((p) => p.agent !== undefined || (p.agent_home === undefined && p.args === undefined && p.first_run === undefined && p.grants === undefined), {
      message: 'agent_home, model_url, args, first_run and grants need an agent',
    })
    // An agent on a node is tracked, governed and resumable as a run there: run_submit {node, mode: "pty"}.
    .refine((p) => p.node === undefined || p.agent === undefined, { message: 'an agent on a node starts as a run (run_submit with backend, prompt, node and mode "pty"), not with create_pane' }),
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
} as const;

export const paneInfoSchema = z.object({
  pane_id: z.string(),
  title: z.string(),
  alive: z.boolean(),
  pid: z.number().optional(),
  cwd: z.string(),
  command: z.string(),
  cols: z.number(),
  rows: z.number(),
  exit_code: z.number().nullable().optional(),
  signal: z.string().nullable().optional(),
  created_at: z.string(),
  exited_at: z.string().optional(),
  window_title: z.string(),
  /** The agent CLI the pane runs, if started as one. */
  agent: z.object({ name: z.string(), version: z.string().nullable() }).optional(),
  /** Where the pane sits when the tmux front end made it. */
  tmux: z.object({ socket: z.string(), session: z.string(), window: z.string(), window_index: z.number(), pane: z.string(), title: z.string() }).optional(),
  /** The cluster node the pane runs on, on a controller (its pane_id is then `<node>/<pane>`); absent for the daemon's own. */
  node: z.string().optional(),
});

const cursorSchema = z.object({ x: z.number(), y: z.number(), visible: z.boolean() });

export const screenResultSchema = z.object({
  text: z.string(),
  lines: z.array(z.string()),
  cols: z.number(),
  rows: z.number(),
  cursor: cursorSchema,
  alt_screen: z.boolean(),
  window_title: z.string(),
});

export const waitForResultSchema = z.object({
  matched: z.boolean(),
  reason: z.enum(['matched', 'idle', 'timeout', 'exited', 'cancelled']),
  match: z.string().optional(),
  line: z.string().optional(),
  elapsed_ms: z.number(),
});

/** The input modes a pane's program has set, as a screen frame carries them. */
export const inputModesSchema = z.object({ bracketed_paste: z.boolean(), application_cursor_keys: z.boolean(), mouse_tracking: z.string(), send_focus: z.boolean() });

export const paneResults = {
  create_pane: z.object({
    pane_id: z.string(),
    title: z.string(),
    pid: z.number(),
    agent: z
      .object({ name: z.string(), version: z.string().nullable(), ready_ms: z.number(), dialogs: z.array(z.object({ id: z.string(), decision: z.enum(['accept', 'decline']) })) })
      .optional(),
  }),
  send_text: success,
  send_keys: success,
  send_prompt: success,
  paste: z.object({ success: z.literal(true), bracketed: z.boolean() }),
  is_alive: z.object({ alive: z.boolean(), pid: z.number().optional(), exit_code: z.number().nullable().optional(), signal: z.string().nullable().optional() }),
  get_text: z.object({ text: z.string(), total_lines: z.number() }),
  get_screen: screenResultSchema,
  list: z.object({ panes: z.array(paneInfoSchema) }),
  kill: z.object({ success: z.literal(true), exit_code: z.number().nullable(), signal: z.string().nullable() }),
  remove: success,
  resize: z.object({ success: z.literal(true), cols: z.number(), rows: z.number() }),
  wait_for: waitForResultSchema,
  subscribe: z.object({ subscription: z.string() }),
  unsubscribe: success,
} as const;

export const paneNotifications = {
  /** Output of a pane, in order, after the screen parsed it. `offset` is the byte offset in the pane's output stream where `data` starts. */
  output: z.object({ subscription: z.string(), pane_id: z.string(), data: z.string(), offset: z.number() }),
  /** A pane's process exited. */
  exit: z.object({ subscription: z.string(), pane_id: z.string(), exit_code: z.number().nullable(), signal: z.string().nullable() }),
  /** A pane's screen changed: the rows that differ from the last frame sent (all rows when `full`). */
  screen: z.object({
    subscription: z.string(),
    pane_id: z.string(),
    full: z.boolean(),
    cols: z.number(),
    rows: z.number(),
    cursor: cursorSchema,
    alt_screen: z.boolean(),
    modes: inputModesSchema,
    changed: z.array(z.tuple([z.number(), z.string()])),
  }),
  /** The client read too slowly and output was dropped; re-read the screen to catch up. */
  overflow: z.object({ subscription: z.string(), pane_id: z.string(), dropped_bytes: z.number(), resume_offset: z.number() }),
  /** An agent pane's state changed (subscribe with events ['state']). */
  state: z.object({
    subscription: z.string(),
    pane_id: z.string(),
    state: agentStateSchema,
    previous: agentStateSchema,
    at: z.number(),
    approval: approvalInfoSchema.nullable(),
    question: z.string().optional(),
    error: z.string().optional(),
  }),
  /** A subscription to all panes saw a new pane. */
  pane_created: z.object({ subscription: z.string(), pane_id: z.string(), title: z.string() }),
  /**
   * A subscription to a pane on another host (`<node>/<pane>`) cannot go on: its node no longer has
   * the pane, stopped, or stopped answering. Nothing follows; the subscription is gone.
   */
  subscription_ended: z.object({ subscription: z.string(), pane_id: z.string(), code: z.string(), message: z.string() }),
} as const;
