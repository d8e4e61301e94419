/**
 * Parses pane output fairly. Output is queued per pane as it arrives; parsing happens in turns of
 * at most `budgetMs`, round-robin across panes, and then yields to the event loop so requests and
 * other panes' input are served between turns. One pane flooding output therefore delays another
 * pane's answer by at most one turn.
 */

/** Something with queued output to parse. */
export interface Schedulable {
  /** Parses queued output until `deadline` (performance.now() time); returns true while some is left. */
  drainUntil(deadline: number): boolean;
}

export class RenderScheduler {
  private readonly ready = new Set<Schedulable>();
  private scheduled = false;

  constructor(private readonly budgetMs = 4) {}

  /** Queues `item` for parsing in the next turn. */
  schedule(item: Schedulable): void {
    this.ready.add(item);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.turn());
    }
  }

  /** Stops scheduling `item` (it exited or was removed). */
  forget(item: Schedulable): void {
    this.ready.delete(item);
  }

  /** Number of items with output waiting. */
  get backlog(): number {
    return this.ready.size;
  }

  private turn(): void {
    this.scheduled = false;
    const deadline = performance.now() + this.budgetMs;
    // Give every ready pane a slice before any pane gets a second one.
    const share = this.budgetMs / Math.max(1, this.ready.size);
    try {
      for (const item of [...this.ready]) {
        const sliceDeadline = Math.min(deadline, performance.now() + share);
        // Re-inserting moves the item to the back, so the next turn starts with the others.
        this.ready.delete(item);
        if (item.drainUntil(sliceDeadline)) this.ready.add(item);
        if (performance.now() >= deadline) break;
      }
    } finally {
      // Even if one pane's parsing threw, the others keep their turns.
      if (this.ready.size > 0) {
        this.scheduled = true;
        setImmediate(() => this.turn());
      }
    }
  }
}
