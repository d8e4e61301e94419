/**
 * An approval request, whatever raised it: a prompt an agent drew on its screen, a permission
 * request from a CLI's structured mode, and later the orchestrator's risk gate and asks between
 * agents. Each source has a small adapter beside it that makes one of these (the screen's in
 * src/agents/live/screen-approval.ts, the structured modes' in src/drivers/permission.ts); everything
 * after that (who decides, in what order, in which words) is the same for all of them.
 */
import type { ApprovalSubject, PolicyVerdict } from './policy/index.js';
import type { DecidedBy } from '../contract/approval.js';
export type { DecidedBy } from '../contract/approval.js';

/** Where an approval request came from. */
export type ApprovalSource =
  /** An approval prompt on an agent pane's screen. */
  | { kind: 'screen'; paneId: string }
  /** A permission request from a CLI's structured mode (Claude's can_use_tool, ACP's session/request_permission). */
  | { kind: 'structured'; toolCallId: string | null }
  /** Text for a team run's worker that the orchestrator's risk gate judges before it is typed. */
  | { kind: 'orchestrator'; workerId: string };

export interface ApprovalRequest {
  /** Names the request for whoever answers it (answer_approval's approval_id for a screen's prompt). */
  readonly id: string;
  readonly source: ApprovalSource;
  /** What the policy judges; null when the request could not be read (a prompt no pattern explains). */
  readonly subject: ApprovalSubject | null;
  /**
   * False when the request may not say what the agent will do (a screen's prompt read with doubts).
   * An unsure request is only ever asked about, never allowed by the policy.
   */
  readonly certain: boolean;
  /** Why the request is not certain, in words (empty when certain). */
  readonly doubts: readonly string[];
}

/** How a request was settled. */
export type ApprovalOutcome =
  | { decision: 'allow' | 'deny'; decidedBy: Exclude<DecidedBy, 'none'>; reason: string; verdict: PolicyVerdict }
  /** No one decided and the chain leaves such requests open: the caller hands it on (needs_input). */
  | { decision: 'ask'; decidedBy: 'none'; reason: string; verdict: PolicyVerdict }
  /** The request went away before anyone decided (its prompt answered at the terminal, the agent withdrew it). */
  | { decision: 'withdrawn'; decidedBy: 'none'; reason: string; verdict: PolicyVerdict };

/** A short description of what a subject asks for ("shell rm -rf x", "file_edit a.txt"). */
export function describeSubject(subject: ApprovalSubject): string {
  const what = subject.command ?? subject.path ?? subject.url ?? subject.toolName ?? '';
  return what === '' ? subject.tool : `${subject.tool} ${what}`;
}
