import { describe, expect, it } from 'vitest';
import { APPROVAL_RETRY_MS, COMPLETION_QUIET_MS, NO_WORK_QUIET_MS, QUESTION_SETTLE_MS, STATUS_FILE_PATIENCE_MS, initialTurn, stepTurn, type StateView, type TurnConfig, type TurnEffect, type TurnEvent, type TurnState } from './turn.js';

const config: TurnConfig = { timeoutMs: 60_000, idleTimeoutMs: 20_000, answersQuestions: false };
const T0 = 10_000;
const WALL0 = 1_700_000_000_000;

/** Runs events through the step, collecting every effect. */
function run(events: TurnEvent[], from: TurnState = initialTurn(config)): { state: TurnState; effects: TurnEffect[] } {
  let state = from;
  const effects: TurnEffect[] = [];
  for (const event of events) {
    const step = stepTurn(state, event);
    state = step.state;
    effects.push(...step.effects);
  }
  return { state, effects };
}

const idle: StateView = { state: 'idle', evidenceLine: '>' };
const start = (over: Partial<Extract<TurnEvent, { kind: 'start' }>> = {}): TurnEvent => ({ kind: 'start', now: T0, wallNow: WALL0, current: idle, dialogKnown: false, replies: { total: 0, belowPrompt: undefined }, task: 'write a file please', ...over });
const sent = (confirmedBy = 'input cleared', current: StateView = idle, now = T0 + 500): TurnEvent => ({ kind: 'prompt_sent', now, confirmedBy, current });
const state = (s: StateView['state'], extra: Partial<StateView> = {}): TurnEvent => ({ kind: 'state', change: { state: s, ...extra } });
const tick = (now: number, over: Partial<Extract<TurnEvent, { kind: 'tick' }>> = {}): TurnEvent => ({ kind: 'tick', now, screen: 'screen', current: idle, dialogKnown: false, stuckDialog: undefined, outputAgoMs: 60_000, ...over });
const kinds = (effects: TurnEffect[]): string[] => effects.map((e) => e.kind);
const outcome = (s: TurnState) => (s.kind === 'done' ? s.outcome : undefined);

describe('a turn: the prompt goes in', () => {
  it('sends the task, and watches once the CLI took it', () => {
    const begun = run([start()]);
    expect(begun.state.kind).toBe('submitting');
    expect(begun.effects).toEqual([{ kind: 'send_prompt', text: 'write a file please', answer: false }]);
    const confirmed = run([sent('work')], begun.state);
    expect(confirmed.state).toMatchObject({ kind: 'watching', workSeen: true, activity: { kind: 'none' } });
  });

  it('does not type into an agent that still waits on an approval or a question', () => {
    expect(outcome(run([start({ current: { state: 'waiting_approval', evidenceLine: 'Allow?' } })]).state)).toMatchObject({ status: 'needs_input', question: 'the agent is still waiting on: Allow?' });
    expect(outcome(run([start({ current: { state: 'waiting_input', question: 'Which one?' } })]).state)).toMatchObject({ status: 'needs_input', question: 'the agent is still waiting on: Which one?' });
    // A dialog the responder knows is its to answer: the prompt goes in after it.
    expect(run([start({ current: { state: 'waiting_input' }, dialogKnown: true })]).state.kind).toBe('submitting');
  });

  it('counts work seen while the prompt was typed, and reacts to the state reached meanwhile', () => {
    const { state: s, effects } = run([start(), state('thinking'), state('waiting_approval'), sent('input cleared', { state: 'waiting_approval' })]);
    expect(s).toMatchObject({ kind: 'watching', workSeen: true, activity: { kind: 'settling_approval' } });
    expect(kinds(effects)).toEqual(['send_prompt', 'settle_approval']);
  });

  it('fails the turn when the prompt could not be delivered', () => {
    const failed = run([start(), { kind: 'failed', outcome: { status: 'error', errorMessage: 'still in the input box', question: null, errorCode: 'NOT_DELIVERED' } }]);
    expect(outcome(failed.state)).toMatchObject({ status: 'error', errorCode: 'NOT_DELIVERED' });
  });
});

describe('a turn: completion', () => {
  const watching = run([start(), sent()]).state;

  it('needs the turn to have been seen to start: an idle screen alone is not done', () => {
    // No work and no reply drawn since the prompt: quiet long enough, still not done.
    const { state: s, effects } = run([tick(T0 + 600 + NO_WORK_QUIET_MS, { screen: 'same' }), tick(T0 + 600 + 2 * NO_WORK_QUIET_MS + 10, { screen: 'same' }), { kind: 'end_observed', now: T0 + 6_000, replies: { total: 0, belowPrompt: undefined }, report: undefined }], watching);
    expect(s.kind).toBe('watching');
    expect(kinds(effects)).toEqual(['observe_end']);
  });

  it('completes after work, the idle prompt and quiet, with its signals', () => {
    const busy = run([state('thinking'), tick(T0 + 1_000, { screen: 'working', current: { state: 'thinking' } }), state('idle')], watching).state;
    const early = run([tick(T0 + 1_100, { screen: 'done', outputAgoMs: 0 })], busy);
    expect(early.effects).toEqual([]);
    const quiet = run([tick(T0 + 1_100 + COMPLETION_QUIET_MS + 1, { screen: 'done' })], early.state);
    expect(quiet.effects).toEqual([{ kind: 'observe_end', replies: false }]);
    const end = run([{ kind: 'end_observed', now: T0 + 2_000, replies: undefined, report: undefined }], quiet.state);
    expect(outcome(end.state)).toEqual({ status: 'completed', errorMessage: null, question: null, completedBy: ['idle prompt', `quiet ${COMPLETION_QUIET_MS} ms`, 'work seen'] });
  });

  it('completes on a reply drawn when no work was seen, after the longer quiet', () => {
    const quiet = run([tick(T0 + 600 + NO_WORK_QUIET_MS + 1, { screen: 'reply' })], watching);
    expect(quiet.effects).toEqual([]);
    const later = run([tick(T0 + 600 + 2 * NO_WORK_QUIET_MS + 2, { screen: 'reply' })], quiet.state);
    expect(later.effects).toEqual([{ kind: 'observe_end', replies: true }]);
    const end = run([{ kind: 'end_observed', now: T0 + 6_000, replies: { total: 1, belowPrompt: 1 }, report: undefined }], later.state);
    expect(outcome(end.state)?.completedBy).toEqual(['idle prompt', `quiet ${NO_WORK_QUIET_MS} ms`, 'reply drawn']);
  });

  it('takes a mark under the prompt for a reply when the last turn\'s mark scrolled away (the count stayed the same)', () => {
    const quiet = (from: Partial<Extract<TurnEvent, { kind: 'start' }>>) => {
      const begun = run([start(from), sent(), tick(T0 + 600 + NO_WORK_QUIET_MS + 1, { screen: 'reply' }), tick(T0 + 600 + 2 * NO_WORK_QUIET_MS + 2, { screen: 'reply' })]);
      expect(begun.effects.at(-1)).toEqual({ kind: 'observe_end', replies: true });
      return begun.state;
    };
    const scrolled = quiet({ replies: { total: 1, belowPrompt: undefined } });
    expect(outcome(run([{ kind: 'end_observed', now: T0 + 6_000, replies: { total: 1, belowPrompt: 1 }, report: undefined }], scrolled).state)?.completedBy?.at(-1)).toBe('reply drawn');
    // The echo with no mark under it yet: no reply.
    expect(run([{ kind: 'end_observed', now: T0 + 6_000, replies: { total: 1, belowPrompt: 0 }, report: undefined }], scrolled).state.kind).toBe('watching');
    // The same prompt answered before, still on screen: a mark under its echo says nothing new.
    const repeated = quiet({ replies: { total: 1, belowPrompt: 1 } });
    expect(run([{ kind: 'end_observed', now: T0 + 6_000, replies: { total: 1, belowPrompt: 1 }, report: undefined }], repeated).state.kind).toBe('watching');
  });

  it('waits while the status file says the CLI works, not forever', () => {
    const worked = run([state('executing')], watching).state;
    const busyReport = { state: 'busy' as const, value: 'busy', writtenAt: WALL0 + 10 };
    const first = run([{ kind: 'end_observed', now: T0 + 5_000, replies: undefined, report: busyReport }], worked);
    expect(first.state.kind).toBe('watching');
    const still = run([{ kind: 'end_observed', now: T0 + 5_000 + STATUS_FILE_PATIENCE_MS - 1, replies: undefined, report: busyReport }], first.state);
    expect(still.state.kind).toBe('watching');
    const given = run([{ kind: 'end_observed', now: T0 + 5_000 + STATUS_FILE_PATIENCE_MS, replies: undefined, report: busyReport }], still.state);
    expect(outcome(given.state)?.completedBy?.at(-1)).toBe(`status file still said busy after ${STATUS_FILE_PATIENCE_MS / 1000} s of a finished screen`);
    // Its own word that it is done is a signal too; one written before the prompt says nothing.
    const idleReport = run([{ kind: 'end_observed', now: T0 + 5_000, replies: undefined, report: { state: 'idle', value: 'idle', writtenAt: WALL0 + 10 } }], worked);
    expect(outcome(idleReport.state)?.completedBy?.at(-1)).toBe('status file: idle');
    const old = run([{ kind: 'end_observed', now: T0 + 5_000, replies: undefined, report: { ...busyReport, writtenAt: WALL0 - 1 } }], worked);
    expect(outcome(old.state)?.completedBy).toHaveLength(3);
  });
});

describe('a turn: approvals', () => {
  const watching = run([start(), sent()]).state;

  it('settles the prompt, has the chain decide, presses the keys, and answers again only if it stays', () => {
    const asked = run([state('waiting_approval')], watching);
    expect(asked.effects).toEqual([{ kind: 'settle_approval' }]);
    const settled = run([{ kind: 'approval_settled', now: T0 + 1_000, waiting: true, identity: 'p1' }], asked.state);
    expect(settled.effects).toEqual([{ kind: 'decide_approval' }]);
    const decided = run([{ kind: 'approval_decided', now: T0 + 1_100, decision: 'allow', pressed: false, identity: 'p1' }], settled.state);
    expect(decided.effects).toEqual([{ kind: 'press_keys', decision: 'allow' }]);
    const pressed = run([{ kind: 'keys_pressed', now: T0 + 1_300 }], decided.state);
    expect(pressed.state).toMatchObject({ activity: { kind: 'none' }, answeredAt: T0 + 1_300, answeredPrompt: 'p1' });
    // Still on screen right after its answer (the CLI reacting): not answered and counted twice.
    const soon = run([tick(T0 + 1_400, { current: { state: 'waiting_approval' } })], pressed.state);
    expect(soon.effects).toEqual([]);
    // Still there after the retry time: settled and read again; the same prompt soon after is left alone.
    const later = run([tick(T0 + 1_300 + APPROVAL_RETRY_MS + 1, { current: { state: 'waiting_approval' } })], pressed.state);
    expect(later.effects).toEqual([{ kind: 'settle_approval' }]);
    const same = run([{ kind: 'approval_settled', now: T0 + 1_300 + 100, waiting: true, identity: 'p1' }], later.state);
    expect(same.effects).toEqual([]);
  });

  it('one approval at a time: a state change while one is handled starts nothing', () => {
    const asked = run([state('waiting_approval')], watching).state;
    expect(run([state('thinking'), state('waiting_approval')], asked).effects).toEqual([]);
  });

  it('hands back what the chain leaves open (an unsure read, a policy that asks, no callback)', () => {
    const question = 'approve shell: rm -rf x? (asked: the prompt could not be read with certainty (a row of the prompt is not part of any layout))';
    const { state: s } = run([state('waiting_approval'), { kind: 'approval_settled', now: T0 + 1_000, waiting: true, identity: 'p1' }, { kind: 'approval_decided', now: T0 + 1_100, decision: 'ask', pressed: false, identity: 'p1', question }], watching);
    expect(outcome(s)).toEqual({ status: 'needs_input', errorMessage: null, question });
  });

  it("does not press again what a person answered, and is not timed out while the caller or a person decides", () => {
    const deciding = run([state('waiting_approval'), { kind: 'approval_settled', now: T0 + 1_000, waiting: true, identity: 'p1' }], watching).state;
    const long = run([tick(T0 + config.idleTimeoutMs * 2, { screen: 'prompt', current: { state: 'waiting_approval' } })], deciding);
    expect(long.state.kind).toBe('watching');
    const answered = run([{ kind: 'approval_decided', now: T0 + 2_000, decision: 'deny', pressed: true, identity: 'p1' }], deciding);
    expect(answered.effects).toEqual([]);
    expect(answered.state).toMatchObject({ activity: { kind: 'none' }, answeredPrompt: 'p1' });
  });

  it('goes back to watching when the prompt went away before anyone decided', () => {
    const asked = run([state('waiting_approval')], watching).state;
    expect(run([{ kind: 'approval_settled', now: T0 + 1_000, waiting: false, identity: 'x' }], asked).state).toMatchObject({ activity: { kind: 'none' } });
    const deciding = run([{ kind: 'approval_settled', now: T0 + 1_000, waiting: true, identity: 'x' }], asked).state;
    expect(run([{ kind: 'approval_decided', now: T0 + 1_100, decision: 'withdrawn', pressed: false, identity: 'x' }], deciding).state).toMatchObject({ activity: { kind: 'none' } });
  });
});

describe('a turn: questions and dialogs', () => {
  const watching = run([start(), sent('work')]).state;
  const asking: StateView = { state: 'waiting_input', question: 'Which file?' };

  it('hands a question back only once the screen has held still', () => {
    const seen = run([state('waiting_input', { question: 'Which file?' }), tick(T0 + 1_000, { screen: 'q', current: asking })], watching);
    expect(seen.effects).toEqual([]);
    const held = run([tick(T0 + 1_000 + QUESTION_SETTLE_MS + 1, { screen: 'q', current: asking })], seen.state);
    expect(held.effects).toEqual([{ kind: 'read_question' }]);
    const read = run([{ kind: 'question_read', question: 'Which file?' }], held.state);
    expect(outcome(read.state)).toEqual({ status: 'needs_input', errorMessage: null, question: 'Which file?' });
    // The screen no longer asks (a dialog answered a moment ago): nothing to hand back.
    expect(run([{ kind: 'question_read', question: null }], held.state).state.kind).toBe('watching');
  });

  it("asks the caller's onQuestion, types its answer, and hands back a null one", () => {
    const answering = { ...config, answersQuestions: true };
    const w = run([start(), sent('work')], initialTurn(answering)).state;
    const asked = run([{ kind: 'question_read', question: 'Which file?' }], w);
    expect(asked.effects).toEqual([{ kind: 'ask_caller', question: 'Which file?' }]);
    expect(run([{ kind: 'caller_answered', answer: 'a.txt' }], asked.state).effects).toEqual([{ kind: 'send_prompt', text: 'a.txt', answer: true }]);
    expect(outcome(run([{ kind: 'caller_answered', answer: null }], asked.state).state)).toMatchObject({ status: 'needs_input', question: 'Which file?' });
  });

  it('leaves a late dialog the launch policy knows to the responder, and hands back one stuck on screen', () => {
    const dialog: StateView = { state: 'waiting_input', evidenceLine: 'Try the new model?' };
    const left = run([tick(T0 + 1_000, { screen: 'd', current: dialog, dialogKnown: true }), tick(T0 + 10_000, { screen: 'd', current: dialog, dialogKnown: true })], watching);
    expect(left.effects).toEqual([]);
    expect(left.state.kind).toBe('watching');
    const stuck = run([tick(T0 + 11_000, { screen: 'd', current: dialog, dialogKnown: true, stuckDialog: { id: 'model_nudge', answers: 3 } })], left.state);
    expect(outcome(stuck.state)?.question).toBe("the agent's model_nudge dialog stays on screen after 3 answers: Try the new model?");
  });
});

describe('a turn: how it ends otherwise', () => {
  const watching = run([start(), sent('work')]).state;

  it('times out on the whole task, and on no progress while busy', () => {
    expect(outcome(run([tick(T0 + config.timeoutMs + 1, { current: { state: 'thinking' } })], watching).state)).toMatchObject({ status: 'timeout', errorMessage: 'the task did not finish within 60 s (state: thinking)' });
    const stalled = run([tick(T0 + 1_000, { screen: 'spinner', current: { state: 'thinking' } }), tick(T0 + 1_000 + config.idleTimeoutMs + 1, { screen: 'spinner', current: { state: 'thinking' } })], watching);
    expect(outcome(stalled.state)).toMatchObject({ status: 'timeout', errorMessage: 'no progress on screen for 20 s (state: thinking)' });
    // Waiting on a question or an approval is not a stall.
    const waiting = run([tick(T0 + 1_000, { screen: 'q', current: { state: 'waiting_approval' } }), tick(T0 + 1_000 + config.idleTimeoutMs + 1, { screen: 'q', current: { state: 'waiting_input' }, dialogKnown: true })], watching);
    expect(waiting.state.kind).toBe('watching');
  });

  it('is cancelled at any time, and nothing after the end changes it', () => {
    const cancelled = run([{ kind: 'cancel' }], watching);
    expect(outcome(cancelled.state)).toEqual({ status: 'cancelled', errorMessage: 'cancelled', question: null });
    expect(kinds(cancelled.effects)).toEqual(['finish']);
    expect(run([state('exited', { exit: { exitCode: 1, signal: null } }), tick(T0 + 999_999)], cancelled.state).effects).toEqual([]);
    expect(outcome(run([start(), { kind: 'cancel' }]).state)?.status).toBe('cancelled');
  });

  it('ends with an error when the agent exits', () => {
    expect(outcome(run([state('exited', { exit: { exitCode: null, signal: 'SIGKILL' } })], watching).state)).toMatchObject({ status: 'error', errorMessage: 'the agent exited (SIGKILL)' });
    expect(outcome(run([state('exited', { exit: { exitCode: 2, signal: null } })], watching).state)?.errorMessage).toBe('the agent exited (code 2)');
  });

  it('ends with the error on screen, or needs input after a refusal notice', () => {
    expect(outcome(run([state('error', { error: { message: 'API Error: 500 overloaded', interrupted: false } })], watching).state)).toEqual({ status: 'error', errorMessage: 'API Error: 500 overloaded', question: null });
    expect(outcome(run([state('error', { error: { message: 'Interrupted by user', interrupted: true } })], watching).state)).toEqual({ status: 'needs_input', errorMessage: null, question: 'Interrupted by user' });
    // An error before the prompt went in is not this turn's.
    expect(run([start(), state('error', { error: { message: 'old', interrupted: false } })]).state.kind).toBe('submitting');
  });

  it('needs input when the agent is back at its prompt after a refusal notice (Codex 0.171 reads idle there), never completed', () => {
    const refused: StateView = { state: 'idle', error: { message: '■ Conversation interrupted - use /feedback if something went wrong', interrupted: true } };
    expect(outcome(run([{ kind: 'state', change: refused }], watching).state)).toEqual({ status: 'needs_input', errorMessage: null, question: refused.error?.message });
    // Seen on a tick too, with the work done and the screen quiet as long as completion needs.
    const worked = run([state('thinking'), tick(T0 + 1_000, { screen: 'working', current: { state: 'thinking' } }), tick(T0 + 1_100, { screen: 'done', outputAgoMs: 0 })], watching).state;
    const later = T0 + 1_100 + COMPLETION_QUIET_MS + 1;
    expect(outcome(run([tick(later, { screen: 'done', current: refused })], worked).state)?.status).toBe('needs_input');
    // The same quiet idle prompt without the notice completes.
    expect(kinds(run([tick(later, { screen: 'done' })], worked).effects)).toEqual(['observe_end']);
  });
});
