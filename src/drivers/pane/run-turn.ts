/**
 * The shell around a turn's state machine (turn.ts): it turns what happens to an agent pane (state
 * changes, a periodic look, prompts confirmed, the approval broker's decisions, the caller's
 * answers) into events, and the step's effects into calls. Everything it decides, the step decides.
 */
import { SwitchboardError } from '../../core/errors.js';
import { DisposableStore } from '../../core/disposable.js';
import { answerFor, classifyScreen, INTERRUPTED_RULE, countReplies, lowestMatchOf, repliesBelowPrompt, promptIdentity, withoutRow, type AgentPane, type ApprovalPrompt, type PendingApproval, type ScreenAnswer, type StateChange } from '../../agents/index.js';
import { decideApproval, type ApprovalChain, type ApprovalRequest } from '../../approvals/index.js';
import { initialTurn, stepTurn, type ApprovalRecord, type ReplyMarks, type StateView, type TurnConfig, type TurnEffect, type TurnEvent, type TurnOutcome, type TurnState } from './turn.js';

/** How often the turn is looked at for completion and stalls, besides on every state change. */
const CHECK_INTERVAL_MS = 100;

export interface TurnHooks {
  /** The chain of deciders for this turn's approvals (its person step, if any, is added here). */
  chain: Omit<ApprovalChain, 'person'>;
  /** Approvals the chain leaves open wait for a person's answer (answer_approval, the dashboard). */
  waitForPerson: boolean;
  /** Answers a question the agent asks (null hands it back). */
  onQuestion?: (question: string) => Promise<string | null> | string | null;
  /** The HOME the CLI writes its status file under. */
  home: string;
  /** Every state change of the turn, with its evidence. */
  onState(change: StateChange): void;
  /** Every approval decided (its presses are filled in once the keys went). */
  onApproval(record: ApprovalRecord): void;
}

/** Runs one turn of `text` on `agent` to its outcome. Never throws: failures are outcomes. */
export function runTurn(agent: AgentPane, text: string, config: TurnConfig, hooks: TurnHooks, signal: AbortSignal | undefined): Promise<TurnOutcome> {
  const { pane, tracker, screens } = agent;
  return new Promise<TurnOutcome>((resolve) => {
    const subscriptions = new DisposableStore();
    let state: TurnState = initialTurn(config);
    const queue: TurnEvent[] = [];
    let stepping = false;
    /** Where the turn's output begins (lines of history and screen when the prompt went in). */
    let linesAtSubmit = 0;
    /** The approval being decided, as read once it held still. */
    let settled: PendingApproval | null = null;
    /** The approval decided and about to be pressed, and its record. */
    let pressing: { prompt: ApprovalPrompt | null; record: ApprovalRecord } | undefined;

    const failed = (err: unknown): void => dispatch({ kind: 'failed', outcome: outcomeOfError(err, signal) });

    /** One event at a time: events raised while a step's effects run wait their turn. */
    const dispatch = (event: TurnEvent): void => {
      queue.push(event);
      if (stepping) return;
      stepping = true;
      try {
        for (let next = queue.shift(); next; next = queue.shift()) {
          if (state.kind === 'done') continue;
          const step = stepTurn(state, next);
          state = step.state;
          for (const effect of step.effects) perform(effect);
        }
      } finally {
        stepping = false;
      }
    };

    const view = (change: StateChange): StateView => {
      const v: StateView = { state: change.state };
      if (change.question !== undefined) v.question = change.question;
      if (change.evidence?.line !== undefined) v.evidenceLine = change.evidence.line;
      if (change.exit) v.exit = change.exit;
      // The tracker reads an error's whole message once, as its state begins (classify.ts); a
      // refusal's notice is the row that showed it.
      const refused = change.state === 'idle' && change.evidence?.rule === INTERRUPTED_RULE;
      if (change.state === 'error' || refused) {
        const message = change.error ?? change.evidence?.line ?? 'the agent reported an error';
        v.error = { message, interrupted: refused || lowestMatchOf(screens.interrupted, { lines: [message] }) !== undefined };
      }
      return v;
    };
    /**
     * What the agent waits on as the turn begins. The tracker keeps a question or an approval until
     * the next state settles (idle must hold still), so one answered a moment ago (a start-up dialog
     * the responder took) may still be its state: it counts only while the screen still shows it.
     */
    const waitingOn = (): StateView => {
      const known = tracker.state;
      if (known.state !== 'waiting_approval' && known.state !== 'waiting_input') return view(known);
      const now = classifyScreen(screens, { lines: pane.screenLines() }).state;
      return now === known.state ? view(known) : { state: now ?? 'starting' };
    };
    const dialogKnown = (): boolean => tracker.lastDetection.dialog !== undefined || agent.responder?.clear === false;
    const replyMarks = (lines: readonly string[]): ReplyMarks => ({ total: countReplies(screens, lines), belowPrompt: repliesBelowPrompt(screens, lines, text) });
    /** Reply marks in everything drawn since the prompt went in (the screen then, and all after it). */
    const repliesSince = (): ReplyMarks => replyMarks(pane.readText(Math.max(0, pane.readText(0).totalLines - linesAtSubmit) + pane.rows).lines);

    const perform = (effect: TurnEffect): void => {
      switch (effect.kind) {
        case 'finish':
          subscriptions.dispose();
          resolve(effect.outcome);
          return;
        case 'send_prompt':
          agent.prompt(effect.text, signal).then(
            (sent) => dispatch(effect.answer ? { kind: 'answer_sent', confirmedBy: sent.confirmedBy } : { kind: 'prompt_sent', now: performance.now(), confirmedBy: sent.confirmedBy, current: view(tracker.state) }),
            failed,
          );
          return;
        case 'settle_approval':
          agent.settleApproval(signal).then((approval) => {
            settled = approval;
            dispatch({ kind: 'approval_settled', now: performance.now(), waiting: approval !== null, identity: promptIdentity(approval?.prompt ?? null) });
          }, failed);
          return;
        case 'decide_approval':
          decide().catch(failed);
          return;
        case 'press_keys': {
          const what = pressing;
          if (!what) return;
          agent.answer(effect.decision, { decidedBy: what.record.decidedBy, by: byWhom(what.record), approvalId: what.record.id, prompt: what.prompt, ...(signal ? { signal } : {}) }).then(
            (answered) => {
              what.record.presses = answered.presses;
              dispatch({ kind: 'keys_pressed', now: performance.now() });
            },
            (err: unknown) => {
              if (!(err instanceof SwitchboardError && err.code === 'CONFLICT') || signal?.aborted) return failed(err);
              // Nothing was pressed: the prompt went away (answered at the terminal), another took its
              // place (it is decided on its own), or a person is answering it now: theirs is the answer.
              if (err.details?.answering === what.record.id) {
                void agent.answerFromPerson(what.record.id, signal).then((person) => {
                  if (person) recordPerson(what.record, person);
                  dispatch({ kind: 'keys_pressed', now: performance.now() });
                });
                return;
              }
              what.record.presses = 0;
              what.record.answered = null;
              what.record.reason = `${what.record.reason}; not pressed: ${err.message}`;
              dispatch({ kind: 'keys_pressed', now: performance.now() });
            },
          );
          return;
        }
        case 'ask_caller':
          Promise.resolve(hooks.onQuestion ? hooks.onQuestion(effect.question) : null).then((answer) => dispatch({ kind: 'caller_answered', answer }), failed);
          return;
        case 'read_question': {
          // The tracker keeps its last state over screens it cannot read: the question must be on
          // the screen now (a dialog answered a moment ago leaves waiting_input behind it).
          const current = classifyScreen(screens, { lines: pane.screenLines() });
          const asking = current.state === 'waiting_input' && !current.detection.dialog;
          dispatch({ kind: 'question_read', question: asking ? (current.question ?? current.evidence?.line ?? 'the agent is asking something') : null });
          return;
        }
        case 'observe_end': {
          const report = agent.selfReport(hooks.home);
          dispatch({ kind: 'end_observed', now: performance.now(), replies: effect.replies ? repliesSince() : undefined, report });
          return;
        }
      }
    };

    /** Runs the settled approval through the chain of deciders, records it, and reports the decision. */
    const decide = async (): Promise<void> => {
      const approval = settled;
      const identity = promptIdentity(approval?.prompt ?? null);
      if (!approval) {
        dispatch({ kind: 'approval_decided', now: performance.now(), decision: 'withdrawn', pressed: false, identity });
        return;
      }
      const { prompt, request } = approval;
      let person: ScreenAnswer | null = null;
      const ask = async (r: ApprovalRequest, s?: AbortSignal): Promise<'allow' | 'deny' | null> => {
        person = await agent.answerFromPerson(r.id, s);
        return person?.decision ?? null;
      };
      const outcome = await decideApproval(request, hooks.waitForPerson ? { ...hooks.chain, person: ask } : hooks.chain, signal);
      if (state.kind === 'done') return;
      const base = { at: Date.now(), id: request.id, request: prompt ? withoutRow(prompt) : null, reason: outcome.reason, decidedBy: outcome.decidedBy, presses: 0 };
      if (outcome.decision === 'withdrawn') {
        dispatch({ kind: 'approval_decided', now: performance.now(), decision: 'withdrawn', pressed: false, identity });
        return;
      }
      if (outcome.decision === 'ask') {
        hooks.onApproval({ ...base, decision: 'ask', answered: null });
        const what = prompt?.command ?? prompt?.path ?? prompt?.toolName ?? 'a tool call';
        dispatch({ kind: 'approval_decided', now: performance.now(), decision: 'ask', pressed: false, identity, question: `approve ${prompt?.tool ?? 'tool'}: ${what}? (${outcome.reason})` });
        return;
      }
      // A person's answer went through answer_approval: its keys are pressed already.
      const answer: Pick<ScreenAnswer, 'option' | 'keys' | 'presses'> = (person as ScreenAnswer | null) ?? { ...answerFor(agent.profile.data.approval_keys, prompt, outcome.decision), presses: 0 };
      const label = answer.option?.label ?? (outcome.decision === 'allow' ? 'allow once' : 'deny');
      const record: ApprovalRecord = { ...base, decision: outcome.decision, answered: { label, keys: answer.keys }, presses: answer.presses };
      hooks.onApproval(record);
      pressing = { prompt, record };
      dispatch({ kind: 'approval_decided', now: performance.now(), decision: outcome.decision, pressed: outcome.decidedBy === 'person', identity });
    };

    subscriptions.add(
      tracker.onChange((change) => {
        hooks.onState(change);
        dispatch({ kind: 'state', change: view(change) });
      }),
    );
    const ticker = setInterval(() => {
      dispatch({
        kind: 'tick',
        now: performance.now(),
        screen: pane.screenLines().join('\n'),
        // As a state event shows it: a refusal's notice rides on the idle state.
        current: view(tracker.state),
        dialogKnown: dialogKnown(),
        stuckDialog: agent.responder?.stuck,
        outputAgoMs: Date.now() - pane.lastOutputTime,
      });
    }, CHECK_INTERVAL_MS);
    subscriptions.add({ dispose: () => clearInterval(ticker) });
    const onAbort = (): void => dispatch({ kind: 'cancel' });
    if (signal?.aborted) {
      onAbort();
      return;
    }
    signal?.addEventListener('abort', onAbort);
    subscriptions.add({ dispose: () => signal?.removeEventListener('abort', onAbort) });
    linesAtSubmit = pane.readText(0).totalLines;
    dispatch({ kind: 'start', now: performance.now(), wallNow: Date.now(), current: waitingOn(), dialogKnown: dialogKnown(), replies: replyMarks(pane.screenLines()), task: text });
  });
}

/** What a failure means for a task: cancelled when the caller aborted, a timeout, or an error with its code. */
export function outcomeOfError(err: unknown, signal: AbortSignal | undefined): TurnOutcome {
  if (signal?.aborted) return { status: 'cancelled', errorMessage: 'cancelled', question: null };
  const message = err instanceof Error ? err.message : String(err);
  if (err instanceof SwitchboardError && err.code === 'TIMEOUT') return { status: 'timeout', errorMessage: message, question: null };
  return { status: 'error', errorMessage: message, question: null, errorCode: err instanceof SwitchboardError ? err.code : 'INTERNAL_ERROR' };
}

/** Who answered, in the pane log's words. */
function byWhom(record: ApprovalRecord): string {
  switch (record.decidedBy) {
    case 'policy':
      return 'the policy';
    case 'callback':
      return 'the onApproval callback';
    default:
      return record.decidedBy;
  }
}

/** A person answered the prompt while the turn's own answer was about to go: theirs is the record. */
function recordPerson(record: ApprovalRecord, person: ScreenAnswer): void {
  record.decision = person.decision;
  record.decidedBy = 'person';
  record.reason = `${person.decision === 'allow' ? 'allowed' : 'denied'} by a person (${person.by}) while the ${byWhom(record)} was answering`;
  record.answered = { label: person.option?.label ?? (person.decision === 'allow' ? 'allow once' : 'deny'), keys: person.keys };
  record.presses = person.presses;
}
