/**
 * Seed 004's BackendDriver: `run / stream / cancel / health / capabilities`, the one contract every
 * backend meets, whatever carries it (stdio first: a CLI's structured mode; PTY as the fallback:
 * its interactive screen). A driver starts one run at a time per conversation and reports what
 * happens as normalized entries (or, for what only a screen shows, ready-made events); the run
 * service turns both into the same events, numbers and records them, and decides the run's state.
 */
import type { NormalizedEntry } from '../../output/entry.js';
import type { AgentCapabilities, AgentHealth } from '../../drivers/capabilities.js';
import type { ApprovalSubject } from '../../approvals/policy/index.js';
import type { DecidedBy } from '../../approvals/index.js';
import type { EndStatus, FailedReason, RunMode } from '../../ledger/run-model.js';
import type { NewRunEvent } from '../../ledger/run-events.js';

/** A backend's capabilities: the agent's (one type for every driver), with the backend's name and mode. */
export interface BackendCapabilities extends AgentCapabilities {
  backend: string;
  mode: RunMode;
  /** It records the CLI's own conversation id of each run, and a later run can resume it by that id (DriverRunRequest.resume). */
  resumes?: boolean;
}

/** A backend's health: the agent's, with how well Switchboard knows its version and whether its model answers. */
export interface BackendHealth extends AgentHealth {
  /** How well Switchboard's screens know this version (`exact`, `nearest`, `none`), or null when the version is unknown. */
  version_support: 'exact' | 'nearest' | 'none' | null;
  /** The model the backend is pointed at answered (null: not checked, the CLI uses its own settings). */
  model_reachable: boolean | null;
}

/** A tool call the agent asks to make, put to governance before it happens. */
export interface ToolCallRequest {
  subject: ApprovalSubject;
  /** The CLI's tool name and input, as it sent them. */
  toolName: string;
  input: Record<string, unknown>;
  toolCallId?: string;
}

/** Governance's answer to a tool call: the decision, why, and who decided (the policy, the default when no one answers). */
export interface ToolCallAnswer {
  decision: 'allow' | 'deny';
  reason: string;
  decidedBy: DecidedBy;
}

/** What a run reports while it goes. */
export type DriverEmission =
  | { kind: 'entry'; entry: NormalizedEntry }
  /** A piece of the reply as the CLI streams it; the whole message follows as an assistant_message entry. */
  | { kind: 'delta'; text: string }
  /** Raw terminal output (recorded only where the user turned it on). */
  | { kind: 'output'; text: string }
  | { kind: 'notice'; text: string }
  /** An event only a screen-driven run can tell (a tool call read off an approval prompt, a patch from the files changed). */
  | { kind: 'event'; event: NewRunEvent }
  /** A person answered a tool call governance left open (judgeOrAsk gave 'ask'). */
  | { kind: 'person'; toolCallId: string; decision: 'allow' | 'deny'; reason: string }
  /** The agent waits on a person (an approval or a question on its screen), or no longer does: silence then is no fault of the run. */
  | { kind: 'waiting'; on: boolean };

export interface DriverRunRequest {
  runId: string;
  prompt: string;
  cwd: string;
  /** The conversation: the id of its first run. A follow-up names its parent's. */
  thread: string;
  /** True when this run continues the conversation `thread` (which must still be open). */
  followUp: boolean;
  /**
   * The agent CLI's own conversation id this run resumes in a new process (RunSpec.agent_session):
   * a backend that cannot resume one fails the run rather than start without the earlier context.
   */
  resume?: string;
  /**
   * Given when the run can be followed up: once the run ended well enough for its conversation to
   * go on, the driver hands the conversation over with how to close it (the run service's idle pool
   * decides how long it stays open). Absent: the driver ends the conversation and its processes
   * with the run, before `done` resolves.
   */
  keepIdle?: (close: () => Promise<void>) => void;
  /** Variables every process of the run carries (its markers, so nothing of it outlives the service). */
  env: Record<string, string>;
  /** Governance's answer to a tool call (the decision is recorded by the caller); what it leaves open is denied. */
  judge: (request: ToolCallRequest) => Promise<ToolCallAnswer>;
  /**
   * The same, for a backend whose agent can wait for a person (a run in a daemon pane: its approval
   * is answered through answer_approval or the dashboard): what governance leaves open comes back
   * 'ask', recorded as such, and the person's answer is reported with a `person` emission.
   */
  judgeOrAsk: (request: ToolCallRequest) => Promise<'allow' | 'deny' | 'ask'>;
  emit: (emission: DriverEmission) => void;
}

/** How a run ended, as the driver saw it. The service maps it to the run's end state. */
export interface DriverOutcome {
  status: EndStatus;
  /** For failed: why (`crashed` when the CLI died mid-run, `agent_error` when it said so, …). */
  reason?: FailedReason;
  message: string;
}

export interface DriverRun {
  readonly done: Promise<DriverOutcome>;
  /** Ends the run and the whole process tree it started; resolves once they are gone. */
  cancel(): Promise<void>;
  /**
   * Ends the run's turn but keeps its conversation open for the next (the CLI stops and waits);
   * resolves once the run has ended. Absent where a driver cannot: a cancel is used instead.
   */
  interrupt?(): Promise<void>;
}

export interface BackendDriver {
  readonly name: string;
  readonly mode: RunMode;
  capabilities(): BackendCapabilities;
  health(): Promise<BackendHealth>;
  /** Starts a run; what it does arrives through `request.emit`. */
  stream(request: DriverRunRequest): DriverRun;
  /** Runs to the end. */
  run(request: DriverRunRequest): Promise<DriverOutcome>;
  /** Ends a run of this driver by id; false when none is going. */
  cancel(runId: string): Promise<boolean>;
  /** Ends every run and conversation and their processes. */
  dispose(): Promise<void>;
}

/** A promise that resolves when `url` answers HTTP at all (any status), within `timeoutMs`. */
export async function reachable(url: string, timeoutMs = 2_000): Promise<boolean> {
  try {
    await fetch(url, { method: 'GET', signal: AbortSignal.timeout(timeoutMs) });
    return true;
  } catch {
    return false;
  }
}

/**
 * What every backend does the same way: `run` is a stream awaited to its end, and `cancel` finds a
 * run in flight by its id. A backend keeps its runs in `runs` while they last.
 */
export abstract class StreamingBackend implements BackendDriver {
  abstract readonly name: string;
  abstract readonly mode: RunMode;
  protected readonly runs = new Map<string, DriverRun>();

  abstract stream(request: DriverRunRequest): DriverRun;
  abstract health(): Promise<BackendHealth>;
  abstract capabilities(): BackendCapabilities;
  abstract dispose(): Promise<void>;

  run(request: DriverRunRequest): Promise<DriverOutcome> {
    return this.stream(request).done;
  }

  async cancel(runId: string): Promise<boolean> {
    const run = this.runs.get(runId);
    if (!run) return false;
    await run.cancel();
    return true;
  }
}
