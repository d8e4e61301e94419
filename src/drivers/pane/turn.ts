/**
 * One turn of a task (a prompt given to an agent in a pane, until the agent is done with it), as an
 * explicit state machine: a union of states and a pure step function from an event to the next
 * state and the effects to carry out. The shell that does the I/O (run-turn.ts) turns the pane,
 * its tracker, the approval broker and the caller's callbacks into events, and effects into calls;
 * unit tests drive the step without a PTY.
 *
 * What the turn decides, in order of the original closure it replaces: the prompt goes in unless
 * the agent still waits on something; work seen (a busy or approval state) marks the turn as
 * started; an approval prompt is answered once it holds still, by the chain of deciders; a
 * question (or a menu no pattern knows) is handed on once the screen holds still, while a dialog
 * the launch policy knows is left to the pane's responder; an error or exit ends the turn; the turn
 * completes only once it was seen to start, the idle prompt held quiet, and the CLI's status file
 * (where it keeps one) does not say it still works; timeouts and cancel end it at any time.
 */
import type { ErrorCode } from '../../core/errors.js';
import type { AgentState, ApprovalPrompt, SelfReport } from '../../agents/index.js';
import type { DecidedBy, Decision } from '../../approvals/index.js';

/** One approval prompt the agent showed, and how it was answered. */
export interface ApprovalRecord {
  at: number;
  /** The approval's id (answer_approval's approval_id while it was on screen). */
  id: string;
  /** What the prompt asked for, as parsed from the screen (null when it could not be parsed). */
  request: Omit<ApprovalPrompt, 'row'> | null;
  decision: Decision;
  reason: string;
  /** Who decided, in the approval broker's words: the policy, the onApproval callback, a person (answer_approval), or no one (asked: the task returned needs_input). */
  decidedBy: DecidedBy;
  /** The option chosen and the keys pressed (null when nothing was pressed). */
  answered: { label: string; keys: string[] } | null;
  /** How many times the keys were pressed: more than once when the CLI ignored them (Claude Code drops keys for a moment after drawing a prompt). */
  presses: number;
}

export type ExecuteStatus = 'completed' | 'error' | 'timeout' | 'cancelled' | 'needs_input';

/** How a turn ended. */
export interface TurnOutcome {
  status: ExecuteStatus;
  errorMessage: string | null;
  errorCode?: ErrorCode;
  question: string | null;
  completedBy?: string[];
}

/** After keys answer an approval, the same prompt still on screen this long is answered again. */
export const APPROVAL_RETRY_MS = 3_000;
/** The idle prompt must hold this long, with no output at all, before a turn counts as done. */
export const COMPLETION_QUIET_MS = 700;
/** A turn in which no work was ever seen is done only after this much quiet (a reply drawn at once). */
export const NO_WORK_QUIET_MS = 2_500;
/** A question (or a menu no pattern knows) is handed on only once the screen has held still this long: a dialog half drawn looks like one. */
export const QUESTION_SETTLE_MS = 500;
/** How long a finished screen waits for a status file that still says "busy" before the screen wins. */
export const STATUS_FILE_PATIENCE_MS = 15_000;

export interface TurnConfig {
  /** Longest the turn may take, from its start. */
  timeoutMs: number;
  /** Longest the agent may go without any change on screen while it works. */
  idleTimeoutMs: number;
  /** The caller answers questions (onQuestion); without it a question ends the turn with needs_input. */
  answersQuestions: boolean;
}

/** What the turn is busy with besides watching (one thing at a time). */
type Activity =
  | { kind: 'none' }
  /** Waiting for an approval prompt to hold still before it is read and judged. */
  | { kind: 'settling_approval' }
  /** The chain of deciders runs: the policy, the caller's onApproval, a person. */
  | { kind: 'deciding_approval' }
  /** The answer's keys are being pressed. */
  | { kind: 'pressing_keys' }
  /** The caller's onQuestion has the question. */
  | { kind: 'asking_caller'; question: string };

/** What every live state keeps. */
interface Watch {
  config: TurnConfig;
  /** When the turn began (monotonic ms). */
  startedAt: number;
  /** When the prompt went in (ms since the epoch): a status file older than this says nothing about the turn. */
  submittedAt: number;
  /** Reply marks in view when the prompt went in. */
  repliesAtSubmit: ReplyMarks;
  /** A busy or approval state was seen since the prompt went in (or the prompt was confirmed by work). */
  workSeen: boolean;
  lastScreen: string;
  /** When the screen last changed (monotonic ms). */
  lastChange: number;
  /** When an approval was last answered, and which prompt (so a prompt still drawn is not answered and counted twice). */
  answeredAt: number;
  answeredPrompt: string;
  /** Since when the screen has said "done" while the CLI's status file said it still works. */
  screenDoneSince: number | undefined;
}

export type TurnState =
  | { kind: 'ready'; config: TurnConfig }
  /** The prompt is being typed and confirmed. */
  | ({ kind: 'submitting' } & Watch)
  /** The prompt went in: the agent's states are followed until the turn ends. */
  | ({ kind: 'watching'; activity: Activity } & Watch)
  | { kind: 'done'; outcome: TurnOutcome };

/** An agent state as the turn needs it: for an error, its whole message and whether it is a refusal notice. */
export interface StateView {
  state: AgentState;
  question?: string;
  evidenceLine?: string;
  error?: { message: string; interrupted: boolean };
  exit?: { exitCode: number | null; signal: string | null };
}

/**
 * Reply marks on screen (the profile's reply patterns): how many in all, and how many below the
 * last row showing the prompt's end (undefined: it shows nowhere).
 */
export interface ReplyMarks {
  total: number;
  belowPrompt: number | undefined;
}

export type TurnEvent =
  /** Begin: what the agent waits on now, and where its output stands. */
  | { kind: 'start'; now: number; wallNow: number; current: StateView; dialogKnown: boolean; replies: ReplyMarks; task: string }
  /** The task went in (how the CLI showed it took it), and the state now. */
  | { kind: 'prompt_sent'; now: number; confirmedBy: string; current: StateView }
  /** An answer to a question went in. */
  | { kind: 'answer_sent'; confirmedBy: string }
  | { kind: 'state'; change: StateView }
  /** A periodic look: the screen, the state, the responder, how long since any output. */
  | { kind: 'tick'; now: number; screen: string; current: StateView; dialogKnown: boolean; stuckDialog: { id: string; answers: number } | undefined; outputAgoMs: number }
  /** The approval prompt held still and was read again. */
  | { kind: 'approval_settled'; now: number; waiting: boolean; identity: string }
  /**
   * The chain decided. `pressed`: the keys went already (a person answered through answer_approval);
   * for 'ask', `question` is what to hand back.
   */
  | { kind: 'approval_decided'; now: number; decision: 'allow' | 'deny' | 'ask' | 'withdrawn'; pressed: boolean; identity: string; question?: string }
  | { kind: 'keys_pressed'; now: number }
  /** What the screen asks now (null: no question after all: a dialog, or gone). */
  | { kind: 'question_read'; question: string | null }
  | { kind: 'caller_answered'; answer: string | null }
  /** The signals a completion needs beyond the screen: reply marks drawn (when no work was seen) and the status file. */
  | { kind: 'end_observed'; now: number; replies: ReplyMarks | undefined; report: Pick<SelfReport, 'state' | 'value' | 'writtenAt'> | undefined }
  /** Something the shell did failed (the prompt not delivered, a callback threw), as an outcome. */
  | { kind: 'failed'; outcome: TurnOutcome }
  | { kind: 'cancel' };

export type TurnEffect =
  /** Type a prompt in and confirm it took: the task (answer false) or an answer to a question. */
  | { kind: 'send_prompt'; text: string; answer: boolean }
  | { kind: 'settle_approval' }
  | { kind: 'decide_approval' }
  | { kind: 'press_keys'; decision: 'allow' | 'deny' }
  | { kind: 'ask_caller'; question: string }
  /** Read the question on screen now (and report question_read). */
  | { kind: 'read_question' }
  /** Read what a completion needs (and report end_observed); reply marks only when asked. */
  | { kind: 'observe_end'; replies: boolean }
  | { kind: 'finish'; outcome: TurnOutcome };

export interface Step {
  state: TurnState;
  effects: TurnEffect[];
}

/** A new turn. */
export function initialTurn(config: TurnConfig): TurnState {
  return { kind: 'ready', config };
}

const done = (outcome: TurnOutcome): Step => ({ state: { kind: 'done', outcome }, effects: [{ kind: 'finish', outcome }] });
const needsInput = (question: string): Step => done({ status: 'needs_input', errorMessage: null, question });
const same = (state: TurnState): Step => ({ state, effects: [] });

/** The turn's step: pure, from the state and an event to the next state and its effects. */
export function stepTurn(state: TurnState, event: TurnEvent): Step {
  if (state.kind === 'done') return same(state);
  if (event.kind === 'cancel') return done({ status: 'cancelled', errorMessage: 'cancelled', question: null });
  if (event.kind === 'failed') return done(event.outcome);
  if (state.kind === 'ready') return event.kind === 'start' ? start(state.config, event) : same(state);
  switch (event.kind) {
    case 'state':
      return react({ ...state, workSeen: state.workSeen || isWork(event.change.state) }, event.change);
    case 'prompt_sent': {
      if (state.kind !== 'submitting') return same(state);
      const watching: TurnState = { ...state, kind: 'watching', activity: { kind: 'none' }, workSeen: state.workSeen || event.confirmedBy === 'work' || isWork(event.current.state), lastChange: event.now };
      // A state reached while the prompt was typed counts too.
      return react(watching, event.current);
    }
    case 'answer_sent':
      return same({ ...state, workSeen: state.workSeen || event.confirmedBy === 'work' });
    default:
      return state.kind === 'watching' ? watch(state, event) : same(state);
  }
}

function start(config: TurnConfig, event: Extract<TurnEvent, { kind: 'start' }>): Step {
  const { current } = event;
  // The agent still waits on an approval or a question from before: typing now would answer it
  // with the task's text. The caller has to deal with it first.
  if (current.state === 'waiting_approval' || (current.state === 'waiting_input' && !event.dialogKnown)) {
    return needsInput(`the agent is still waiting on: ${current.question ?? current.evidenceLine ?? current.state}`);
  }
  const watch: Watch = {
    config,
    startedAt: event.now,
    submittedAt: event.wallNow,
    repliesAtSubmit: event.replies,
    workSeen: false,
    lastScreen: '',
    lastChange: event.now,
    answeredAt: 0,
    answeredPrompt: '',
    screenDoneSince: undefined,
  };
  return { state: { kind: 'submitting', ...watch }, effects: [{ kind: 'send_prompt', text: event.task, answer: false }] };
}

const isWork = (state: AgentState): boolean => state === 'thinking' || state === 'executing' || state === 'waiting_approval';

/** What a state change means once the prompt is in. */
function react(state: Extract<TurnState, { kind: 'submitting' | 'watching' }>, change: StateView): Step {
  if (state.kind === 'submitting') return same(state);
  switch (change.state) {
    case 'waiting_approval':
      if (state.activity.kind !== 'none') return same(state);
      return { state: { ...state, activity: { kind: 'settling_approval' } }, effects: [{ kind: 'settle_approval' }] };
    case 'idle':
      // Back at the prompt after a refusal's notice: the agent waits for what to do instead.
      if (change.error?.interrupted) return needsInput(change.error.message);
      return same(state);
    case 'error': {
      const message = change.error?.message ?? 'the agent reported an error';
      // A refusal stops some CLIs' turn with a notice that looks like an error: the agent now
      // waits for what to do instead.
      if (change.error?.interrupted) return needsInput(message);
      return done({ status: 'error', errorMessage: message, question: null });
    }
    case 'exited':
      return done({ status: 'error', errorMessage: `the agent exited (${change.exit?.signal ?? `code ${change.exit?.exitCode ?? '?'}`})`, question: null });
    default:
      // Busy states just go on; a dialog the launch policy answers (Codex's late model nudge) is the
      // pane's responder's to answer; a question, or a menu nothing knows, is handed on once it holds
      // still (on a tick).
      return same(state);
  }
}

type Watching = Extract<TurnState, { kind: 'watching' }>;

/** The caller's callback (onApproval, onQuestion) or the chain has the turn's attention: no timeouts or other answers meanwhile. */
const busyWithCaller = (state: Watching): boolean => state.activity.kind === 'deciding_approval' || state.activity.kind === 'asking_caller';

function watch(state: Watching, event: TurnEvent): Step {
  switch (event.kind) {
    case 'tick':
      return tick(state, event);
    case 'approval_settled': {
      if (state.activity.kind !== 'settling_approval') return same(state);
      const idle: Watching = { ...state, activity: { kind: 'none' } };
      if (!event.waiting) return same(idle);
      // The prompt answered a moment ago may still be on screen while the CLI reacts to the keys.
      if (event.identity === state.answeredPrompt && event.now - state.answeredAt < APPROVAL_RETRY_MS) return same(idle);
      return { state: { ...state, activity: { kind: 'deciding_approval' } }, effects: [{ kind: 'decide_approval' }] };
    }
    case 'approval_decided': {
      if (state.activity.kind !== 'deciding_approval') return same(state);
      const idle: Watching = { ...state, activity: { kind: 'none' } };
      switch (event.decision) {
        case 'withdrawn':
          return same(idle);
        case 'ask':
          return needsInput(event.question ?? 'the agent asks for an approval');
        default: {
          const answered: Watching = { ...idle, answeredPrompt: event.identity, answeredAt: event.now };
          if (event.pressed) return same(answered);
          // Pressed until the prompt reacts: a CLI that drops keys right after drawing a prompt gets
          // them again, as the same answer (one record), not as a second approval.
          return { state: { ...answered, activity: { kind: 'pressing_keys' } }, effects: [{ kind: 'press_keys', decision: event.decision }] };
        }
      }
    }
    case 'keys_pressed':
      if (state.activity.kind !== 'pressing_keys') return same(state);
      return same({ ...state, activity: { kind: 'none' }, answeredAt: event.now });
    case 'question_read': {
      if (event.question === null || state.activity.kind !== 'none') return same(state);
      if (!state.config.answersQuestions) return needsInput(event.question);
      return { state: { ...state, activity: { kind: 'asking_caller', question: event.question } }, effects: [{ kind: 'ask_caller', question: event.question }] };
    }
    case 'caller_answered': {
      if (state.activity.kind !== 'asking_caller') return same(state);
      const { question } = state.activity;
      if (event.answer === null) return needsInput(question);
      return { state: { ...state, activity: { kind: 'none' } }, effects: [{ kind: 'send_prompt', text: event.answer, answer: true }] };
    }
    case 'end_observed':
      return endObserved(state, event);
    default:
      return same(state);
  }
}

/** A periodic look. Completion needs every signal at once: the idle prompt, held still, no output, and work done. */
function tick(state: Watching, event: Extract<TurnEvent, { kind: 'tick' }>): Step {
  const { now } = event;
  const seen: Watching = event.screen === state.lastScreen ? state : { ...state, lastScreen: event.screen, lastChange: now };
  const { config } = seen;
  const current = event.current.state;
  if (now - seen.startedAt > config.timeoutMs) {
    return done({ status: 'timeout', errorMessage: `the task did not finish within ${Math.round(config.timeoutMs / 1000)} s (state: ${current})`, question: null });
  }
  const busy = busyWithCaller(seen);
  const waiting = current === 'waiting_approval' || current === 'waiting_input' || busy;
  if (!waiting && current !== 'idle' && now - seen.lastChange > config.idleTimeoutMs) {
    return done({ status: 'timeout', errorMessage: `no progress on screen for ${Math.round(config.idleTimeoutMs / 1000)} s (state: ${current})`, question: null });
  }
  if (current === 'waiting_approval') {
    // Still on screen long after its answer (lost keys), or never answered: answer it (again).
    if (seen.activity.kind === 'none' && now - seen.answeredAt > APPROVAL_RETRY_MS) {
      return { state: { ...seen, activity: { kind: 'settling_approval' } }, effects: [{ kind: 'settle_approval' }] };
    }
    return same(seen);
  }
  if (current === 'waiting_input') {
    const stuck = event.stuckDialog;
    if (stuck) return needsInput(`the agent's ${stuck.id} dialog stays on screen after ${stuck.answers} answers: ${event.current.evidenceLine ?? ''}`);
    // A dialog the responder knows is its to answer; a question is asked only once the screen
    // has held still: a dialog half drawn can look like one.
    if (event.dialogKnown || busy || seen.activity.kind !== 'none' || now - seen.lastChange < QUESTION_SETTLE_MS) return same(seen);
    return { state: seen, effects: [{ kind: 'read_question' }] };
  }
  if (current !== 'idle') return same(seen);
  if (event.current.error?.interrupted) return needsInput(event.current.error.message);
  const quiet = Math.min(now - seen.lastChange, event.outputAgoMs);
  if (quiet < (seen.workSeen ? COMPLETION_QUIET_MS : NO_WORK_QUIET_MS)) return same({ ...seen, screenDoneSince: undefined });
  return { state: seen, effects: [{ kind: 'observe_end', replies: !seen.workSeen }] };
}

/** The screen says done: the turn ends once it was seen to start, and the CLI's own word agrees (or has had its time). */
function endObserved(state: Watching, event: Extract<TurnEvent, { kind: 'end_observed' }>): Step {
  // A turn ends only once it was seen to start: work on screen, or a reply drawn since the prompt
  // went in (the input box redrawing is neither).
  const replied = !state.workSeen && event.replies !== undefined && replyDrawn(state.repliesAtSubmit, event.replies);
  if (!(state.workSeen || replied)) return same({ ...state, screenDoneSince: undefined });
  const needQuiet = state.workSeen ? COMPLETION_QUIET_MS : NO_WORK_QUIET_MS;
  const completedBy = ['idle prompt', `quiet ${needQuiet} ms`, state.workSeen ? 'work seen' : 'reply drawn'];
  // The CLI's own word, where it keeps one and wrote it this turn: while it says it works, the
  // turn goes on. Not forever: a CLI that stopped updating the file must not hang the task.
  const heard = event.report && event.report.writtenAt >= state.submittedAt ? event.report : undefined;
  if (heard && (heard.state === 'busy' || heard.state === 'waiting')) {
    const since = state.screenDoneSince ?? event.now;
    if (event.now - since < STATUS_FILE_PATIENCE_MS) return same({ ...state, screenDoneSince: since });
    completedBy.push(`status file still said ${heard.value} after ${STATUS_FILE_PATIENCE_MS / 1000} s of a finished screen`);
  } else if (heard) completedBy.push(`status file: ${heard.value}`);
  return done({ status: 'completed', errorMessage: null, question: null, completedBy });
}

/**
 * Whether a reply was drawn between two looks: more marks than before, or a mark under the
 * prompt's echo where there was none. A full-screen CLI scrolls its conversation itself, so the
 * last turn's mark can leave the view as this one's comes and the count stays the same; the mark
 * under the echo alone says nothing when the same prompt, answered, was on screen already.
 */
function replyDrawn(before: ReplyMarks, now: ReplyMarks): boolean {
  if (now.total > before.total) return true;
  return (now.belowPrompt ?? 0) > 0 && (before.belowPrompt ?? 0) === 0;
}
