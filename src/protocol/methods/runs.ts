/**
 * Runs and conversations: a structured run on an agent's headless mode (`run_agent`, whose entries
 * become a session's log) and multi-turn conversations on its structured mode (`agent_session_*`).
 */
import { z } from 'zod';
import { APPROVAL_DECISIONS, RUN_OUTCOMES } from '../../contract/index.js';
import { MAX_TEXT, optional, sessionId, success } from './common.js';
import { runIdSchema } from './bridge.js';

export const runParams = {
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
  /**
   * Cancels a run however it was started: a headless run by its `session_id` (run_agent), or a run of
   * the run service by its `run_id` (run_submit, the HTTP bridge, a pane run): one cancel for both.
   */
  cancel_run: z
    .strictObject({ session_id: optional(sessionId), run_id: optional(runIdSchema) })
    .refine((p) => (p.session_id === undefined) !== (p.run_id === undefined), { message: 'name the run by session_id (run_agent) or by run_id (run_submit), one of them' }),
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
  agent_session_cancel: z.strictObject({ session_id: sessionId }),
  agent_session_close: z.strictObject({ session_id: sessionId }),
} as const;

export const runResults = {
  run_agent: z.object({ session_id: z.string() }),
  cancel_run: z.object({ cancelled: z.boolean() }),
  agent_session_open: z.object({ session_id: z.string() }),
  agent_session_prompt: z.object({
    /** The turn's run in the run service (run_get, run_events, the ledger). */
    run_id: z.string(),
    status: z.enum(RUN_OUTCOMES),
    stop_reason: z.string().nullable(),
    duration_ms: z.number(),
    entries: z.number(),
    permissions: z.array(z.object({ tool_name: z.string(), decision: z.enum(APPROVAL_DECISIONS), reason: z.string(), decided_by: z.string() })),
    reply: z.string().nullable(),
  }),
  agent_session_cancel: success,
  agent_session_close: success,
} as const;
