/**
 * Seed 004's run: one prompt given to one backend in one working folder under one policy, and its
 * state machine `queued -> running -> streaming -> completed | failed | cancelled`, with
 * `orphaned` beside it for a run on a cluster node (issue 26): the node that held it (queued there,
 * running or streaming) lost its lease, and whether the agent still runs is unknown. Orphaned is
 * not an end: the person chooses, cancel it or resume it (a new run continues its conversation). Pure: no I/O,
 * no clock of its own (every step is given its time), so the ledger, the supervisor and the tests
 * all agree on what a legal life of a run is.
 *
 * Types plus the step function; the names every surface shares are in contract/bridge-run.ts.
 */
import { SwitchboardError } from '../core/errors.js';
import { GIT_REF_PATTERN, REPO_NAME_PATTERN, RUN_MODES, RUN_STATUSES, isEnded, type EndStatus, type RunMode, type RunStatus } from '../contract/index.js';

export { GIT_REF_PATTERN, REPO_NAME_PATTERN, RUN_MODES, RUN_STATUSES, isEnded, type EndStatus, type RunMode, type RunStatus };

/** Why a run completed: the agent ended its turn. */
export const COMPLETED_REASONS = ['finished'] as const;
/**
 * Why a run failed. `timeout`: past its wall-clock limit; `no_output_timeout`: silent too long;
 * `output_limit`: past its bytes or events; `crashed`: the CLI died mid-run; `interrupted`: the
 * service that ran it stopped (a daemon restart finds it in flight); `policy`: governance refused
 * it; `agent_error`: the agent reported an error (a model error, a refusal); `spawn_failed`: the
 * CLI could not be started; `needs_input`: a screen-driven agent asked a question nobody answers; `not_started`: a run sent
 * to a cluster node that no node ever started, given up (its node was lost, or its work item went
 * unclaimed), so ending it is not a retry.
 */
export const FAILED_REASONS = ['timeout', 'no_output_timeout', 'output_limit', 'crashed', 'interrupted', 'policy', 'agent_error', 'spawn_failed', 'needs_input', 'not_started'] as const;
/** Why a run was cancelled: a caller asked, or the service shut down with the run under way. */
export const CANCELLED_REASONS = ['cancelled_by_user', 'shutdown'] as const;

type CompletedReason = (typeof COMPLETED_REASONS)[number];
export type FailedReason = (typeof FAILED_REASONS)[number];
export type CancelledReason = (typeof CANCELLED_REASONS)[number];
export type EndReason = CompletedReason | FailedReason | CancelledReason;

/** The bounds a run runs under (all optional: absent means no bound). */
export interface RunLimits {
  /** Wall-clock time from start to end, in ms. */
  wall_clock_ms?: number;
  /** Longest time without any event while running, in ms. */
  no_output_ms?: number;
  /** Bytes of events (their JSON) a run may produce. */
  max_output_bytes?: number;
  /** Events a run may produce (state changes and inputs not counted). */
  max_events?: number;
}

/**
 * The repository a cluster node runs a run in (issue 26 item 5): the node makes a git worktree of
 * it on a branch of the run's own, and the run's `cwd` is a folder inside that worktree.
 */
export interface RunRepo {
  /** The repository, by the name its node registers it under. */
  name: string;
  /** What the branch started from (a branch, tag or commit of the node's copy); absent: its HEAD. */
  ref?: string;
  /** The run's branch, `switchboard/runs/<run>`: a follow-up's and a resume's are the first run's. */
  branch: string;
  /** Push the branch to the repository's `origin` after each run (a resume on another node fetches it from there). */
  push: boolean;
}

/** The branch a repository run that starts one makes: named after the run. */
export function repoBranchOf(runId: string): string {
  return `switchboard/runs/${runId}`;
}

/** What a run is: fixed when it is submitted, never changed after. */
export interface RunSpec {
  id: string;
  backend: string;
  mode: RunMode;
  prompt: string;
  /** The working folder as given (the sandbox checks its real path). */
  cwd: string;
  /**
   * The folder's real path at admission: the run starts there, and only if `cwd` still leads there
   * (absent in runs recorded before it was kept).
   */
  real_cwd?: string;
  /** Who made it: `owner`, or the pane whose token submitted it (absent in runs recorded before it was kept: the owner). */
  created_by?: string;
  /** The policy it runs under: the policy file's name and the backend's overrides applied, by name. */
  policy: string;
  /**
   * The hash of the policy file's rules it was admitted under (GovernancePolicy.hash); on a
   * controller's run sent to a node, the controller's (the node records its own). Absent in runs
   * recorded before it was kept, and in runs whose caller named its own rules.
   */
  policy_hash?: string;
  limits: RunLimits;
  schema_version: 'v1' | 'v2';
  /** The earlier run this one follows up (a follow-up prompt in the same agent conversation, or a resume of it), or null. */
  parent: string | null;
  /**
   * The agent CLI's own conversation id this run resumes, by the CLI's own resume (Claude
   * `--resume`, Codex `thread/resume`, ACP `session/load`): its parent's, recorded by the parent's
   * run (agentSessionEvent). Absent: the run opens a new conversation, or follows up an open one.
   */
  agent_session?: string;
  /**
   * Its conversation stays open after it for a follow-up (in the idle pool, under
   * `limits.idle_conversations`); false: the CLI ends with the run. Absent in runs recorded before it was kept.
   */
  keep_alive?: boolean;
  /**
   * The cluster node a controller sent it to (issue 26): the node runs it and its events are the
   * node's; absent: it runs in the service that recorded it.
   */
  node?: string;
  /** The repository its node runs it in, on a branch of its own (a cluster run's only); absent: it runs in `cwd` as given. */
  repo?: RunRepo;
  /** Milliseconds since the epoch. */
  created_at: number;
}

/** The state of a run, one type per status: only an ended run has a reason and an end time. */
export type RunState =
  | { status: 'queued'; since: number }
  | { status: 'running'; since: number; started_at: number }
  | { status: 'streaming'; since: number; started_at: number }
  /** Its node lost its lease while it held the run; started_at is null when the node had not started it yet. */
  | { status: 'orphaned'; since: number; started_at: number | null }
  | { status: 'completed'; since: number; started_at: number | null; reason: CompletedReason; message: string }
  | { status: 'failed'; since: number; started_at: number | null; reason: FailedReason; message: string }
  | { status: 'cancelled'; since: number; started_at: number | null; reason: CancelledReason; message: string };

/** What can happen to a run. */
export type RunInput =
  | { type: 'start' }
  | { type: 'first_output' }
  /** The cluster node that held the run lost its lease (the controller says so). */
  | { type: 'orphan'; message: string }
  | { type: 'complete'; message?: string }
  | { type: 'fail'; reason: FailedReason; message: string }
  | { type: 'cancel'; reason: CancelledReason; message?: string };

/** One transition, as the ledger records it. */
export interface RunTransition {
  from: RunStatus;
  to: RunStatus;
  at: number;
  reason: EndReason | null;
  message: string;
}

/** The legal next statuses of each status; an ended run has none. */
export const NEXT_STATUSES: { readonly [S in RunStatus]: readonly RunStatus[] } = {
  queued: ['running', 'orphaned', 'failed', 'cancelled'],
  running: ['streaming', 'orphaned', 'completed', 'failed', 'cancelled'],
  streaming: ['orphaned', 'completed', 'failed', 'cancelled'],
  // The person's choice: cancel it, or resume it (it ends cancelled, and a new run continues its conversation).
  orphaned: ['failed', 'cancelled'],
  completed: [],
  failed: [],
  cancelled: [],
};


/** The status each input leads to (where it is legal: NEXT_STATUSES). */
const TARGETS: { readonly [T in RunInput['type']]: RunStatus } = {
  start: 'running',
  first_output: 'streaming',
  orphan: 'orphaned',
  complete: 'completed',
  fail: 'failed',
  cancel: 'cancelled',
};

/** A new run's first state. */
export function initialState(at: number): RunState {
  return { status: 'queued', since: at };
}

/** The status an input leads to from `status`, or null when that input is illegal there. */
function target(status: RunStatus, input: RunInput): RunStatus | null {
  const to = TARGETS[input.type];
  // Completing a run that never started is not a thing: a queued run can only fail or be cancelled.
  return NEXT_STATUSES[status].includes(to) && !(status === 'queued' && to === 'completed') ? to : null;
}

/** True when `input` is legal in `state`. */
export function canStep(state: RunState, input: RunInput): boolean {
  return target(state.status, input) !== null;
}

/**
 * The step function: the next state and the transition to record. An illegal input (completing a
 * queued run, anything after the end, starting twice) throws INVALID_REQUEST and changes nothing.
 */
export function step(state: RunState, input: RunInput, at: number): { state: RunState; transition: RunTransition } {
  const to = target(state.status, input);
  if (to === null) {
    throw new SwitchboardError('INVALID_REQUEST', `a run that is ${state.status} cannot ${input.type.replace('_', ' ')}`, { status: state.status, input: input.type });
  }
  const startedAt = 'started_at' in state ? state.started_at : null;
  let next: RunState;
  switch (input.type) {
    case 'start':
      next = { status: 'running', since: at, started_at: at };
      break;
    case 'first_output':
      next = { status: 'streaming', since: at, started_at: startedAt ?? at };
      break;
    case 'orphan':
      next = { status: 'orphaned', since: at, started_at: startedAt };
      break;
    case 'complete':
      next = { status: 'completed', since: at, started_at: startedAt, reason: 'finished', message: input.message ?? '' };
      break;
    case 'fail':
      next = { status: 'failed', since: at, started_at: startedAt, reason: input.reason, message: input.message };
      break;
    case 'cancel':
      next = { status: 'cancelled', since: at, started_at: startedAt, reason: input.reason, message: input.message ?? '' };
      break;
  }
  const reason = 'reason' in next ? next.reason : null;
  const message = 'message' in next ? next.message : input.type === 'orphan' ? input.message : '';
  return { state: next, transition: { from: state.status, to, at, reason, message } };
}

/** Replays recorded transitions from the start: the state they lead to (throws on an illegal record). */
export function replayTransitions(created: number, transitions: readonly RunTransition[]): RunState {
  let state = initialState(created);
  for (const t of transitions) state = step(state, inputFor(t), t.at).state;
  return state;
}

/** The input that made a recorded transition. */
function inputFor(t: RunTransition): RunInput {
  switch (t.to) {
    case 'running':
      return { type: 'start' };
    case 'streaming':
      return { type: 'first_output' };
    case 'orphaned':
      return { type: 'orphan', message: t.message };
    case 'completed':
      return { type: 'complete', message: t.message };
    case 'failed':
      if (!(FAILED_REASONS as readonly string[]).includes(t.reason ?? '')) throw new SwitchboardError('INVALID_REQUEST', `a failed run needs a failure reason, not ${String(t.reason)}`);
      return { type: 'fail', reason: t.reason as FailedReason, message: t.message };
    case 'cancelled':
      if (!(CANCELLED_REASONS as readonly string[]).includes(t.reason ?? '')) throw new SwitchboardError('INVALID_REQUEST', `a cancelled run needs a cancel reason, not ${String(t.reason)}`);
      return { type: 'cancel', reason: t.reason as CancelledReason, message: t.message };
    case 'queued':
      throw new SwitchboardError('INVALID_REQUEST', 'no transition leads back to queued');
  }
}
