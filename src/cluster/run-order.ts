/**
 * One run's events put back in order, pure: what the sink has (everything up to `delivered`),
 * and what came early, held until the gap before it closes. JetStream delivers a run's events in
 * order until a controller restarts: then what the old one had in hand comes back only after the
 * ack wait, behind newer ones (/work/nats-notes.md §5). event-intake.ts feeds it.
 */
export class RunOrder<T> {
  private readonly held = new Map<number, T>();
  /** The stream sequence of the last event the sink took: a gap is looked for after it. */
  lastStreamSeq = 0;

  constructor(
    readonly runId: string,
    /** The highest sequence the sink holds (0: none). */
    private delivered: number,
  ) {}

  /** The sequence the sink needs next. */
  get next(): number {
    return this.delivered + 1;
  }

  /** How many events are held. */
  get heldCount(): number {
    return this.held.size;
  }

  /** True when the sink has `seq` already. */
  isDelivered(seq: number): boolean {
    return seq <= this.delivered;
  }

  /** What is held for `seq`. */
  heldAt(seq: number): T | undefined {
    return this.held.get(seq);
  }

  /** Holds `item` for `seq` until the sink takes it (a sequence the sink has is ignored). */
  hold(seq: number, item: T): void {
    if (!this.isDelivered(seq)) this.held.set(seq, item);
  }

  /** The sink took `next`: it is no longer held. */
  advance(streamSeq: number): void {
    this.held.delete(this.next);
    this.delivered++;
    this.lastStreamSeq = Math.max(this.lastStreamSeq, streamSeq);
  }

  /** The missing sequences before the first held one (`from`..`to`), when `next` is not held. */
  gap(): { from: number; to: number } | undefined {
    if (this.held.size === 0 || this.held.has(this.next)) return undefined;
    return { from: this.next, to: Math.min(...this.held.keys()) - 1 };
  }

  /** Sequences before `seq` are known to be nowhere: the sink goes on from `seq`. */
  skipTo(seq: number): void {
    // Only what is held: a gap may be billions of numbers wide (a sequence a node made up).
    for (const held of this.held.keys()) if (held < seq) this.held.delete(held);
    this.delivered = Math.max(this.delivered, seq - 1);
  }
}
