/**
 * Watches one agent pane for `switchboard doctor` from the moment it is created: every state the
 * tracker recognizes (with its evidence) and in which step, every distinct screen (kept for --save),
 * and every stretch in which the screen showed something no pattern of the profile reads.
 */
import { Emitter, type Event } from '../core/emitter.js';
import { DisposableStore, type Disposable } from '../core/disposable.js';
import { AgentStateTracker, classifyScreen, type AgentState, type Screens, type StateChange } from '../agents/index.js';
import type { Pane } from '../pane/index.js';
import type { DoctorStep } from './checks.js';

/**
 * A screen no pattern reads, unchanged or changing, for this long is a screen the profile does not
 * know (a redraw between two known screens takes a few frames). A blank screen is the CLI loading.
 */
export const UNREAD_SCREEN_MS = 10_000;
/** Distinct screens kept per CLI for --save; past it, only counted. */
const MAX_KEPT_SCREENS = 400;

/** A state the tracker entered, with what showed it. */
export interface SeenState {
  step: DoctorStep;
  state: AgentState;
  /** Milliseconds since the pane was created. */
  atMs: number;
  evidence: { rule: string; pattern: string; line: string } | null;
  /** The dialog's or question's line, for waiting_input; the error line, for error. */
  detail?: string;
}

/** A screen as the CLI drew it, and how the profile read it. */
export interface SeenScreen {
  index: number;
  step: DoctorStep;
  atMs: number;
  /** The classification: a state, or `unknown` when no pattern matched. */
  read: string;
  lines: string[];
  ansiLines: string[];
}

/** A stretch in which the screen stayed unread. */
export interface UnreadSpell {
  step: DoctorStep;
  sinceMs: number;
  /** The last non-empty rows of the screen when it was found unread. */
  lines: string[];
}

export class ScreenWatch implements Disposable {
  readonly tracker: AgentStateTracker;
  readonly states: SeenState[] = [];
  readonly screens: SeenScreen[] = [];
  /** Distinct screens seen (also those past MAX_KEPT_SCREENS). */
  distinctScreens = 0;
  readonly unread: UnreadSpell[] = [];
  private readonly unreadEmitter = new Emitter<UnreadSpell>();
  /** A screen stayed unread for UNREAD_SCREEN_MS. */
  readonly onUnread: Event<UnreadSpell> = this.unreadEmitter.event;
  private readonly created = performance.now();
  private readonly seen = new Set<string>();
  private readonly subscriptions = new DisposableStore();
  private lastText = '';
  private unknownSince: number | undefined;
  private unreadTimer: NodeJS.Timeout | undefined;
  private frozen = false;
  private disposed = false;

  constructor(
    private readonly pane: Pane,
    private readonly screensSet: Screens,
    private readonly stepNow: () => DoctorStep,
    private readonly keepScreens: boolean,
  ) {
    this.tracker = new AgentStateTracker(pane, screensSet);
    this.subscriptions.add(this.tracker.onChange((change) => this.onState(change)));
    this.subscriptions.add(pane.onRender(() => this.onRender()));
  }

  /** Milliseconds since the pane was created. */
  elapsed(): number {
    return Math.round(performance.now() - this.created);
  }

  /** The last non-empty rows of the screen now. */
  tail(rows = 6): string[] {
    return this.pane
      .screenLines()
      .map((l) => l.trimEnd())
      .filter((l) => l.trim() !== '')
      .slice(-rows);
  }

  /**
   * Stops recording: what the CLI shows while Switchboard ends it (a step stopped, the check over)
   * is not the CLI's doing. The tracker goes on, for anyone still asking for the state.
   */
  freeze(): void {
    this.frozen = true;
    clearTimeout(this.unreadTimer);
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    clearTimeout(this.unreadTimer);
    this.subscriptions.dispose();
    this.tracker.dispose();
    this.unreadEmitter.dispose();
  }

  private onState(change: StateChange): void {
    if (this.frozen) return;
    const evidence = change.evidence ? { rule: change.evidence.rule, pattern: change.evidence.pattern, line: change.evidence.line } : null;
    const detail = change.question ?? change.error ?? (change.exit ? `exit ${change.exit.signal ?? change.exit.exitCode ?? '?'}` : undefined);
    this.states.push({ step: this.stepNow(), state: change.state, atMs: this.elapsed(), evidence, ...(detail !== undefined ? { detail } : {}) });
  }

  private onRender(): void {
    if (this.disposed || this.frozen || !this.pane.alive) return;
    const lines = this.pane.screenLines();
    const text = lines.join('\n');
    if (text === this.lastText) return;
    this.lastText = text;
    const ansiLines = this.pane.snapshot({ ansi: true }).lines;
    const read = classifyScreen(this.screensSet, { lines, ansiLines });
    const label = read.state ?? 'unknown';
    if (!this.seen.has(text)) {
      this.seen.add(text);
      this.distinctScreens += 1;
      if (this.keepScreens && this.screens.length < MAX_KEPT_SCREENS) {
        this.screens.push({ index: this.distinctScreens, step: this.stepNow(), atMs: this.elapsed(), read: label, lines, ansiLines });
      }
    }
    const blank = text.trim() === '';
    if (read.state !== null || blank) {
      this.unknownSince = undefined;
      clearTimeout(this.unreadTimer);
      this.unreadTimer = undefined;
      return;
    }
    if (this.unknownSince !== undefined) return;
    this.unknownSince = performance.now();
    this.unreadTimer = setTimeout(() => this.reportUnread(), UNREAD_SCREEN_MS);
  }

  private reportUnread(): void {
    if (this.disposed || this.frozen || this.unknownSince === undefined) return;
    const spell: UnreadSpell = { step: this.stepNow(), sinceMs: Math.round(this.unknownSince - this.created), lines: this.tail() };
    this.unread.push(spell);
    this.unreadEmitter.fire(spell);
  }
}
