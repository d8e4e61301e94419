/**
 * The agent bridge's runs (seed 004) over JSON-RPC: submit, see, list, cancel, read and follow a
 * run's events from the run ledger, and the backends with their health. The HTTP API
 * (`/api/v2/agent/*`) offers the same operations and shares these schemas for what it answers.
 */
import { z } from 'zod';
import { GIT_REF_PATTERN, REPO_NAME_PATTERN, RUN_EVENT_TYPES, RUN_MODES, RUN_STATUSES, SCHEMA_VERSIONS } from '../../contract/index.js';
import { MAX_TIME_LIMIT_MS } from '../../core/long-timer.js';
import { MAX_TEXT, int, nodeNameSchema, optional, subscriptionId } from './common.js';

const positiveInt = z.number().int().positive();
/** A time limit: 30 days at most, as in policy.yaml. */
const timeLimit = positiveInt.max(MAX_TIME_LIMIT_MS, `at most ${MAX_TIME_LIMIT_MS} ms (30 days)`);
/** Run ids as the run service makes them; anything else cannot name a run. */
export const runIdSchema = z.string().min(1).max(64).regex(/^[A-Za-z0-9_-]+$/, 'a run id has only letters, digits, _ and -');
/** A schema version the client proposes: its latest (v1, v2, …); the answer is the one the server speaks. */
export const schemaVersionProposal = z.string().regex(/^v\d{1,3}$/, 'a schema version looks like v1 or v2');

/** A repository by the name a cluster node registers it under (`switchboard node --repo NAME=PATH|URL`). */
export const repoNameSchema = z.string().regex(REPO_NAME_PATTERN, 'a repository name: letters, digits, ., _ and -, at most 64, not starting with . or -');
/** A git ref a repository run's branch starts from: a branch, a tag or a commit. */
export const gitRefSchema = z.string().regex(GIT_REF_PATTERN, 'a git ref: a branch, tag or commit (letters, digits, ., _, / and -; not starting with . or -)');

/** The bounds a caller may tighten (never loosen) below the policy's. */
export const runLimitsSchema = z.strictObject({
  wall_clock_ms: timeLimit.optional(),
  no_output_ms: timeLimit.optional(),
  max_output_bytes: positiveInt.optional(),
  max_events: positiveInt.optional(),
});

/** A run as every surface shows it: what it is, and where it is in its state machine. */
export const runViewSchema = z.strictObject({
  id: z.string(),
  backend: z.string(),
  mode: z.enum(RUN_MODES),
  prompt: z.string().describe('The prompt; in a list only its first KiB, cut on a character boundary (prompt_truncated): the run itself has it whole.'),
  prompt_bytes: z.number().int().describe("The whole prompt's size in UTF-8 bytes."),
  prompt_truncated: z.boolean().describe('True when prompt is a preview, shorter than the whole prompt.'),
  cwd: z.string(),
  real_cwd: z.string().optional().describe("The folder's real path at admission: the run starts there, and only if cwd still leads there."),
  created_by: z.string().optional().describe('Who made the run: owner, or the pane whose token submitted it. Only its maker or the owner may cancel it.'),
  policy: z.string(),
  policy_hash: z.string().optional().describe("sha256 of the policy file's rules the run was admitted under (a cluster run: the controller's)."),
  node: z.string().optional().describe('The cluster node the run was sent to (a controller\'s run); absent: it runs where it was submitted.'),
  repo: z
    .strictObject({ name: z.string(), ref: z.string().optional(), branch: z.string(), push: z.boolean() })
    .optional()
    .describe("The repository its node runs it in (a cluster run's): a git worktree of the node's copy on `branch`, from `ref` (absent: its HEAD), pushed to its origin after the run when `push`; cwd is a folder inside the worktree."),
  limits: runLimitsSchema,
  schema_version: z.enum(SCHEMA_VERSIONS),
  parent: z.string().nullable(),
  agent_session: z.string().optional().describe("The agent CLI's own conversation id this run resumed (its parent's), by the CLI's own resume."),
  keep_alive: z.boolean().optional().describe("Its conversation stays open after it for a follow-up (under the policy's limits.idle_conversations and limits.idle_ms); false: the agent CLI ended with the run."),
  created_at: z.number(),
  status: z.enum(RUN_STATUSES),
  reason: z.string().nullable(),
  message: z.string(),
  started_at: z.number().nullable(),
  ended_at: z.number().nullable(),
  last_seq: z.number().int(),
  queue_position: z.number().int().nullable(),
});

const compatSchema = z.strictObject({ text: z.string(), status: z.string(), is_error: z.boolean() });
/** One of a run's events in the schema version the reader speaks: v2 with `data` and `compat`, v1 flat. */
export const runEventSchema = z.union([
  z.strictObject({ schema_version: z.literal('v2'), type: z.enum(RUN_EVENT_TYPES), run_id: z.string(), seq: z.number().int(), ts: z.number(), data: z.record(z.string(), z.unknown()), compat: compatSchema }),
  z.strictObject({ schema_version: z.literal('v1'), type: z.enum(RUN_EVENT_TYPES), run_id: z.string(), seq: z.number().int(), ts: z.number(), text: z.string(), status: z.string(), is_error: z.boolean() }),
]);

const idleCountSchema = z.strictObject({
  conversations: z.number().int().describe('Conversations (agent CLIs) kept open for a follow-up now.'),
  processes: z.number().int().describe('The processes they hold, children included (Linux; elsewhere 0).'),
});

/** The conversations kept open for follow-ups over every backend, and the policy's bounds on them. */
export const idleConversationsSchema = idleCountSchema.extend({
  max: z.number().int().describe('limits.idle_conversations: the most kept at once over every backend; past it the least recently used is closed.'),
  idle_ms: z.number().int().describe('limits.idle_ms: how long one stays open after its last run.'),
  backends: z.record(z.string(), idleCountSchema),
});

/** A backend (agent profile) with its modes, capabilities and health. */
/** The labels a cluster node must all have to take a run (`switchboard node --labels`). */
export const runLabelsSchema = z.array(z.string().min(1).max(64)).max(16);
export { nodeNameSchema };

/** A live node of the cluster: what its lease says, and when the lease was last renewed. */
export const clusterNodeSchema = z.strictObject({
  name: z.string(),
  labels: z.array(z.string()).describe('What a run can ask of a node (`run_submit` labels).'),
  clis: z.array(z.strictObject({ name: z.string(), version: z.string() })).describe('The agent CLIs the node has, with their versions: the backends its runs can use.'),
  repos: z.array(z.string()).describe('The repositories the node has at hand, by name (`run_submit` repo).'),
  slots: z.strictObject({ total: z.number().int(), free: z.number().int() }),
  started_at: z.number().describe("When the node's process started (ms since the epoch)."),
  seen_at: z.number().describe('When its lease was last renewed, as the controller saw it (ms since the epoch).'),
});

export const backendInfoSchema = z.strictObject({
  name: z.string(),
  modes: z.array(z.enum(RUN_MODES)),
  default_mode: z.enum(RUN_MODES),
  capabilities: z.array(z.record(z.string(), z.unknown())),
  health: z.record(z.string(), z.unknown()),
  idle: idleCountSchema.describe("Its conversations kept open for a follow-up now, and their processes."),
});

export const bridgeParams = {
  /** Submits a run: one prompt to one backend in one folder under the policy (seed 004's POST /api/v2/agent/run). */
  run_submit: z.strictObject({
    backend: z.string().min(1).max(64),
    prompt: z.string().min(1).max(MAX_TEXT),
    cwd: optional(z.string().min(1).max(4096)),
    mode: optional(z.enum(['auto', ...RUN_MODES])),
    schema_version: optional(schemaVersionProposal),
    parent: optional(runIdSchema),
    /** Keep the agent CLI open after the run for a follow-up (default true); false ends it with the run. */
    keep_alive: optional(z.boolean()),
    limits: optional(runLimitsSchema),
    /** A controller's run: only a cluster node with every one of these labels takes it. */
    labels: optional(runLabelsSchema),
    /** A controller's run: this node takes it (live, with the backend and the labels; with no free slot, the run waits for one there). */
    node: optional(nodeNameSchema),
    /** Resume this ended (or orphaned) run's agent conversation by the CLI's own resume; recorded as the parent. */
    resume: optional(runIdSchema),
    /** A controller's run: in a git worktree of this repository, on a node that has it, on a branch of the run's own (cwd: a folder inside it). */
    repo: optional(repoNameSchema),
    /** With repo: what the run's branch starts from (default: the node's HEAD of it). */
    ref: optional(gitRefSchema),
    /** With repo: push the run's branch to the repository's origin after the run. */
    push: optional(z.boolean()),
  }),
  run_get: z.strictObject({ run_id: runIdSchema }),
  /** Runs from the ledger, newest first. */
  run_list: z.strictObject({
    status: optional(z.enum(RUN_STATUSES)),
    backend: optional(z.string().min(1).max(64)),
    limit: optional(int(1, 1_000)),
    before: optional(int(0, Number.MAX_SAFE_INTEGER)),
  }),
  run_cancel: z.strictObject({ run_id: runIdSchema }),
  /** Ends a run's turn and keeps its conversation for a follow-up (`parent`), where its CLI can; else a cancel. */
  run_interrupt: z.strictObject({ run_id: runIdSchema }),
  /** A run's recorded events after `after` (a sequence number), at most `limit`: a replay from the ledger. */
  run_events: z.strictObject({
    run_id: runIdSchema,
    after: optional(int(0, Number.MAX_SAFE_INTEGER)),
    limit: optional(int(1, 10_000)),
    schema_version: optional(schemaVersionProposal),
  }),
  /** Follows a run: its recorded events after `after`, then the live ones, as `run_event` notifications, ending with `run_stream_end`. */
  run_subscribe: z.strictObject({
    run_id: runIdSchema,
    after: optional(int(0, Number.MAX_SAFE_INTEGER)),
    schema_version: optional(schemaVersionProposal),
  }),
  run_backends: z.strictObject({}),
  /** The cluster's live nodes, where this daemon is a controller (`up --cluster`). */
  run_nodes: z.strictObject({}),
} as const;

export const bridgeResults = {
  run_submit: z.object({ run: runViewSchema }),
  run_get: z.object({ run: runViewSchema }),
  run_list: z.object({
    runs: z.array(runViewSchema),
    /** The `before` of the next page (a page stops at its limit or about 4 MiB), or null at the end. */
    next_before: z.number().int().nullable(),
  }),
  run_cancel: z.object({ run: runViewSchema }),
  run_interrupt: z.object({ run: runViewSchema }),
  run_events: z.object({
    run: runViewSchema,
    schema_version: z.enum(SCHEMA_VERSIONS),
    events: z.array(runEventSchema),
    /** The `after` of the next page (a page stops at its limit or about 4 MiB), or null once it reached the last event recorded. */
    next_after: z.number().int().nullable(),
  }),
  run_subscribe: z.object({ subscription: z.string(), run_id: z.string(), schema_version: z.enum(SCHEMA_VERSIONS) }),
  run_backends: z.object({ schema_versions: z.array(z.enum(SCHEMA_VERSIONS)), backends: z.array(backendInfoSchema), idle: idleConversationsSchema }),
  run_nodes: z.object({
    cluster: z.boolean().describe('True when this daemon is a cluster controller (`up --cluster`); false: no node, runs run here.'),
    nodes: z.array(clusterNodeSchema),
  }),
} as const;

export const bridgeNotifications = {
  /** One event of a followed run, in order, with no gap or duplicate. */
  run_event: z.object({ subscription: subscriptionId, run_id: z.string(), event: runEventSchema }),
  /** The followed run's `done` was delivered (`ended`), or following it failed (`error`, with a message); nothing follows. */
  run_stream_end: z.object({ subscription: subscriptionId, run_id: z.string(), reason: z.enum(['ended', 'error']), message: z.string().optional() }),
} as const;
