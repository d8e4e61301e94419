/**
 * A team run's states (issue 24 item 2) as an explicit machine: starting → running ⇄ paused →
 * completed, failed or cancelled. Every change carries why; an event a state does not take is
 * CONFLICT naming the state, so a surface tells the person what the run is doing instead of
 * silently ignoring a click.
 */
import { SwitchboardError } from '../core/errors.js';

export type TeamState = 'starting' | 'running' | 'paused' | 'completed' | 'failed' | 'cancelled';

export type TeamEvent =
  /** The planner and the workers the preset opens at the start are at their prompts. */
  | { kind: 'started' }
  /** The planner could not start (a worker that cannot is the planner's to handle). */
  | { kind: 'start_failed'; reason: string }
  | { kind: 'pause'; by: string }
  | { kind: 'resume'; by: string }
  /** The planner called run.complete, or a person marked the run done. */
  | { kind: 'complete'; by: string }
  /** The planner's pane ended, or the run could not go on. */
  | { kind: 'fail'; reason: string }
  /** A person ended the run. */
  | { kind: 'cancel'; by: string };

export interface TeamStateChange {
  from: TeamState;
  to: TeamState;
  why: string;
}

const NEXT: Readonly<Record<TeamState, Partial<Record<TeamEvent['kind'], TeamState>>>> = {
  starting: { started: 'running', start_failed: 'failed', fail: 'failed', cancel: 'cancelled' },
  running: { pause: 'paused', complete: 'completed', fail: 'failed', cancel: 'cancelled' },
  // Paused, the planner's tool calls wait; a person may still end it either way.
  paused: { resume: 'running', complete: 'completed', fail: 'failed', cancel: 'cancelled' },
  completed: {},
  failed: {},
  cancelled: {},
};

/** What each event tries, as a refusal names it ("cannot resume the run: …"). */
const ATTEMPT: Readonly<Record<TeamEvent['kind'], string>> = {
  started: 'mark the run started',
  start_failed: 'fail the run’s start',
  pause: 'pause the run',
  resume: 'resume the run',
  complete: 'complete the run',
  fail: 'fail the run',
  cancel: 'end the run',
};

/** Whether a run in `state` has ended. */
export function teamEnded(state: TeamState): boolean {
  return Object.keys(NEXT[state]).length === 0;
}

/** The change `event` makes in `state`; CONFLICT when the state does not take it. */
export function stepTeam(state: TeamState, event: TeamEvent): TeamStateChange {
  const to = NEXT[state][event.kind];
  if (!to) {
    const now = teamEnded(state) ? `the team run has ended (${state})` : `the team run is ${state}`;
    throw new SwitchboardError('CONFLICT', `cannot ${ATTEMPT[event.kind]}: ${now}`, { state, event: event.kind });
  }
  return { from: state, to, why: whyOf(event) };
}

function whyOf(event: TeamEvent): string {
  switch (event.kind) {
    case 'started':
      return 'the planner and its first workers are ready';
    case 'start_failed':
    case 'fail':
      return event.reason;
    case 'pause':
      return `paused by ${event.by}`;
    case 'resume':
      return `resumed by ${event.by}`;
    case 'complete':
      return `completed by ${event.by}`;
    case 'cancel':
      return `ended by ${event.by}`;
  }
}
