/**
 * What an agent in a pane is doing, moment to moment, read from its rendered screen and the timing
 * of its output (never from raw bytes, which carry half-drawn frames). Every change is an event that
 * carries its evidence: the rule that matched and the screen line it matched on.
 */
import { DisposableStore } from '../../core/disposable.js';
import { Emitter, type Event } from '../../core/emitter.js';
import type { Pane } from '../../pane/index.js';
import { parseApproval } from './approval-prompt.js';
import { classifyScreen, INTERRUPTED_RULE, RETRYING_RULE } from './classify.js';
import { lowestMatchOf, type Detection, type Evidence } from './detect.js';
import type { Screens } from '../profiles/schema.js';
import type { StateChange } from '../../contract/agent-state.js';

// The states and a change with its evidence are the shared vocabulary (src/contract/).
export { AGENT_STATES, type AgentState, type StateChange } from '../../contract/agent-state.js';

export interface StateTrackerOptions {
  /**
   * How long the idle prompt must hold, with the screen unchanged, before the agent counts as
   * idle. CLIs redraw their prompt between steps of one turn; a prompt that flickers by is not idle.
   */
  idleSettleMs?: number;
}

/** Default for StateTrackerOptions.idleSettleMs. */
export const IDLE_SETTLE_MS = 500;

/**
 * Follows one agent pane. Busy, approval and question states are reported on the render that
 * shows them; idle only once the prompt has held still for `idleSettleMs`. An error on screen is
 * reported as `error` only when it is new since the current turn began (CLIs leave old errors in
 * view above their prompt).
 */
export class AgentStateTracker {
  private readonly changes = new Emitter<StateChange>();
  /** Fires on every state change. */
  readonly onChange: Event<StateChange> = this.changes.event;

  private current: StateChange;
  private detection: Detection = { kind: 'unknown' };
  private screenText = '';
  private stillSince = performance.now();
  private settleTimer: NodeJS.Timeout | undefined;
  /** How many times each error line was on screen when the turn began. */
  private errorBaseline = new Map<string, number>();
  /**
   * Where the lowest error on screen was in the output when the turn began (rows scrolled off plus
   * its row), on a screen that scrolls: an error drawn below it is new, even when it repeats an
   * old one that has scrolled away since (Codex's refusal notice, twice in a row at 80x24).
   */
  private errorFloor: number | undefined;
  /** Work (busy, a tool, an approval) seen since the turn began: the latest prompt on screen is this turn's. */
  private workSinceTurn = false;
  private readonly idleSettleMs: number;
  private readonly usesAnsi: boolean;
  private readonly subscriptions = new DisposableStore();
  private disposed = false;

  constructor(
    private readonly pane: Pane,
    private readonly screens: Screens,
    options: StateTrackerOptions = {},
  ) {
    this.idleSettleMs = options.idleSettleMs ?? IDLE_SETTLE_MS;
    this.usesAnsi = usesAnsiPatterns(screens);
    this.current = { state: 'starting', previous: 'starting', at: Date.now(), evidence: null };
    this.subscriptions.add(pane.onRender(() => this.evaluate()));
    this.subscriptions.add(pane.onExit((exit) => this.onExit(exit)));
    if (!pane.alive && pane.exit) this.onExit(pane.exit);
    else this.evaluate();
  }

  /** The state now, with its evidence. */
  get state(): StateChange {
    return this.current;
  }

  /** The last classification of the screen (approval prompts and dialogs included). */
  get lastDetection(): Detection {
    return this.detection;
  }

  /**
   * Marks the start of a turn (a prompt was just sent): errors already on screen belong to earlier
   * turns from now on.
   */
  beginTurn(): void {
    const lines = this.pane.screenLines();
    const lowest = lowestMatchOf(this.screens.error, this.usesAnsi ? { lines, ansiLines: this.pane.snapshot({ ansi: true }).lines } : { lines });
    this.errorBaseline = countLines(lines, lowest?.line);
    this.errorFloor = lowest && !this.pane.altScreen ? this.pane.scrolledRows + lowest.row : undefined;
    this.workSinceTurn = false;
    // A refusal's notice belongs to the turn that ended on it: the new turn does not start refused.
    if (this.current.evidence?.rule === INTERRUPTED_RULE) this.current = { ...this.current, evidence: null };
    if (this.current.state === 'error') this.evaluate();
  }

  /** Looks at the screen again now (after keys were pressed, for instance), an approval prompt on it too. */
  refresh(): void {
    this.evaluate(true);
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    clearTimeout(this.settleTimer);
    this.subscriptions.dispose();
    this.changes.dispose();
  }

  private onExit(exit: { exitCode: number | null; signal: string | null }): void {
    clearTimeout(this.settleTimer);
    this.transition({ state: 'exited', evidence: null, exit });
  }

  private evaluate(rereadApproval = false): void {
    if (this.disposed || this.current.state === 'exited' || !this.pane.alive) return;
    const lines = this.pane.screenLines();
    const text = lines.join('\n');
    const now = performance.now();
    if (text !== this.screenText) {
      this.screenText = text;
      this.stillSince = now;
    }
    // Rows with colours cost a second pass over the screen: only for profiles that need them.
    const ansiLines = this.usesAnsi ? this.pane.snapshot({ ansi: true }).lines : undefined;
    const rows = ansiLines ? { lines, ansiLines } : { lines };
    const classification = classifyScreen(this.screens, rows, (error) => this.isNewError(error, lines));
    this.detection = classification.detection;
    clearTimeout(this.settleTimer);
    const { state, evidence } = classification;
    // Asked to read the prompt again and the screen shows none (a redraw no pattern reads, or the idle
    // prompt that has not held still long enough to count): the prompt read before is not what the
    // screen shows now, and no one may act on it, though the state stays until the next one is sure.
    if (rereadApproval && state !== 'waiting_approval' && this.current.state === 'waiting_approval' && this.current.approval) {
      this.current = { ...this.current, approval: null };
    }
    if (state === null) return;
    // A CLI retrying a failed request redraws its countdown every second: its error never holds still.
    if (state === 'idle' || (state === 'error' && evidence?.rule !== RETRYING_RULE)) {
      const held = now - this.stillSince;
      if (held < this.idleSettleMs) {
        this.settleTimer = setTimeout(() => this.evaluate(), this.idleSettleMs - held + 5);
        return;
      }
    }
    // An approval prompt is read once as the state begins (and on refresh), not on every render.
    const approval =
      state !== 'waiting_approval'
        ? undefined
        : this.current.state === 'waiting_approval' && !rereadApproval
          ? (this.current.approval ?? null)
          : parseApproval(this.screens, { lines, ansiLines: ansiLines ?? this.pane.snapshot({ ansi: true }).lines }, classification.detection);
    this.transition({
      state,
      evidence,
      ...(classification.error !== undefined ? { error: classification.error } : {}),
      ...(classification.question !== undefined ? { question: classification.question } : {}),
      ...(approval !== undefined ? { approval } : {}),
    });
  }

  /**
   * True when the error line shows more often than when the turn began (the same error may recur),
   * or, on a screen that scrolls, when it is drawn below where the lowest error was then, or below
   * the latest prompt given once this turn's work has shown.
   */
  private isNewError(error: Evidence, lines: readonly string[]): boolean {
    const now = lines.filter((l) => l.trim() === error.line).length;
    if (now > (this.errorBaseline.get(error.line) ?? 0)) return true;
    if (this.errorFloor !== undefined && !this.pane.altScreen && this.pane.scrolledRows + error.row > this.errorFloor) return true;
    // A CLI that shows the prompts given (`turn.prompt`), once this turn's work has shown: an error
    // with no prompt between it and the input row (the one prompt-like row below it) is this turn's.
    const prompts = this.screens.turn?.prompt ?? [];
    if (!this.workSinceTurn || prompts.length === 0) return false;
    const below = lines.slice(error.row + 1).filter((l) => lowestMatchOf(prompts, { lines: [l] }) !== undefined).length;
    return below <= 1;
  }

  private transition(next: Omit<StateChange, 'previous' | 'at'>): void {
    if (next.state === 'thinking' || next.state === 'executing' || next.state === 'waiting_approval') this.workSinceTurn = true;
    if (next.state === this.current.state && next.evidence?.line === this.current.evidence?.line && next.approval === this.current.approval) return;
    const change: StateChange = { ...next, previous: this.current.state, at: Date.now() };
    const changedState = next.state !== this.current.state;
    this.current = change;
    // Evidence updates within one state (a new spinner line, a prompt read again) are kept, not announced.
    if (changedState) this.changes.fire(change);
  }
}

/** True when any of the profile's state patterns reads colours. */
function usesAnsiPatterns(screens: Screens): boolean {
  const lists = [screens.idle, screens.busy, screens.executing, screens.question, screens.approval, screens.error, ...screens.dialogs.map((d) => d.when)];
  return lists.some((list) => list.some((p) => typeof p !== 'string' && p.ansi === true));
}

/** How many rows show `line` (the lowest error when a turn begins), by that line. */
function countLines(lines: readonly string[], line: string | undefined): Map<string, number> {
  const counts = new Map<string, number>();
  if (line !== undefined) counts.set(line, lines.filter((l) => l.trim() === line).length);
  return counts;
}
