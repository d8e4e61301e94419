/** What `switchboard doctor` found, per CLI and in all. */
import type { CheckedApproval, StepReport } from './live-check.js';
import type { SeenState, UnreadSpell } from './screen-watch.js';

export type AgentVerdict = 'pass' | 'fail' | 'not_found';

export interface AgentReport {
  name: string;
  displayName: string;
  builtin: boolean;
  binary: string | null;
  version: string | null;
  /** How well Switchboard knows this version (profile.versionSupport). */
  support: { level: 'exact' | 'nearest' | 'none'; versions: string; note: string } | null;
  verdict: AgentVerdict;
  /** The verdict in one line. */
  summary: string;
  steps: StepReport[];
  /** Every state the tracker recognized, in order, with its evidence and step. */
  states: SeenState[];
  /** Screens that stayed unread (no pattern matched) for UNREAD_SCREEN_MS. */
  unread: UnreadSpell[];
  approvals: CheckedApproval[];
  notes: string[];
  distinctScreens: number;
  /** Where this CLI's screens were saved (--save). */
  savedTo?: string;
}

export interface DoctorReport {
  ok: boolean;
  switchboard: string;
  size: { cols: number; rows: number };
  stepTimeoutMs: number;
  durationMs: number;
  agents: AgentReport[];
  savedTo?: string;
}
