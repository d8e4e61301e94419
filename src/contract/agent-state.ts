/**
 * What an agent in a pane is doing, as every layer names it: the states the state tracker reports
 * (src/agents/screen/state-tracker.ts), and a change of state with the evidence that decided it.
 */

import type { ApprovalPrompt } from './approval.js';

export const AGENT_STATES = ['starting', 'idle', 'thinking', 'executing', 'waiting_approval', 'waiting_input', 'error', 'exited'] as const;
export type AgentState = (typeof AGENT_STATES)[number];

/** Which screen pattern decided, and the line it matched on. */
export interface Evidence {
  rule: string;
  pattern: string;
  line: string;
  /** The screen row the match is on (0 = top). */
  row: number;
}

/** One change of an agent's state, with what decided it. */
export interface StateChange {
  state: AgentState;
  previous: AgentState;
  /** Milliseconds since the epoch. */
  at: number;
  /** What decided: the rule, its pattern, and the screen line it matched (null for exit and start). */
  evidence: Evidence | null;
  /** The error message, for `error`: the rows around the one that showed it, joined. */
  error?: string;
  /** The dialog or question on screen, for `waiting_input`. */
  question?: string;
  /** How the program ended, for `exited`. */
  exit?: { exitCode: number | null; signal: string | null };
  /**
   * For `waiting_approval`: the prompt as read off the screen (null when it could not be read), so
   * no listener reads it again. Read when the state begins, and again on refresh().
   */
  approval?: ApprovalPrompt | null;
}
