/**
 * One agent in one pane, for everything that drives or watches it: the daemon's pane log and
 * dashboard, `answer_approval`, and a task run by CodingAgent.execute() (in the daemon or in a
 * library). It holds the pane, its state tracker, its dialog responder, the approval it waits on
 * (read once, as the state change that reports it), how to prompt it and how to answer an
 * approval on its screen: one route, whoever decided.
 */
import { DisposableStore, type Disposable } from '../../core/disposable.js';
import { Emitter, type Event } from '../../core/emitter.js';
import { SwitchboardError } from '../../core/errors.js';
import type { ApprovalRequest, DecidedBy } from '../../approvals/index.js';
import { collectProcessTree } from '../../platform/index.js';
import type { Pane } from '../../pane/index.js';
import { pressUntilTaken, promptSettled } from './answer-keys.js';
import type { ApprovalOption, ApprovalPrompt } from '../screen/approval-prompt.js';
import { DEFAULT_FIRST_RUN_POLICY, screenText, untilScreenLeaves } from './dialog-answer.js';
import { dialogResponderOf, type DialogResponder } from './dialog-responder.js';
import { firstRunPolicyOf } from './launch.js';
import type { AgentProfile } from '../profiles/profile.js';
import { sendPrompt, type PromptSubmission } from './prompt.js';
import { answerFor, screenApprovalRequest } from './screen-approval.js';
import type { Screens } from '../profiles/schema.js';
import { AgentStateTracker, type StateChange } from '../screen/state-tracker.js';
import { readStatusFile, type SelfReport } from '../screen/status-file.js';

/** Times an approval prompt read with doubts is read again, once the screen moves, before the doubts stand. */
const UNSURE_REREADS = 3;
/** How long each of those waits for the screen to move (a prompt that holds still is as drawn as it gets). */
const UNSURE_REREAD_MS = 1_000;

/** The approval an agent waits on: the broker's request, and the prompt as read off the screen. */
export interface PendingApproval {
  readonly request: ApprovalRequest;
  /** Null when the prompt could not be read. */
  readonly prompt: ApprovalPrompt | null;
}

/** An answer to an approval on screen, about to be pressed (onAnswering) or pressed (onAnswered). */
export interface ScreenAnswer {
  readonly approval: PendingApproval;
  readonly decision: 'allow' | 'deny';
  readonly decidedBy: DecidedBy;
  /** Who answered, in words for the log ("a client (answer_approval)", "the policy"). */
  readonly by: string;
  /** The option chosen as the prompt showed it; null when none fit and the profile's keys went. */
  readonly option: ApprovalOption | null;
  readonly keys: string[];
  /** How many times the keys were pressed (0 before they go). */
  readonly presses: number;
}

export interface AnswerOptions {
  decidedBy: DecidedBy;
  by: string;
  /** The approval meant: refused when another one is on screen now (a stale id). */
  approvalId?: string;
  /**
   * The prompt as read once it held still, when the caller read it just now to decide: pressed as
   * read. Without it, the screen must hold still first and the prompt is read again: what a person
   * approved must be what is on screen now.
   */
  prompt?: ApprovalPrompt | null;
  signal?: AbortSignal;
}

/** Whether two reads of a prompt ask the same thing (the same tool, command and file). */
function samePrompt(a: ApprovalPrompt | null, b: ApprovalPrompt | null): boolean {
  if (a === null || b === null) return a === b;
  return a.tool === b.tool && a.toolName === b.toolName && a.command === b.command && a.path === b.path;
}

export class AgentPane implements Disposable {
  readonly tracker: AgentStateTracker;
  readonly screens: Screens;
  private readonly store = new DisposableStore();
  private readonly stateEmitter = this.store.add(new Emitter<StateChange>());
  private readonly promptEmitter = this.store.add(new Emitter<string>());
  private readonly answeringEmitter = this.store.add(new Emitter<ScreenAnswer>());
  private readonly answeredEmitter = this.store.add(new Emitter<ScreenAnswer>());
  private readonly withdrawnEmitter = this.store.add(new Emitter<PendingApproval>());
  /** The agent's state changed (its pending approval already up to date). */
  readonly onState: Event<StateChange> = this.stateEmitter.event;
  /** A prompt is about to be given through Switchboard. */
  readonly onPrompt: Event<string> = this.promptEmitter.event;
  /** An answer to the approval on screen is decided and its keys are about to go. */
  readonly onAnswering: Event<ScreenAnswer> = this.answeringEmitter.event;
  /** An answer's keys were pressed. */
  readonly onAnswered: Event<ScreenAnswer> = this.answeredEmitter.event;
  /** The approval left the screen with no answer through Switchboard (answered at the terminal). */
  readonly onWithdrawn: Event<PendingApproval> = this.withdrawnEmitter.event;
  /** The id of the approval on screen, from its state change until it is answered or goes. */
  private openId: string | null = null;
  private approvals = 0;
  private answering = false;
  /** The process whose status file the CLI writes, once found. */
  private statusPid: number | undefined;

  constructor(
    readonly pane: Pane,
    readonly profile: AgentProfile,
  ) {
    this.screens = profile.screensFor(pane.agent?.version ?? undefined);
    this.tracker = this.store.add(new AgentStateTracker(pane, this.screens));
    this.store.add(this.tracker.onChange((change) => this.onChange(change)));
    // After an answer the state stays waiting_approval until the next one is sure (idle must hold
    // still first): a second prompt drawn in that window changes no state, so it is looked for on
    // each render (the tracker, subscribed first, has classified the render already).
    this.store.add(pane.onRender(() => this.reopenIfWaiting(true)));
  }

  /** The responder answering the pane's known dialogs (attached by startAgent), if any. */
  get responder(): DialogResponder | undefined {
    return dialogResponderOf(this.pane);
  }

  /** The agent's state now, with its evidence. */
  get state(): StateChange {
    return this.tracker.state;
  }

  /** The approval the agent waits on, as read from its screen; null when it waits on none. */
  get approval(): PendingApproval | null {
    const state = this.tracker.state;
    if (state.state !== 'waiting_approval' || this.openId === null) return null;
    const prompt = state.approval ?? null;
    return { request: screenApprovalRequest(this.pane.id, this.openId, prompt), prompt };
  }

  /**
   * Waits for the approval prompt to hold still and reads it again: a prompt is drawn in steps and a
   * policy must not judge half of one. Null when the agent no longer waits on an approval. A prompt
   * still on screen after its answer (lost keys) is opened again under a new id.
   */
  async settleApproval(signal?: AbortSignal): Promise<PendingApproval | null> {
    for (let reread = 0; ; reread++) {
      await promptSettled(this.pane, signal);
      if (!this.stillWaitingAfterRefresh()) return null;
      this.reopenIfWaiting();
      const approval = this.approval;
      // A prompt read with doubts (its answers not there yet) is most often one still being drawn:
      // a loaded machine can pause mid-draw longer than the settle. Read again once the screen moves,
      // a few times, before the doubts stand (and the prompt goes to a person).
      if (!approval || approval.request.certain || reread >= UNSURE_REREADS || signal?.aborted) return approval;
      if (!(await untilScreenLeaves(this.pane, screenText(this.pane), UNSURE_REREAD_MS, signal))) return approval;
    }
  }

  /**
   * Answers the approval on screen (the one route, whoever decided): the option that means
   * allow-once or deny, else the profile's keys, pressed until the screen takes them. One answer at
   * a time, and only to the prompt meant. Throws CONFLICT when none is pending, when one is
   * being answered already, or when `approvalId` names another.
   */
  async answer(decision: 'allow' | 'deny', how: AnswerOptions): Promise<ScreenAnswer> {
    const id = this.pane.id;
    if (this.tracker.state.state !== 'waiting_approval') throw new SwitchboardError('CONFLICT', `no approval is pending in pane ${id}`, { pane_id: id });
    // Two answers to one prompt (two tabs, a tab and the CLI) would send the second's keys to whatever
    // comes next, perhaps the next approval: one answer at a time, and only to the prompt meant.
    if (this.answering) throw new SwitchboardError('CONFLICT', `the approval in pane ${id} is being answered already`, { pane_id: id, answering: this.openId });
    if (how.approvalId !== undefined && how.approvalId !== this.openId) {
      throw new SwitchboardError('CONFLICT', `approval ${how.approvalId} is no longer the one on screen in pane ${id}`, { pane_id: id, approval_id: how.approvalId });
    }
    this.answering = true;
    try {
      // Keys sent while a prompt is still being drawn are lost (Claude Code ignores them for a moment):
      // unless the caller read it just now, the screen must hold still first. Either way the prompt
      // is read again as the screen is now: keys go only to the prompt that was decided.
      if (how.prompt === undefined) await promptSettled(this.pane, how.signal);
      if (!this.stillWaitingAfterRefresh()) throw new SwitchboardError('CONFLICT', `no approval is pending in pane ${id}`, { pane_id: id });
      if (how.approvalId !== undefined && how.approvalId !== this.openId) {
        throw new SwitchboardError('CONFLICT', `approval ${how.approvalId} is no longer the one on screen in pane ${id}`, { pane_id: id, approval_id: how.approvalId });
      }
      const onScreen = this.tracker.state.approval ?? null;
      if (how.prompt !== undefined && !samePrompt(how.prompt, onScreen)) {
        throw new SwitchboardError('CONFLICT', `the approval on screen in pane ${id} is not the one decided`, { pane_id: id });
      }
      const prompt = onScreen;
      const approval: PendingApproval = { request: screenApprovalRequest(id, this.openId ?? this.newApprovalId(), prompt), prompt };
      const { option, keys } = answerFor(this.profile.data.approval_keys, prompt, decision);
      const answer: ScreenAnswer = { approval, decision, decidedBy: how.decidedBy, by: how.by, option, keys, presses: 0 };
      this.openId = null;
      // Told before the keys go: the prompt closing under them must not read as a terminal answer.
      this.answeringEmitter.fire(answer);
      const { presses } = await pressUntilTaken(this.pane, keys, how.signal);
      this.tracker.refresh();
      const pressed = { ...answer, presses };
      this.answeredEmitter.fire(pressed);
      return pressed;
    } finally {
      this.answering = false;
      // A second prompt right behind the first (or this one, its keys lost): no change of state
      // tells anyone, so say it here.
      this.reopenIfWaiting();
    }
  }

  /**
   * A person's answer to approval `id` (answer_approval, the dashboard): resolves with it once its
   * keys are pressed, or null when the approval leaves the screen unanswered, the pane exits or the
   * signal aborts.
   */
  answerFromPerson(id: string, signal?: AbortSignal): Promise<ScreenAnswer | null> {
    return new Promise((resolve) => {
      const subs = new DisposableStore();
      const finish = (answer: ScreenAnswer | null): void => {
        subs.dispose();
        signal?.removeEventListener('abort', onAbort);
        resolve(answer);
      };
      const onAbort = (): void => finish(null);
      subs.add(this.onAnswered((a) => a.approval.request.id === id && a.decidedBy === 'person' && finish(a)));
      subs.add(this.onWithdrawn((a) => a.request.id === id && finish(null)));
      subs.add(this.pane.onExit(() => finish(null)));
      signal?.addEventListener('abort', onAbort);
      if (signal?.aborted || !this.pane.alive || (this.openId !== id && !this.answering)) finish(null);
    });
  }

  /** A prompt is given through Switchboard: listeners log it, and errors already on screen become old. */
  notePrompt(text: string): void {
    this.promptEmitter.fire(text);
    this.tracker.beginTurn();
  }

  /**
   * Gives the agent a prompt and makes sure it took it (src/agents/live/prompt.ts), a dialog in the way
   * answered first by the policy the pane was started with.
   */
  async prompt(text: string, signal?: AbortSignal): Promise<PromptSubmission> {
    this.notePrompt(text);
    return sendPrompt(this.pane, { input: this.profile.data.input, screens: this.screens, policy: firstRunPolicyOf(this.pane) ?? DEFAULT_FIRST_RUN_POLICY }, text, signal);
  }

  /**
   * What the CLI's status file says, if its profile names one. The file is named by the CLI's pid,
   * which is the pane's process unless a wrapper script started it: then it is looked up once among
   * the pane's process tree.
   */
  selfReport(home: string): SelfReport | undefined {
    const spec = this.profile.data.status_file;
    if (!spec) return undefined;
    if (this.statusPid !== undefined) return readStatusFile(spec, home, this.statusPid);
    const direct = readStatusFile(spec, home, this.pane.pid);
    if (direct) {
      this.statusPid = this.pane.pid;
      return direct;
    }
    for (const pid of collectProcessTree(this.pane.pid)) {
      const report = readStatusFile(spec, home, pid);
      if (report) {
        this.statusPid = pid;
        return report;
      }
    }
    return undefined;
  }

  dispose(): void {
    this.store.dispose();
  }

  /**
   * Reads the screen again now (the prompt on it too): whether the agent still waits on an approval
   * that is on screen. The state alone lags (it stays until the next one is sure), and keys pressed
   * for a prompt no longer shown go to whatever is (the input box).
   */
  private stillWaitingAfterRefresh(): boolean {
    this.tracker.refresh();
    return this.tracker.state.state === 'waiting_approval' && this.tracker.lastDetection.kind === 'approval';
  }

  /**
   * The agent waits on an approval that has no id (a new prompt drawn right after an answer, or one
   * whose keys were lost): it is opened under a new id and announced as a change within the state, so
   * the pane's log records it pending and the dashboard shows it with the id it must answer.
   */
  private reopenIfWaiting(reread = false): void {
    // The state lags the screen (idle counts only once it has held still): what is on screen decides.
    const unopened = (): boolean => this.openId === null && !this.answering && this.tracker.state.state === 'waiting_approval' && this.tracker.lastDetection.kind === 'approval';
    if (!unopened()) return;
    if (reread) {
      // Read the prompt itself now (a render reads only the state); the reading may change the state.
      this.tracker.refresh();
      if (!unopened()) return;
    }
    this.openId = this.newApprovalId();
    this.stateEmitter.fire({ ...this.tracker.state, previous: 'waiting_approval', at: Date.now() });
  }

  private newApprovalId(): string {
    return `${this.pane.id}-approval-${++this.approvals}`;
  }

  private onChange(change: StateChange): void {
    if (change.state === 'waiting_approval') this.openId = this.newApprovalId();
    else if (this.openId !== null) {
      // The prompt went away without an answer through Switchboard: someone answered at the terminal.
      const gone: PendingApproval = { request: screenApprovalRequest(this.pane.id, this.openId, null), prompt: null };
      this.openId = null;
      this.withdrawnEmitter.fire(gone);
    }
    this.stateEmitter.fire(change);
  }
}
