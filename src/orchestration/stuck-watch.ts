/**
 * Stuck workers (issue 24 item 7; seed 003 FR-102): a worker busy on an unchanged screen, or
 * waiting (an approval, a question), for longer than its role's limit is stuck. "Unchanged" is
 * judged on the screen's text without digits and spinner glyphs, so a CLI whose only motion is its
 * spinner and its elapsed-time counter counts as unchanged (structure, not one CLI's wording). A
 * busy stuck worker is nudged (the preset's message), at most `maxNudges` times; a waiting one is
 * left to a person, whose answer it waits for. Restarting is a person's decision (TeamRun.restartWorker).
 *
 * Each worker is in one of two states, `moving` or `stuck`; a change of its screen moves it back.
 */
import type { Disposable } from '../core/disposable.js';
import type { AgentPane, AgentState } from '../agents/index.js';

/** What a role's workers are held to (from the preset). */
export interface StuckPolicy {
  afterMs: number;
  nudge: string;
  maxNudges: number;
}

export interface StuckWatchOptions {
  /** A worker has become stuck (`why`), or moved again. */
  onStuck(workerId: string, why: string): void;
  onMoving(workerId: string): void;
  /** Types the nudge into a busy stuck worker. */
  nudge(workerId: string, text: string): void;
  /** How often screens are looked at (default: a quarter of the shortest limit, at most 5 s). */
  checkEveryMs?: number;
  now?: () => number;
}

interface Watched {
  agent: AgentPane;
  policy: StuckPolicy;
  shape: string;
  changedAt: number;
  state: 'moving' | 'stuck';
  nudges: number;
}

/** States in which a worker is expected to move, or to be answered. */
const BUSY: ReadonlySet<AgentState> = new Set(['thinking', 'executing']);
const WAITING: ReadonlySet<AgentState> = new Set(['waiting_approval', 'waiting_input']);
/** The longest between two looks at the screens. */
const MAX_CHECK_MS = 5_000;

export class StuckWatch implements Disposable {
  private readonly watched = new Map<string, Watched>();
  private timer: NodeJS.Timeout | undefined;
  private disposed = false;
  private readonly now: () => number;

  constructor(private readonly options: StuckWatchOptions) {
    this.now = options.now ?? Date.now;
  }

  /** Watches `agent` as worker `workerId` (again, from scratch, after a restart). */
  watch(workerId: string, agent: AgentPane, policy: StuckPolicy): void {
    if (this.disposed) return;
    const previous = this.watched.get(workerId);
    this.watched.set(workerId, { agent, policy, shape: shapeOf(agent), changedAt: this.now(), state: 'moving', nudges: previous?.nudges ?? 0 });
    if (previous?.state === 'stuck') this.options.onMoving(workerId);
    this.schedule();
  }

  isStuck(workerId: string): boolean {
    return this.watched.get(workerId)?.state === 'stuck';
  }

  /** Looks at every watched screen once (the timer calls it; a test may too). */
  check(): void {
    const now = this.now();
    for (const [workerId, w] of this.watched) {
      if (!w.agent.pane.alive) continue;
      const shape = shapeOf(w.agent);
      const state = w.agent.state.state;
      if (shape !== w.shape || !(BUSY.has(state) || WAITING.has(state))) {
        w.shape = shape;
        w.changedAt = now;
        if (w.state === 'stuck') {
          w.state = 'moving';
          this.options.onMoving(workerId);
        }
        continue;
      }
      if (w.state === 'stuck' || now - w.changedAt < w.policy.afterMs) continue;
      w.state = 'stuck';
      const quietS = Math.round((now - w.changedAt) / 1000);
      this.options.onStuck(workerId, `${BUSY.has(state) ? 'busy' : 'waiting'} on an unchanged screen for ${quietS} s`);
      // A waiting worker waits for an answer: typing into its question would answer it.
      if (BUSY.has(state) && w.nudges < w.policy.maxNudges) {
        w.nudges++;
        this.options.nudge(workerId, w.policy.nudge);
      }
    }
  }

  dispose(): void {
    this.disposed = true;
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    this.watched.clear();
  }

  private schedule(): void {
    const every = this.options.checkEveryMs ?? Math.min(MAX_CHECK_MS, ...[...this.watched.values()].map((w) => Math.max(250, Math.floor(w.policy.afterMs / 4))));
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = setInterval(() => this.check(), every);
    this.timer.unref();
  }
}

/**
 * What a screen shows without what moves on its own: digits (timers, counters) and the glyphs
 * spinners are drawn with (braille, stars, arcs, bars).
 */
function shapeOf(agent: AgentPane): string {
  return agent.pane
    .screenLines()
    .join('\n')
    .replace(/[0-9]/g, '')
    .replace(/[\u2800-\u28ff\u2722-\u273f\u25d0-\u25d3\u2596-\u259f|/\\·•∙*+-]/g, '')
    .replace(/[ \t]+/g, ' ');
}
