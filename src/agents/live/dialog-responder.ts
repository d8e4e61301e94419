/**
 * Answers an agent pane's known dialogs (folder trust, API key, model nudge, an offer to try a
 * feature) by its first-run policy whenever they open: during start-up, while a prompt is typed,
 * in the middle of a task, or with nobody driving the pane at all. CLIs open some of them late
 * (Codex's model nudge arrives once its model list loads, under load well after the idle prompt),
 * so answering them only at start-up hands a dialog back as if it were the model's question.
 * Dialogs nothing knows (a menu no profile pattern explains) are left alone: a person or the
 * caller answers those.
 */
import { Emitter, type Event } from '../../core/emitter.js';
import { DisposableStore, type Disposable } from '../../core/disposable.js';
import type { Pane } from '../../pane/index.js';
import { detectScreen } from '../screen/detect.js';
import { answerDialog, decideDialog, type FirstRunPolicy } from './dialog-answer.js';
import type { Dialog, Screens } from '../profiles/schema.js';

/** A dialog answered, by policy. */
export interface AnsweredDialog {
  id: string;
  decision: 'accept' | 'decline';
  /** The keys pressed (for a `choose` answer, the arrows it took and Enter). */
  keys: string[];
  /** When, in ms since the responder started. */
  atMs: number;
  /** Why the answer could not be carried out (the dialog is then answered again once it sits still). */
  error?: string;
}

/** A dialog is answered once it has been on screen this long: keys sent while it draws are lost. */
export const DIALOG_SETTLE_MS = 250;
/** A dialog still on screen, unchanged, this long after its answer is answered again (the keys were lost). */
export const DIALOG_REPEAT_MS = 3_000;
/** Answers to one dialog before it counts as stuck (a lost key, then the CLI's slow reaction). */
export const MAX_ANSWERS_PER_DIALOG = 3;

/** Where the responder is with the dialog on screen. */
type Episode =
  | { kind: 'clear' }
  | { kind: 'settling'; dialog: Dialog; since: number }
  | { kind: 'answering'; dialog: Dialog; count: number }
  | { kind: 'answered'; dialog: Dialog; at: number; screen: string; count: number }
  | { kind: 'stuck'; dialog: Dialog; count: number };

/** What the screen shows now, for the responder's step. */
interface Observation {
  now: number;
  dialog: Dialog | undefined;
  screen: string;
}

/** What to do after a step: nothing, look again later, or answer the dialog. */
type Action = { kind: 'none' } | { kind: 'recheck'; inMs: number } | { kind: 'answer'; dialog: Dialog };

/**
 * The responder's decision, pure: from the episode and what is on screen to the next episode and
 * what to do. The CLI still reacting to an answer (its screen changing) is waited for; an answer
 * repeated only on a screen that sat still (the keys were lost), at most MAX_ANSWERS_PER_DIALOG.
 */
export function stepDialogEpisode(episode: Episode, seen: Observation): { episode: Episode; action: Action } {
  const { now, dialog, screen } = seen;
  if (episode.kind === 'answering') return { episode, action: { kind: 'none' } };
  if (!dialog) return { episode: { kind: 'clear' }, action: { kind: 'none' } };
  const same = episode.kind !== 'clear' && episode.dialog.id === dialog.id;
  if (same && episode.kind === 'stuck') return { episode, action: { kind: 'none' } };
  if (same && episode.kind === 'answered') {
    if (screen !== episode.screen) return { episode: { ...episode, at: now, screen }, action: { kind: 'recheck', inMs: DIALOG_REPEAT_MS + 5 } };
    if (now - episode.at < DIALOG_REPEAT_MS) return { episode, action: { kind: 'recheck', inMs: DIALOG_REPEAT_MS - (now - episode.at) + 5 } };
    if (episode.count >= MAX_ANSWERS_PER_DIALOG) return { episode: { kind: 'stuck', dialog, count: episode.count }, action: { kind: 'none' } };
    return { episode: { kind: 'answering', dialog, count: episode.count + 1 }, action: { kind: 'answer', dialog } };
  }
  if (same && episode.kind === 'settling') {
    if (now - episode.since < DIALOG_SETTLE_MS) return { episode, action: { kind: 'recheck', inMs: DIALOG_SETTLE_MS - (now - episode.since) + 5 } };
    return { episode: { kind: 'answering', dialog, count: 1 }, action: { kind: 'answer', dialog } };
  }
  return { episode: { kind: 'settling', dialog, since: now }, action: { kind: 'recheck', inMs: DIALOG_SETTLE_MS + 5 } };
}

/** Follows one agent pane and answers its known dialogs by `policy`. */
export class DialogResponder implements Disposable {
  private readonly answeredEmitter = new Emitter<AnsweredDialog>();
  private readonly changedEmitter = new Emitter<void>();
  /** Fires after each answer. */
  readonly onAnswered: Event<AnsweredDialog> = this.answeredEmitter.event;
  /** Every dialog answered so far. */
  readonly answered: AnsweredDialog[] = [];
  private episode: Episode = { kind: 'clear' };
  private timer: NodeJS.Timeout | undefined;
  private readonly started = performance.now();
  private readonly subscriptions = new DisposableStore();
  private disposed = false;

  constructor(
    private readonly pane: Pane,
    private screens: Screens,
    readonly policy: FirstRunPolicy,
    /** Dialogs of these kinds are left to a person, as dialogs nothing knows are. */
    private readonly leave: ReadonlySet<Dialog['decides']> = new Set(),
  ) {
    this.subscriptions.add(pane.onRender(() => this.evaluate()));
    this.subscriptions.add(pane.onExit(() => this.dispose()));
    this.evaluate();
  }

  /** True while no known dialog is on screen or being answered. */
  get clear(): boolean {
    return this.episode.kind === 'clear';
  }

  /** The dialog that stayed on screen after every answer allowed, if any. */
  get stuck(): { id: string; answers: number } | undefined {
    return this.episode.kind === 'stuck' ? { id: this.episode.dialog.id, answers: this.episode.count } : undefined;
  }

  /** Reads the screens of another version from now on (the version became known after start). */
  useScreens(screens: Screens): void {
    this.screens = screens;
    this.evaluate();
  }

  /**
   * Resolves once no known dialog is on screen or being answered ('clear'), a dialog stays after
   * every answer ('stuck'), or after `timeoutMs`, on exit or abort ('timeout').
   */
  whenClear(timeoutMs: number, signal?: AbortSignal): Promise<'clear' | 'stuck' | 'timeout'> {
    this.evaluate();
    const now = (): 'clear' | 'stuck' | undefined => (this.episode.kind === 'clear' ? 'clear' : this.episode.kind === 'stuck' ? 'stuck' : undefined);
    const ready = now();
    if (ready) return Promise.resolve(ready);
    return new Promise((resolve) => {
      const finish = (how: 'clear' | 'stuck' | 'timeout'): void => {
        clearTimeout(timer);
        sub.dispose();
        signal?.removeEventListener('abort', onAbort);
        resolve(how);
      };
      const onAbort = (): void => finish('timeout');
      const timer = setTimeout(onAbort, timeoutMs);
      const sub = this.changedEmitter.event(() => {
        const how = now();
        if (how) finish(how);
        else if (this.disposed) finish('timeout');
      });
      signal?.addEventListener('abort', onAbort);
      if (signal?.aborted) onAbort();
    });
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    clearTimeout(this.timer);
    this.subscriptions.dispose();
    this.changedEmitter.fire();
    this.answeredEmitter.dispose();
    this.changedEmitter.dispose();
  }

  private evaluate(): void {
    if (this.disposed || !this.pane.alive || this.episode.kind === 'answering') return;
    const lines = this.pane.screenLines();
    const detection = detectScreen(this.screens, { lines });
    const dialog = detection.kind === 'dialog' && detection.dialog && !this.leave.has(detection.dialog.decides) ? detection.dialog : undefined;
    const before = this.episode.kind;
    const { episode, action } = stepDialogEpisode(this.episode, { now: performance.now(), dialog, screen: lines.join('\n') });
    this.episode = episode;
    clearTimeout(this.timer);
    if (action.kind === 'recheck') this.timer = setTimeout(() => this.evaluate(), action.inMs);
    if (action.kind === 'answer') this.answer(action.dialog);
    if (episode.kind !== before) this.changedEmitter.fire();
  }

  private answer(dialog: Dialog): void {
    const decision = decideDialog(dialog, this.policy);
    const record: AnsweredDialog = { id: dialog.id, decision, keys: [], atMs: Math.round(performance.now() - this.started) };
    this.answered.push(record);
    answerDialog(this.pane, dialog, decision)
      .then((keys) => record.keys.push(...keys))
      // A key refused (the pane exited meanwhile) or a menu that would not move shows up as no
      // progress: the dialog is answered again once it sits still.
      .catch((err: unknown) => (record.error = (err as Error).message))
      .finally(() => {
        if (this.disposed) return;
        const count = this.episode.kind === 'answering' ? this.episode.count : 1;
        this.episode = { kind: 'answered', dialog, at: performance.now(), screen: this.pane.screenLines().join('\n'), count };
        this.answeredEmitter.fire(record);
        this.changedEmitter.fire();
        this.evaluate();
      });
  }
}

const responders = new WeakMap<Pane, DialogResponder>();

/** The responder answering `pane`'s dialogs, if one was attached. */
export function dialogResponderOf(pane: Pane): DialogResponder | undefined {
  return responders.get(pane);
}

/**
 * Attaches a responder to `pane` (replacing none: one per pane), for as long as the pane lives;
 * dialogs of the kinds in `leave` are left to a person.
 */
export function attachDialogResponder(pane: Pane, screens: Screens, policy: FirstRunPolicy, leave?: ReadonlySet<Dialog['decides']>): DialogResponder {
  const existing = responders.get(pane);
  if (existing) return existing;
  const responder = new DialogResponder(pane, screens, policy, leave);
  responders.set(pane, responder);
  return responder;
}
