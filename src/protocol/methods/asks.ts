/**
 * The ask methods (seed 000's flow: an agent asks an agent): `ask` types a question into a target
 * pane once it is idle and returns its answer (or, with wait=false, the ask's id at once);
 * `ask_wait`, `ask_get`, `ask_cancel` and `ask_list` for the rest; `ask_targets` lists the agent
 * panes an ask can name; `set_askable` marks a pane (not) askable.
 */
import { z } from 'zod';
import { ASK_ID_SOURCE, ASK_ID_WORDS, MAX_ASK_TIMEOUT_MS, MAX_QUESTION_CHARS } from '../../contract/ask.js';
import { int, optional, paneId, success } from './common.js';

/** The statuses of an ask (src/asks/lifecycle.ts). */
export const ASK_WIRE_STATUSES = ['queued', 'typing', 'waiting', 'done', 'failed', 'timed_out', 'cancelled'] as const;
/** The statuses an ask ends in (it changes no more). */
export const ASK_FINAL_WIRE_STATUSES: readonly (typeof ASK_WIRE_STATUSES)[number][] = ['done', 'failed', 'timed_out', 'cancelled'];
const askId = z.string().regex(new RegExp(ASK_ID_SOURCE), ASK_ID_WORDS);

export const askParams = {
  ask: z.strictObject({
    /** A pane id or title, or an agent name (that agent's pane in the caller's folder, or the only one). */
    target: z.string().min(1).max(256),
    question: z.string().min(1).max(MAX_QUESTION_CHARS),
    /** Wait for the outcome (default) or return the ask at once (its reply delivered into from_pane_id when given). */
    wait: optional(z.boolean()),
    /** From the ask's creation to its reply, queue time included (default 10 minutes). */
    timeout_ms: optional(int(1, MAX_ASK_TIMEOUT_MS)),
    /**
     * Type the outcome into the asker's pane once it is idle (default: when not waiting and the
     * asker is an agent pane). A caller that waits with ask_wait instead says false.
     */
    deliver: optional(z.boolean()),
    /** The asker's pane (a pane's own token implies it). */
    from_pane_id: optional(paneId),
    /** The asker's folder: an agent name resolves to that agent's pane here first. */
    cwd: optional(z.string().min(1).max(4096)),
    /** Who asks, for the record (an agent name, or "cli"). */
    from_name: optional(z.string().min(1).max(64)),
  }),
  ask_wait: z.strictObject({ ask_id: askId, timeout_ms: optional(int(0, MAX_ASK_TIMEOUT_MS)) }),
  ask_get: z.strictObject({ ask_id: askId }),
  ask_cancel: z.strictObject({ ask_id: askId }),
  ask_list: z.strictObject({ limit: optional(int(1, 1_000)) }),
  ask_targets: z.strictObject({}),
  set_askable: z.strictObject({ pane_id: paneId, askable: z.boolean() }),
} as const;

const errorSchema = z.object({ code: z.string(), message: z.string() });

/** An ask as every surface reports it. Times are milliseconds since the epoch. */
export const askInfoSchema = z.object({
  ask_id: z.string(),
  status: z.enum(ASK_WIRE_STATUSES),
  target: z.object({ pane_id: z.string(), agent: z.string().nullable(), title: z.string() }),
  from: z.object({ pane_id: z.string().nullable(), cwd: z.string().nullable(), name: z.string().nullable() }).nullable(),
  question: z.string(),
  reply: z.string().nullable(),
  /** Where the reply was read: the CLI's transcript, or its screen. */
  reply_source: z.enum(['transcript', 'screen']).nullable(),
  error: errorSchema.nullable(),
  queued_behind: z.number(),
  created_at: z.number(),
  started_at: z.number().nullable(),
  typed_at: z.number().nullable(),
  ended_at: z.number().nullable(),
  /** For an async ask delivered into the asker's pane: none, pending (not typed yet: the ask under way, or the asker busy), delivering (being typed), delivered, failed. */
  delivery: z.string(),
  delivered_at: z.number().nullable(),
});

export const askTargetSchema = z.object({
  pane_id: z.string(),
  agent: z.string().nullable(),
  state: z.string(),
  folder: z.string(),
  title: z.string(),
  alive: z.boolean(),
  askable: z.boolean(),
});

export const askResults = {
  ask: askInfoSchema,
  ask_wait: askInfoSchema,
  ask_get: askInfoSchema,
  ask_cancel: askInfoSchema,
  ask_list: z.object({ asks: z.array(askInfoSchema) }),
  ask_targets: z.object({ targets: z.array(askTargetSchema) }),
  set_askable: success,
} as const;
