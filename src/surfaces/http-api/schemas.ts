/**
 * The HTTP API's requests and answers as zod schemas: the same schemas validate every request and
 * generate the OpenAPI 3.1 document (`openapi.ts`), so the document cannot drift from what the
 * server accepts. Request bodies are strict: an unknown field is an error, never silently ignored.
 */
import { z } from 'zod';
import { ERROR_CODES } from '../../core/errors.js';
import { RUN_STATUSES } from '../../contract/index.js';
import { askInfoSchema, askParams, askTargetSchema } from '../../protocol/methods/asks.js';
import { teamBoardSchema, teamParams, teamResults } from '../../protocol/methods/teams.js';
import { backendInfoSchema, bridgeResults, gitRefSchema, idleConversationsSchema, nodeNameSchema, repoNameSchema, runLabelsSchema, runEventSchema as wireRunEventSchema, runIdSchema as wireRunIdSchema, runLimitsSchema, runViewSchema as wireRunViewSchema, schemaVersionProposal } from '../../protocol/methods/bridge.js';

const RUN_STATUS = RUN_STATUSES;
/** Run ids as the service makes them; anything else cannot name a run. */
const runIdSchema = wireRunIdSchema;
/** A schema version the client proposes: its latest (v1, v2, …). */
const schemaVersion = schemaVersionProposal;

/** The same schemas as JSON-RPC's run_* methods (protocol/methods/bridge.ts). */
const limitsSchema = runLimitsSchema;

export const runRequestSchema = z
  .strictObject({
    backend: z.string().min(1).max(64).describe('The backend (agent profile): claude, codex, gemini, opencode, aider, or a user profile.'),
    prompt: z.string().min(1).max(1_000_000),
    cwd: z.string().min(1).max(4_096).optional().describe("The folder the agent works in; it must be inside the policy's sandbox. A follow-up takes its parent's."),
    mode: z.enum(['auto', 'stdio', 'pty']).optional().describe('auto (default): the structured mode on stdio where the CLI has one, else its screen in a PTY.'),
    schema_version: schemaVersion.optional().describe("The latest event schema the client speaks; the answer's schema_version is the one the server will speak."),
    parent: runIdSchema.optional().describe('Continue this earlier run in the same agent conversation.'),
    keep_alive: z.boolean().optional().describe("Keep the agent CLI open after the run for a follow-up naming it as parent (default true; at most limits.idle_conversations over every backend, each for limits.idle_ms); false ends the CLI with the run."),
    limits: limitsSchema.optional().describe("Tighter bounds than the policy's (never looser)."),
    labels: runLabelsSchema.optional().describe('On a cluster controller: only a node with every one of these labels takes the run (GET /api/v2/agent/nodes lists them).'),
    node: nodeNameSchema.optional().describe('On a cluster controller: this node takes the run; it must be live, with the backend and the labels (with no free slot, the run waits for one there, queued).'),
    resume: runIdSchema.optional().describe("Resume this ended run's agent conversation (or a cluster run's whose node was lost: it is orphaned, and ends cancelled) by the CLI's own resume, in a new CLI process; recorded as the run's parent."),
    repo: repoNameSchema.optional().describe("On a cluster controller: the run works in a git worktree of this repository, on a node that has it (GET /api/v2/agent/nodes lists them), on a branch of its own, switchboard/runs/<run>; cwd is then a folder inside the worktree (default: its top). A follow-up and a resume go on on their run's branch."),
    ref: gitRefSchema.optional().describe("With repo: what the run's branch starts from, a branch, tag or commit of the node's copy (default: its HEAD)."),
    push: z.boolean().optional().describe("With repo: push the run's branch to the repository's origin after the run (default false); a resume on another node fetches it from there."),
  })
  .describe('A run to submit.');

export const cancelRequestSchema = z.strictObject({ run_id: runIdSchema });

export const streamQuerySchema = z.strictObject({
  run_id: runIdSchema,
  schema_version: schemaVersion.optional(),
  /** Resume after this event (the Last-Event-ID header says the same, and wins). */
  last_event_id: z.string().regex(/^\d{1,15}$/).optional(),
});

export const runsQuerySchema = z.strictObject({
  status: z.enum(RUN_STATUS).optional(),
  backend: z.string().min(1).max(64).optional(),
  limit: z.string().regex(/^\d{1,4}$/).optional(),
  before: z.string().regex(/^\d{1,15}$/).optional(),
});

export const runQuerySchema = z.strictObject({
  /** Include the run's events (after `after`, at most `limit`). */
  events: z.enum(['true', 'false']).optional(),
  after: z.string().regex(/^\d{1,15}$/).optional(),
  limit: z.string().regex(/^\d{1,5}$/).optional(),
  schema_version: schemaVersion.optional(),
});

const chatContentPart = z.looseObject({ type: z.string(), text: z.string().optional() });
const chatMessage = z.looseObject({
  role: z.enum(['system', 'developer', 'user', 'assistant', 'tool']),
  content: z.union([z.string(), z.array(chatContentPart), z.null()]).optional(),
});

/**
 * OpenAI Chat Completions, as `/api/v2/chat/proxy` takes it: `model` names a backend. Every other
 * field OpenAI defines is accepted: the sampling parameters, tools, response formats and reasoning
 * settings have no effect (a coding agent chooses its own and calls its own tools) and are named in
 * the answer's `X-Switchboard-Ignored` header; a field OpenAI does not define is an error.
 */
export const chatRequestSchema = z.strictObject({
  model: z.string().min(1).max(64),
  messages: z.array(chatMessage).min(1).max(1_000),
  stream: z.boolean().optional(),
  stream_options: z.looseObject({ include_usage: z.boolean().optional() }).nullable().optional(),
  temperature: z.number().nullable().optional(),
  top_p: z.number().nullable().optional(),
  n: z.literal(1).nullable().optional(),
  max_tokens: z.number().int().nullable().optional(),
  max_completion_tokens: z.number().int().nullable().optional(),
  presence_penalty: z.number().nullable().optional(),
  frequency_penalty: z.number().nullable().optional(),
  stop: z.union([z.string(), z.array(z.string())]).nullable().optional(),
  user: z.string().optional(),
  seed: z.number().int().nullable().optional(),
  metadata: z.record(z.string(), z.string()).nullable().optional(),
  store: z.boolean().nullable().optional(),
  parallel_tool_calls: z.boolean().nullable().optional(),
  logit_bias: z.record(z.string(), z.number()).nullable().optional(),
  logprobs: z.boolean().nullable().optional(),
  top_logprobs: z.number().int().nullable().optional(),
  response_format: z.looseObject({ type: z.string() }).nullable().optional(),
  tools: z.array(z.looseObject({ type: z.string() })).nullable().optional(),
  tool_choice: z.union([z.string(), z.looseObject({ type: z.string() })]).nullable().optional(),
  functions: z.array(z.looseObject({ name: z.string() })).nullable().optional(),
  function_call: z.union([z.string(), z.looseObject({ name: z.string() })]).nullable().optional(),
  reasoning_effort: z.string().nullable().optional(),
  verbosity: z.string().nullable().optional(),
  modalities: z.array(z.string()).nullable().optional(),
  audio: z.looseObject({}).nullable().optional(),
  prediction: z.looseObject({ type: z.string() }).nullable().optional(),
  service_tier: z.string().nullable().optional(),
  web_search_options: z.looseObject({}).nullable().optional(),
  prompt_cache_key: z.string().nullable().optional(),
  safety_identifier: z.string().nullable().optional(),
});

export const errorSchema = z.strictObject({
  error: z.strictObject({
    code: z.enum(ERROR_CODES).describe('The stable code, the same as JSON-RPC `data.code`.'),
    rpc_code: z.number().int().describe('The JSON-RPC numeric code of the same error.'),
    /** OpenAI clients read `type`: the code in lower case. */
    type: z.string(),
    message: z.string(),
    details: z.record(z.string(), z.unknown()).optional(),
  }),
});

export const runEventSchema = wireRunEventSchema;

/** A run as the HTTP API answers it: the same as JSON-RPC's, with where to follow it. */
export const runViewSchema = wireRunViewSchema.extend({ stream_url: z.string() });

export const backendsResponseSchema = z.strictObject({
  schema_versions: z.array(z.string()),
  backends: z.array(backendInfoSchema),
  idle: idleConversationsSchema,
});

/** `GET /api/v2/agent/nodes`: JSON-RPC `run_nodes`'s answer. */
export const nodesResponseSchema = bridgeResults.run_nodes;

export type ChatRequest = z.infer<typeof chatRequestSchema>;

/** An endpoint that takes no query parameters (any given is an error). */
export const emptyQuerySchema = z.strictObject({});

/** `POST /api/v2/asks`: the `ask` method's parameters, as JSON-RPC takes them (the same schema). */
export const askRequestSchema = askParams.ask;
/** `POST /api/v2/asks/{id}/wait`: `ask_wait`'s, with the id in the path. */
export const askWaitRequestSchema = askParams.ask_wait.omit({ ask_id: true });
/** `POST /api/v2/asks/{id}/cancel` takes nothing (an empty body, or `{}`). */
export const askCancelRequestSchema = z.strictObject({});
/** `GET /api/v2/asks`: `ask_list`'s filters as query strings; the numbers are then checked by `ask_list`'s schema. */
export const askListQuerySchema = z.strictObject({
  limit: z.string().regex(/^\d{1,9}$/, 'limit is a whole number').optional().describe('The newest this many asks (1 to 1000; default 100).'),
});
/** An ask as every surface reports it (JSON-RPC's `ask_get` result). */
export const askSchema = askInfoSchema;
export const askListResponseSchema = z.strictObject({ asks: z.array(askInfoSchema) });
export const askTargetsResponseSchema = z.strictObject({ targets: z.array(askTargetSchema) });

/** `POST /api/v2/teams`: `team_run_start`'s parameters, as JSON-RPC takes them. */
export const teamRunRequestSchema = teamParams.team_run_start;
/** `GET /api/v2/teams/{id}`: a board watch as query strings, then checked by `team_run_get`'s schema. */
export const teamBoardQuerySchema = z.strictObject({
  after_version: z.string().regex(/^\d{1,15}$/, 'after_version is a whole number').optional().describe('Answer once the board has changed past this version (a live board: pass the version you got).'),
  wait_ms: z.string().regex(/^\d{1,6}$/, 'wait_ms is a whole number').optional().describe('With after_version, wait at most this long (default 30000, at most 60000).'),
});
export const teamEndRequestSchema = teamParams.team_run_end.omit({ run_id: true });
export const teamAnswerRequestSchema = teamParams.team_run_answer.pick({ decision: true });
export const teamMarkRequestSchema = teamParams.team_run_mark.pick({ mark: true });
export const teamSendRequestSchema = teamParams.team_run_send.omit({ run_id: true });
/** Pause and resume take nothing (an empty body, or `{}`). */
export const teamControlRequestSchema = z.strictObject({});
export const teamBoardResponseSchema = teamBoardSchema;
export const teamListResponseSchema = teamResults.team_run_list;
export const teamStateResponseSchema = teamResults.team_run_pause;
export const teamSendResponseSchema = teamResults.team_run_send;
export const teamMarkResponseSchema = teamResults.team_run_mark;
export const teamReportResponseSchema = teamResults.team_run_report;
/** `GET /api/v2/teams/{id}/events`: a page of the run's record as query strings, then checked by `team_run_events`'s schema. */
export const teamEventsQuerySchema = z.strictObject({
  after_seq: z.string().regex(/^\d{1,15}$/, 'after_seq is a whole number').optional().describe('Entries after this one (the page before gave it as next_after).'),
  limit: z.string().regex(/^\d{1,3}$/, 'limit is a whole number').optional().describe('At most this many entries (default 200, at most 500).'),
});
export const teamEventsResponseSchema = teamResults.team_run_events;
