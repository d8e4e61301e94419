/**
 * Tasks run to their end inside the daemon (`agent_execute`): CodingAgent.execute() in a pane of the
 * daemon's registry, so the pane is listed, on the dashboard and answerable through answer_approval
 * while the task runs. The result is seed 002's execute() result in wire form.
 */
import { z } from 'zod';
import { AGENT_STATES, ANSWER_MEANINGS, TOOL_KINDS } from '../../contract/index.js';
import { int, MAX_TEXT, optional } from './common.js';

export const executeParams = {
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
} as const;

/** One approval of a task, and how it was answered. */
export const executeApprovalInfoSchema = z.object({
  at: z.number(),
  id: z.string(),
  /** What the prompt asked for, as read off the screen (null when it could not be read). */
  request: z
    .object({
      tool: z.enum(TOOL_KINDS),
      tool_name: z.string().nullable(),
      command: z.string().nullable(),
      path: z.string().nullable(),
      certain: z.boolean(),
      doubts: z.array(z.string()),
      options: z.array(z.object({ label: z.string(), meaning: z.enum(ANSWER_MEANINGS).nullable() })),
    })
    .nullable(),
  decision: z.enum(['allow', 'deny', 'ask']),
  reason: z.string(),
  /** policy, callback, person (answer_approval), default, or none (asked: the task returned needs_input). */
  decided_by: z.string(),
  answered: z.object({ label: z.string(), keys: z.array(z.string()) }).nullable(),
  presses: z.number(),
});

/** What agent_execute returns: seed 002's execute() result. */
export const executeResultInfoSchema = z.object({
  /** The task's run in the ledger (run_get, run_events): it is a run of the run service. */
  run_id: z.string(),
  status: z.enum(['completed', 'error', 'timeout', 'cancelled', 'needs_input']),
  /** The pane the task ran in (null when the agent never started). */
  pane_id: z.string().nullable(),
  files_changed: z.array(z.string()),
  file_changes: z.array(z.object({ path: z.string(), change: z.string() })),
  output_log: z.string(),
  final_message: z.string().nullable(),
  duration_ms: z.number(),
  approvals: z.array(executeApprovalInfoSchema),
  error_message: z.string().nullable(),
  error_code: z.string().nullable(),
  question: z.string().nullable(),
  states: z.array(
    z.object({
      state: z.enum(AGENT_STATES),
      previous: z.enum(AGENT_STATES),
      at: z.number(),
      evidence: z.object({ rule: z.string(), pattern: z.string(), line: z.string(), row: z.number() }).nullable(),
    }),
  ),
  completed_by: z.array(z.string()),
});

export const executeResults = {
  agent_execute: executeResultInfoSchema,
} as const;
