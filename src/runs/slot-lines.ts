/**
 * Node runs waiting on the controller for a slot on their node: when every live node that could
 * take a run was full at submit, the run is recorded `queued` for the node with the shortest line
 * for its size, and waits here, in line behind the runs that came before it for that node. It is
 * never put in the node's work queue before the node has room: there it would wait unseen, for a
 * day at most, and a node's queue has no order the controller could change.
 *
 * One line per node, first come first served: the first run of a line goes once its node has a
 * free slot (as its lease and the runs already sent it say), and the ones behind it after. A run
 * leaves its line when it goes, when it ends while waiting (cancelled, its node lost), or when it
 * moves to another node (remote-submit.ts): `oldestFirst` gives every waiting run in the order they
 * joined, whatever their line, so that the runs that waited longest move first.
 */

/** A run in line: what it needs of its node, and what sends it on once it has a slot. */
interface Waiting {
  readonly runId: string;
  readonly backend: string;
  readonly go: () => void;
  /** When it joined, among every run that joined any line. */
  readonly order: number;
}

export class SlotLines {
  private readonly lines = new Map<string, Waiting[]>();
  /** Each waiting run's node, for `leave` and `has`. */
  private readonly nodeOf = new Map<string, string>();
  private joined = 0;

  /** Puts run `runId` at the end of `node`'s line; `go` is called once it may be sent. */
  join(node: string, runId: string, backend: string, go: () => void): void {
    if (this.nodeOf.has(runId)) return;
    const line = this.lines.get(node) ?? [];
    line.push({ runId, backend, go, order: ++this.joined });
    this.lines.set(node, line);
    this.nodeOf.set(runId, node);
  }

  /** Takes run `runId` out of its line (it ended while waiting): true when it was in one. */
  leave(runId: string): boolean {
    const node = this.nodeOf.get(runId);
    if (node === undefined) return false;
    this.nodeOf.delete(runId);
    const line = (this.lines.get(node) ?? []).filter((w) => w.runId !== runId);
    if (line.length > 0) this.lines.set(node, line);
    else this.lines.delete(node);
    return true;
  }

  has(runId: string): boolean {
    return this.nodeOf.has(runId);
  }

  /** Where run `runId` is in its node's line (0: next), or -1 when it waits in none. */
  position(runId: string): number {
    const node = this.nodeOf.get(runId);
    return node === undefined ? -1 : (this.lines.get(node) ?? []).findIndex((w) => w.runId === runId);
  }

  /** How many runs wait for `node`. */
  waitingFor(node: string): number {
    return this.lines.get(node)?.length ?? 0;
  }

  /** The runs waiting, in no particular order. */
  runIds(): IterableIterator<string> {
    return this.nodeOf.keys();
  }

  /** Every run waiting and its node, in the order they joined (a copy: the caller may move them). */
  oldestFirst(): { runId: string; node: string }[] {
    const all: { runId: string; node: string; order: number }[] = [];
    for (const [node, line] of this.lines) for (const w of line) all.push({ runId: w.runId, node, order: w.order });
    return all.sort((a, b) => a.order - b.order).map(({ runId, node }) => ({ runId, node }));
  }

  /**
   * Sends on the first runs of each line while their node has room (`hasRoom`, asked again after
   * each: the run sent takes a slot). A line whose first run cannot go yet keeps everyone behind it.
   */
  advance(hasRoom: (node: string, backend: string) => boolean): void {
    for (const [node, line] of [...this.lines]) {
      for (let first = line[0]; first !== undefined && hasRoom(node, first.backend); first = line[0]) {
        line.shift();
        this.nodeOf.delete(first.runId);
        first.go();
      }
      if (line.length === 0) this.lines.delete(node);
    }
  }
}
