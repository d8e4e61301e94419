/**
 * Seed 004's run as every surface names it: its statuses (`queued -> running -> streaming ->
 * completed | failed | cancelled`, and `orphaned` on the way for a run whose cluster node was lost), how it is carried out (stdio or PTY), and the types of event
 * the ledger records for it (seed 004's six, plus what the bridge itself records). The state
 * machine over these is src/ledger/run-model.ts.
 */

/**
 * `orphaned` (issue 26) is not an end: a cluster node that held the run lost its lease, so nobody
 * knows whether the agent still runs; the person chooses what becomes of it: cancel it, or resume
 * its conversation in a new run (which ends it cancelled).
 */
export const RUN_STATUSES = ['queued', 'running', 'streaming', 'orphaned', 'completed', 'failed', 'cancelled'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];
/** How a run ended (a bridge run's end, a headless run's, a conversation turn's): one vocabulary. */
export const END_STATUSES = ['completed', 'failed', 'cancelled'] as const satisfies readonly RunStatus[];
export type EndStatus = (typeof END_STATUSES)[number];
export const isEnded = (status: RunStatus): status is EndStatus => (END_STATUSES as readonly RunStatus[]).includes(status);

/** How a run is carried out: a CLI's structured mode on stdio, or its interactive screen in a PTY. */
export const RUN_MODES = ['stdio', 'pty'] as const;
export type RunMode = (typeof RUN_MODES)[number];

/** A run's recorded events: state changes, inputs, policy decisions, notices, raw output (when on), and seed 004's six. */
export const RUN_EVENT_TYPES = ['state', 'input', 'decision', 'notice', 'output', 'token', 'tool_call', 'tool_result', 'patch', 'done', 'error'] as const;
export type RunEventType = (typeof RUN_EVENT_TYPES)[number];

/**
 * A repository a cluster node has at hand, by the name it registers it under (`switchboard node
 * --repo NAME=PATH|URL`), and a git ref a run starts its branch from (a branch, a tag, a commit):
 * what a run may name (issue 26 item 5). A ref never starts with `-`, so git never takes it for an option.
 */
export const REPO_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
export const GIT_REF_PATTERN = /^[A-Za-z0-9_][A-Za-z0-9._/-]{0,199}$/;
