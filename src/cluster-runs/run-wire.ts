/**
 * What crosses the network for a run between a controller and a node: the work item's payload
 * (what a node needs to start a controller's run under its own policy) and a run's event in the
 * ledger's v2 wire form, checked on the way in as every wire of Switchboard is.
 */
import { z } from 'zod';
import { RUN_EVENT_TYPES, renderEvent, type RunEvent } from '../ledger/run-events.js';
import { GIT_REF_PATTERN, REPO_NAME_PATTERN, RUN_MODES, type RunMode, type RunSpec } from '../ledger/run-model.js';
import type { RunEventMessage } from '../cluster/index.js';

const limit = z.number().int().positive().optional();

/** A work item's payload: the run as the controller recorded it, for the node's run service. */
export const RunWorkSchema = z.object({
  backend: z.string().min(1).max(64),
  prompt: z.string().min(1),
  cwd: z.string().min(1),
  /** What the caller asked for: `auto` leaves the choice to the node's drivers. */
  mode: z.enum(['auto', ...RUN_MODES]),
  schema_version: z.enum(['v1', 'v2']),
  /** The controller's bounds; the node's policy may lower them, never raise them. */
  limits: z.strictObject({ wall_clock_ms: limit, no_output_ms: limit, max_output_bytes: limit, max_events: limit }),
  created_by: z.string().min(1),
  /** The CLI's own conversation id the run resumes (RunSpec.agent_session), where it resumes one. */
  agent_session: z.string().min(1).max(512).optional(),
  /** With `agent_session`: the run whose conversation it resumes (on its own node, the node's copy says where the CLI is). */
  resumes: z.string().min(1).max(128).optional(),
  /** The run it follows up in its conversation, kept open on this node (a run this node ran). */
  parent: z.string().min(1).max(128).optional(),
  /** Keep its conversation open on the node for a follow-up (absent: not). */
  keep_alive: z.boolean().optional(),
  /** The repository it runs in, on its branch (RunSpec.repo): `cwd` is then a folder inside the node's worktree of it. */
  repo: z
    .strictObject({
      name: z.string().regex(REPO_NAME_PATTERN),
      ref: z.string().regex(GIT_REF_PATTERN).optional(),
      branch: z.string().regex(/^switchboard\/runs\/[A-Za-z0-9_-]{1,64}$/),
      push: z.boolean(),
    })
    .optional(),
});

export type RunWork = z.infer<typeof RunWorkSchema>;

/** The payload of a recorded run's work item. */
export function runWork(spec: RunSpec, mode: 'auto' | RunMode): RunWork {
  return { backend: spec.backend, prompt: spec.prompt, cwd: spec.cwd, mode, schema_version: spec.schema_version, limits: { ...spec.limits }, created_by: spec.created_by ?? 'owner', ...(spec.agent_session !== undefined ? { agent_session: spec.agent_session, ...(spec.parent !== null ? { resumes: spec.parent } : {}) } : {}), ...(spec.parent !== null && spec.agent_session === undefined ? { parent: spec.parent } : {}), ...(spec.keep_alive !== undefined ? { keep_alive: spec.keep_alive } : {}), ...(spec.repo ? { repo: { ...spec.repo } } : {}) };
}

const WireEventSchema = z.object({
  schema_version: z.literal('v2'),
  type: z.enum(RUN_EVENT_TYPES),
  run_id: z.string().min(1),
  seq: z.number().int().positive(),
  ts: z.number(),
  data: z.record(z.string(), z.unknown()),
  compat: z.object({ text: z.string(), status: z.string(), is_error: z.boolean() }),
});

/** The longest text a cut event keeps of its `compat.text`, and of any one field of its data. */
const CUT_TEXT_CHARS = 8 * 1024;

/**
 * A recorded event as the node publishes it. One whose JSON is more than `maxBytes` (the server's
 * max_payload) could never be published, and the run's later events would wait behind it for
 * ever: it goes cut, its data's long fields shortened, saying how large it was (`cut_bytes`), or,
 * still too large, as no more than its kind and place; the node's own ledger keeps it whole. The
 * controller judges no cut decision again: it stops the run (policy-recheck.ts).
 */
export function eventMessage(event: RunEvent, maxBytes = Infinity): RunEventMessage {
  const message = renderEvent(event, 'v2');
  const bytes = Buffer.byteLength(JSON.stringify(message));
  if (bytes <= maxBytes || message.schema_version !== 'v2') return { ...message };
  const short = (value: unknown): unknown => {
    if (typeof value === 'string') return value.length > CUT_TEXT_CHARS ? `${value.slice(0, CUT_TEXT_CHARS)}… (cut)` : value;
    return JSON.stringify(value ?? null).length > CUT_TEXT_CHARS ? '(cut)' : value;
  };
  const data = Object.fromEntries(Object.entries(message.data).map(([key, value]) => [key, short(value)]));
  const cut = { ...message, data: { ...data, cut_bytes: bytes }, compat: { ...message.compat, text: short(message.compat.text) as string } };
  if (Buffer.byteLength(JSON.stringify(cut)) <= maxBytes) return cut;
  return { ...message, data: { cut_bytes: bytes }, compat: { ...message.compat, text: '(cut)' } };
}

/** The event in a message from a node, or undefined when it is not one this side reads. */
export function eventFromMessage(message: RunEventMessage): RunEvent | undefined {
  const parsed = WireEventSchema.safeParse(message);
  if (!parsed.success) return undefined;
  const { type, run_id, seq, ts, data, compat } = parsed.data;
  return { type, run_id, seq, ts, data, compat };
}
