/**
 * What the planner's tools act on: the team run's workers, its report draft and its end. The
 * team run implements it over agent panes; the tools (team-tools.ts) check who calls, validate,
 * gate by risk and shape results, and a test drives them over a fake.
 */
import type { CheckResult } from '../check-command.js';
import type { RiskJudgement } from '../risk.js';

/** A worker's state as the board and `tabs.list` show it (seed 003 FR-002, plus needs_input). */
type WorkerState = 'starting' | 'running' | 'idle' | 'stuck' | 'completed' | 'error' | 'needs_input';

/** What `tabs.wait` waits for: the worker idle (its turn over), done, stuck or needing input. */
export const WAIT_UNTIL = ['idle', 'completed', 'stuck', 'needs_input'] as const;
export type WaitUntil = (typeof WAIT_UNTIL)[number];

export interface WorkerView {
  /** The worker's id in the run (`tabId` in the seed's tools): its role and a number, `executor-1`. */
  id: string;
  role: string;
  agent: string;
  state: WorkerState;
  folder: string;
  /** The last lines of its output, marker lines taken out (seed: the Monitor's lastLines). */
  lastLines: string[];
}

/** A person's answer to a text the risk gate held. */
export interface GateAnswer {
  decision: 'allow' | 'deny';
  /** Who answered (a person at the dashboard, the CLI board), or why nobody did. */
  by: string;
  /** Nobody answered: the gate's time ran out, or the run or the call ended first (the text is not sent). */
  unanswered?: true;
}

export interface TeamPort {
  workers(): WorkerView[];
  /**
   * Opens a worker of a role the preset has: the role's agent, or `agent` when it is one of the
   * preset's agents (never another profile: a planner must not reach round a role's rules by
   * opening a plain shell); `folder` inside the run's folder.
   */
  createWorker(role: string, options: { agent?: string; folder?: string }, signal: AbortSignal): Promise<WorkerView>;
  /** Types `text` into the worker as a prompt (Enter included) or as bare text. */
  send(workerId: string, text: string, options: { enter: boolean }, signal: AbortSignal): Promise<void>;
  /** Its last `lines` lines, marker lines taken out. */
  read(workerId: string, lines: number): string[];
  /** Resolves once the worker is in one of `until`, or at the timeout with it as it is then. */
  wait(workerId: string, until: readonly WaitUntil[], timeoutMs: number, signal: AbortSignal): Promise<{ worker: WorkerView; reached: boolean }>;
  /** Asks a person whether a held text may go to the worker (a dialog on the board, an approval of the broker). */
  confirm(request: { workerId: string; text: string; judgement: RiskJudgement }, signal: AbortSignal): Promise<GateAnswer>;
  /** The report draft, replaced or added to. */
  draft(text: string, mode: 'replace' | 'append'): { chars: number };
  /** The planner says the run is done: the run ends with this summary. */
  complete(summary: string): void;
  /**
   * Runs worker `workerId`'s role check for task `taskId` in its folder; undefined when its role has
   * none. With `tell`, a failure's output is also typed to the worker (it did not ask itself).
   */
  check(workerId: string, taskId: string, options: { tell: boolean }, signal: AbortSignal): Promise<CheckResult | undefined>;
}
