/**
 * One budget of bytes shared by members (the daemon's panes and sessions): each gets an equal
 * share, between a floor and a ceiling, recomputed as members come and go. What a member holds
 * follows its share, so the total follows the number of members, never how much they produce:
 * past its share a member evicts (spills to disk, or drops with a notice).
 */
import { toDisposable, type Disposable } from './disposable.js';

export interface MemoryBudgetOptions {
  /** No member's share is ever below this (so a crowd of members still works), in bytes. */
  minShare: number;
  /** Nor above this, however few members there are, in bytes. */
  maxShare: number;
}

export class MemoryBudget {
  private readonly members = new Set<(share: number) => void>();
  private current: number;

  constructor(
    readonly totalBytes: number,
    private readonly options: MemoryBudgetOptions,
  ) {
    if (!(totalBytes > 0) || !(options.minShare > 0) || options.maxShare < options.minShare) throw new RangeError('a budget needs a positive total and 0 < minShare <= maxShare');
    this.current = options.maxShare;
  }

  /** Each member's share now, in bytes. */
  get share(): number {
    return this.current;
  }

  get memberCount(): number {
    return this.members.size;
  }

  /**
   * Joins: `onShare` is called at once with the member's share, and again whenever it changes.
   * Disposing leaves the budget (the others' shares grow).
   */
  join(onShare: (share: number) => void): Disposable {
    this.members.add(onShare);
    this.recompute(onShare);
    return toDisposable(() => {
      if (this.members.delete(onShare)) this.recompute();
    });
  }

  private recompute(joined?: (share: number) => void): void {
    const next = Math.max(this.options.minShare, Math.min(this.options.maxShare, Math.floor(this.totalBytes / Math.max(1, this.members.size))));
    const changed = next !== this.current;
    this.current = next;
    for (const member of this.members) if (changed || member === joined) member(next);
  }
}
