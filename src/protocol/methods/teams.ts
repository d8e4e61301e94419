/**
 * Seed 003's teams. Presets: list, read, validate, save (which is also how one is edited), remove,
 * export and import. A preset travels as the object a person writes (JSON or YAML's shape); its
 * fields are checked where presets live (orchestration/presets/preset.ts), which names the field
 * of every problem. Runs: start one from a preset and a goal, watch its board (a version to wait
 * past, so every board is live over any transport), answer what its risk gate holds, send to a
 * worker or to all, mark a worker, pause, resume, end, and read the report.
 */
import { z } from 'zod';
import { int, MAX_TEXT, optional } from './common.js';

const presetName = z.string().min(1, 'name must not be empty').max(64);
/** A preset as written: an object whose fields the preset's own schema checks. */
const presetObject = z.record(z.string(), z.unknown());
/** An import's text: JSON or YAML, one preset or a list. */
const MAX_IMPORT_CHARS = 1024 * 1024;
/** A team run's id, as every surface checks it (JSON-RPC's `run_id`, the HTTP path's `{id}`). */
export const teamRunIdSchema = z.strictObject({ run_id: z.string().regex(/^team-[0-9a-f]{8}$/, 'run_id is team- and 8 hex digits') });
const runId = teamRunIdSchema.shape.run_id;
const workerId = z.string().min(1).max(80);
const MAX_GOAL_CHARS = 20_000;
/** Entries of a run's record one `team_run_events` page gives at most. */
const MAX_EVENTS_PAGE = 500;
/** The longest a board watch (`team_run_get` with `after_version`) waits. */
const MAX_BOARD_WAIT_MS = 60_000;

export const teamParams = {
  /** Every preset: the user's own and the built-ins they have not replaced. */
  team_preset_list: z.strictObject({}),
  team_preset_get: z.strictObject({ name: presetName }),
  /** Checks a preset without keeping it: INVALID_PARAMS naming every problem's field, or the preset with its defaults. */
  team_preset_validate: z.strictObject({ preset: presetObject }),
  /** Validates and keeps a preset, in place of one of the same name. */
  team_preset_save: z.strictObject({ preset: presetObject }),
  /** Removes one of the user's presets; a built-in one it replaced comes back. */
  team_preset_remove: z.strictObject({ name: presetName }),
  /** The preset as plain JSON text, to share. */
  team_preset_export: z.strictObject({ name: presetName }),
  /** Presets from JSON or YAML text; CONFLICT for a name the user has unless `replace`. */
  team_preset_import: z.strictObject({ text: z.string().min(1).max(MAX_IMPORT_CHARS), replace: optional(z.boolean()) }),
  /**
   * Starts a team run: a preset by name (or one given whole, checked as team_preset_validate
   * checks it) and the goal, in `folder` (where the roles' folders are). Answers at once with the
   * board (starting); the agents open in the background. `agent_home` and `model_url` run every
   * agent from its own isolated HOME under `agent_home` against that model server (tests, demos).
   */
  team_run_start: z
    .strictObject({
      preset: z.union([presetName, presetObject]),
      goal: z.string().trim().min(1, 'goal must not be empty').max(MAX_GOAL_CHARS),
      folder: z.string().min(1).max(4096),
      agent_home: optional(z.string().min(1).max(4096)),
      model_url: optional(z.url().max(2048)),
      /** Variables every agent of the run gets, as create_pane's `env`. */
      env: optional(z.record(z.string(), z.string().max(128 * 1024))),
      /** How the planner calls the team's tools: `auto` (MCP where its CLI has Switchboard's server, else marker lines) or `markers` only. */
      planner_calls: optional(z.enum(['auto', 'markers'])),
    })
    .refine((p) => (p.agent_home === undefined) === (p.model_url === undefined), { message: 'agent_home and model_url go together' }),
  /** Every run kept (the live ones and the last ended ones), the newest first. */
  team_run_list: z.strictObject({}),
  /**
   * A run's board. With `after_version`, waits (up to `wait_ms`, default 30 s) until the board has
   * changed past that version, then answers it: a live board in one call at a time.
   */
  team_run_get: z.strictObject({ run_id: runId, after_version: optional(int(0, Number.MAX_SAFE_INTEGER)), wait_ms: optional(int(0, MAX_BOARD_WAIT_MS)) }),
  team_run_pause: teamRunIdSchema,
  team_run_resume: teamRunIdSchema,
  /** Ends the run (cancelled, unless it has ended); `close_agents` closes the planner's and the workers' panes too. */
  team_run_end: z.strictObject({ run_id: runId, close_agents: z.boolean() }),
  /** A person's answer to a text the risk gate holds. */
  team_run_answer: z.strictObject({ run_id: runId, confirmation_id: z.string().min(1).max(64), decision: z.enum(['allow', 'deny']) }),
  /** Marks a worker done, blocked or needing input over what its screen says; null clears the mark. */
  team_run_mark: z.strictObject({ run_id: runId, worker_id: workerId, mark: z.enum(['completed', 'stuck', 'needs_input']).nullable() }),
  /**
   * A person's text to one worker, or to every running worker when `worker_id` is absent (a
   * broadcast), as a prompt. The risk gate judges it first: a high or medium text goes only with
   * `confirmed` (the person saw the judgement), else nothing is sent and the judgement answers.
   */
  team_run_send: z.strictObject({ run_id: runId, worker_id: optional(workerId), text: z.string().min(1).max(MAX_TEXT), confirmed: optional(z.boolean()) }),
  /** The run's report, as markdown. */
  team_run_report: teamRunIdSchema,
  /**
   * Restarts a stuck worker, or one whose CLI ended (the person's consent to what the run proposes
   * on the board): its pane closed and a new one opened, at most the preset's `stuck.max_restarts`.
   */
  team_run_restart: z.strictObject({ run_id: runId, worker_id: workerId }),
  /** Types a call's result into the planner again once it is idle: one that was undelivered or unconfirmed. */
  team_run_resend: z.strictObject({ run_id: runId, call_id: z.string().min(1).max(64) }),
  /**
   * The run's record from the ledger, in order: every change of state, worker opened, tool call
   * (with its arguments and outcome), delivery, approval decision, held text and answer, and what
   * a person sent or marked. A page after `after_seq`, at most `limit` entries.
   */
  team_run_events: z.strictObject({ run_id: runId, after_seq: optional(int(0, Number.MAX_SAFE_INTEGER)), limit: optional(int(1, MAX_EVENTS_PAGE)) }),
  /**
   * One of the team tools (`tabs.list` or `tabs_list`, …), called by a team run's agent with its
   * own pane's token (its MCP server does): the planner may call every tool on its run's workers, a
   * worker the task tools for itself, anyone else none (FORBIDDEN).
   */
  team_tool: z.strictObject({ tool: z.string().min(1).max(64), params: optional(z.record(z.string(), z.unknown())) }),
  /**
   * A team agent's MCP server says its client (the agent CLI) has connected and has the tools: a
   * planner that calls tools over MCP gets its brief only then. Called with the pane's own token.
   */
  team_mcp_ready: z.strictObject({}),
} as const;

/** A preset as the daemon answers it: every default filled in, and where it comes from. */
export const presetInfoSchema = z.object({ builtin: z.boolean(), preset: presetObject });

const workerState = z.enum(['starting', 'running', 'idle', 'stuck', 'completed', 'error', 'needs_input']);
const judgementSchema = z.object({
  level: z.enum(['low', 'medium', 'high']),
  findings: z.array(z.object({ level: z.enum(['medium', 'high']), command: z.string(), reason: z.string() })),
});

/** A team run's board, as every surface shows it. */
export const teamBoardSchema = z.object({
  run_id: z.string(),
  goal: z.string(),
  preset: z.string(),
  state: z.enum(['starting', 'running', 'paused', 'completed', 'failed', 'cancelled']),
  /** Why the run is in its state. */
  why: z.string(),
  /** Counts the board's changes: a watch waits past it. */
  version: z.number().int(),
  started_at: z.string(),
  ended_at: z.string().nullable(),
  planner: z.object({ role: z.string(), agent: z.string(), pane_id: z.string().nullable(), state: workerState }),
  /** `branch` and `changed_files`: its git worktree's (as last read), null without one; `last_check`: its role's check as it last ran. */
  workers: z.array(
    z.object({
      id: z.string(),
      role: z.string(),
      agent: z.string(),
      state: workerState,
      folder: z.string(),
      pane_id: z.string().nullable(),
      last_lines: z.array(z.string()),
      branch: z.string().nullable(),
      changed_files: z.number().int().nullable(),
      last_check: z.object({ command: z.string(), passed: z.boolean(), exit_code: z.number().int().nullable() }).nullable(),
    }),
  ),
  tasks: z.array(z.object({ id: z.string(), title: z.string(), owner: z.string().nullable(), state: z.enum(['open', 'claimed', 'done']), depends_on: z.array(z.string()), failed_check: z.string().nullable() })),
  /** The first task someone could take now. */
  next_step: z.string().nullable(),
  /** Texts the risk gate holds for a person. */
  confirmations: z.array(z.object({ id: z.string(), worker_id: z.string(), text: z.string(), judgement: judgementSchema })),
  /** The planner's tool calls: how each went, and whether its result reached the planner. */
  calls: z.array(z.object({ id: z.string(), method: z.string(), by: z.string(), via: z.enum(['markers', 'mcp']), outcome: z.string(), delivered: z.enum(['pending', 'delivered', 'unconfirmed', 'undelivered']) })),
  /** The approvals the run's agents asked for and what their role's policy decided (ask: a person is asked). */
  approvals: z.array(z.object({ member: z.string(), what: z.string(), decision: z.enum(['allow', 'deny', 'ask']), by: z.string(), reason: z.string() })),
  draft: z.string(),
  summary: z.string().nullable(),
});

const runStateResult = z.object({ run_id: z.string(), state: teamBoardSchema.shape.state });

export const teamResults = {
  team_preset_list: z.object({ presets: z.array(presetInfoSchema) }),
  team_preset_get: presetInfoSchema,
  team_preset_validate: z.object({ preset: presetObject }),
  team_preset_save: z.object({ preset: presetObject, replaced: z.boolean() }),
  team_preset_remove: z.object({ removed: z.literal(true), restored_builtin: z.boolean() }),
  team_preset_export: z.object({ name: z.string(), text: z.string() }),
  /** `review`: what the imported presets do beyond their workers' own judgement (commands run as checks, folders outside the run's, approval rules of their own), for the person to look at. */
  team_preset_import: z.object({
    imported: z.array(z.string()),
    review: z.array(z.object({ preset: z.string(), role: z.string(), what: z.enum(['check', 'folder', 'approvals']), value: z.string() })),
  }),
  team_run_start: teamBoardSchema,
  /** `sealed`: why a run's board in the ledger cannot be read here (sealed under another key), for a run that cannot. */
  team_run_list: z.object({
    runs: z.array(z.object({ run_id: z.string(), goal: z.string(), preset: z.string(), state: teamBoardSchema.shape.state, started_at: z.string(), ended_at: z.string().nullable(), workers: z.number().int(), sealed: z.string().optional() })),
  }),
  team_run_get: teamBoardSchema,
  team_run_pause: runStateResult,
  team_run_resume: runStateResult,
  team_run_end: runStateResult,
  team_run_answer: z.object({ answered: z.literal(true) }),
  team_run_mark: z.object({ worker_id: z.string(), state: workerState }),
  /** `sent`: the workers the text went to; `held`: the judgement, when it needs `confirmed` and went to none. */
  team_run_send: z.object({ sent: z.array(z.string()), judgement: judgementSchema, held: z.boolean() }),
  team_run_report: z.object({ run_id: z.string(), markdown: z.string() }),
  team_run_resend: z.object({ call_id: z.string(), delivered: z.literal('pending') }),
  team_run_restart: z.object({ worker_id: z.string(), state: workerState }),
  /** Each entry: its number, time (ms since the epoch), kind, and the kind's fields; `next_after`: the next page's `after_seq`, null at the end so far. */
  team_run_events: z.object({
    run_id: z.string(),
    entries: z.array(z.object({ seq: z.number().int(), ts: z.number().int(), kind: z.string() }).catchall(z.unknown())),
    next_after: z.number().int().nullable(),
  }),
  /** The tool's outcome as a marker line's result carries it: `{ok: true, result}` or `{ok: false, error: {code, message}}`. */
  team_mcp_ready: z.object({ ready: z.literal(true) }),
  team_tool: z.union([z.object({ ok: z.literal(true), result: z.unknown() }), z.object({ ok: z.literal(false), error: z.object({ code: z.string(), message: z.string() }) })]),
} as const;
