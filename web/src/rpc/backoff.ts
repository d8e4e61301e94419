/**
 * Delays between reconnect attempts: doubling from a quarter second up to ten seconds, with
 * jitter so many tabs do not hammer a restarted daemon in step.
 */
export class Backoff {
  private attempt = 0;

  constructor(
    private readonly baseMs = 250,
    private readonly maxMs = 10_000,
    private readonly random: () => number = Math.random,
  ) {}

  /** The wait before the next attempt; each call lengthens the one after. */
  next(): number {
    const ceiling = Math.min(this.maxMs, this.baseMs * 2 ** this.attempt);
    this.attempt = Math.min(this.attempt + 1, 30);
    // Between half and all of the ceiling: spread out, never much shorter than intended.
    return Math.round(ceiling / 2 + (this.random() * ceiling) / 2);
  }

  /** After a connection that worked: start again from the shortest wait. */
  reset(): void {
    this.attempt = 0;
  }
}
