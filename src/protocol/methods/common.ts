/** What every method group's schemas share: ids, bounds, optional parameters, the shared vocabulary as schemas. */
import { z } from 'zod';
import { AGENT_STATES, ANSWER_MEANINGS, ENTRY_STATUSES, ENTRY_TYPES, TOOL_KINDS, type ApprovalInfo, type LogMsg, type NormalizedEntry } from '../../contract/index.js';

/** An optional parameter: absent, undefined and JSON null all mean "not given". */
export const optional = <T extends z.ZodType>(schema: T) => schema.nullish().transform((v) => v ?? undefined);

export const paneId = z.string().min(1, 'pane_id must not be empty').max(128);
/** A cluster node's name, as `switchboard node --name` makes it (subject-safe). */
export const nodeNameSchema = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'a node name: letters, digits, _ and -, at most 64');
export const sessionId = z.string().min(1, 'session_id must not be empty').max(128);
export const subscriptionId = z.string().min(1).max(128);
export const int = (min: number, max: number) => z.number().int().min(min).max(max);
/** The largest text a request carries (a prompt, a paste). */
export const MAX_TEXT = 1024 * 1024;

/** `{success: true}`, the reply of a method that has nothing else to say. */
export const success = z.object({ success: z.literal(true) });

/** Seed 001's NormalizedEntry. */
const normalizedEntrySchema: z.ZodType<NormalizedEntry> = z.object({
  id: z.string(),
  type: z.enum(ENTRY_TYPES),
  timestamp: z.number(),
  content: z.string(),
  metadata: z
    .object({
      toolName: z.string().optional(),
      toolInput: z.record(z.string(), z.unknown()).optional(),
      toolOutput: z.string().optional(),
      exitCode: z.number().optional(),
      filePath: z.string().optional(),
      status: z.enum(ENTRY_STATUSES).optional(),
      toolCallId: z.string().optional(),
    })
    .optional(),
});

/** Seed 001's LogMsg. */
export const logMsgSchema: z.ZodType<LogMsg> = z.discriminatedUnion('type', [
  z.object({ type: z.literal('stdout'), content: z.string() }),
  z.object({ type: z.literal('stderr'), content: z.string() }),
  z.object({ type: z.literal('normalized'), entry: normalizedEntrySchema }),
]);

/** An approval prompt as the wire carries it. */
export const approvalInfoSchema: z.ZodType<ApprovalInfo> = z.object({
  id: z.string().nullable(),
  tool: z.enum(TOOL_KINDS),
  tool_name: z.string().nullable(),
  command: z.string().nullable(),
  path: z.string().nullable(),
  options: z.array(z.object({ label: z.string(), meaning: z.enum(ANSWER_MEANINGS).nullable() })),
});

export const agentStateSchema = z.enum(AGENT_STATES);

export { describeIssues } from '../../core/zod-issues.js';
