/**
 * Scrollback rows kept compactly: rows are gathered into blocks whose text is joined into one flat
 * string, so a row costs about one byte per character (xterm's own buffer spends 12 bytes per cell,
 * whatever the row holds). Oldest rows are evicted first once `maxRows` is exceeded.
 */

/** One row of text as it appeared on the terminal, and whether it continues the row above it. */
export interface StoredRow {
  text: string;
  /** True when this row is the soft-wrapped continuation of the previous row. */
  wrapped: boolean;
}

interface Block {
  /** The rows' text joined with '\n' (rows never contain '\n'). */
  text: string;
  count: number;
  /** Bit i set when row i is wrapped; undefined when no row of the block is. */
  wrapped: Uint8Array | undefined;
}

const DEFAULT_BLOCK_ROWS = 64;

export class RowStore {
  private readonly blocks: Block[] = [];
  /** Rows logically evicted from the front of blocks[0]. */
  private headSkip = 0;
  private openText: string[] = [];
  private openWrapped: boolean[] = [];
  private sealedRows = 0;
  private evictedTotal = 0;

  constructor(
    readonly maxRows: number,
    private readonly blockRows = DEFAULT_BLOCK_ROWS,
  ) {}

  /** Number of rows currently held. */
  get length(): number {
    return this.sealedRows - this.headSkip + this.openText.length;
  }

  /** Rows evicted since creation or the last clear (lets callers number rows absolutely). */
  get evicted(): number {
    return this.evictedTotal;
  }

  /** Approximate bytes held by row text. */
  get approximateBytes(): number {
    let bytes = 0;
    for (const block of this.blocks) bytes += block.text.length + 32;
    for (const text of this.openText) bytes += text.length + 16;
    return bytes;
  }

  /** Appends one row, evicting the oldest when over capacity. */
  append(text: string, wrapped: boolean): void {
    if (this.maxRows <= 0) return;
    this.openText.push(text);
    this.openWrapped.push(wrapped);
    if (this.openText.length >= this.blockRows) this.seal();
    this.evictOverflow();
  }

  /** Removes rows from the end until `length` rows remain. */
  truncate(length: number): void {
    const target = Math.max(0, length);
    while (this.length > target) {
      if (this.openText.length === 0) this.unsealLast();
      const excess = this.length - target;
      const drop = Math.min(excess, this.openText.length);
      this.openText.length -= drop;
      this.openWrapped.length -= drop;
    }
  }

  /** Removes every row. */
  clear(): void {
    this.blocks.length = 0;
    this.headSkip = 0;
    this.sealedRows = 0;
    this.openText = [];
    this.openWrapped = [];
    this.evictedTotal = 0;
  }

  /** Rows [start, end) in order, oldest first (indices clamp to what is held). */
  slice(start: number, end: number = this.length): StoredRow[] {
    const from = Math.max(0, start);
    const to = Math.min(this.length, end);
    const out: StoredRow[] = [];
    if (from >= to) return out;
    // Index space: sealed rows (after headSkip) first, then open rows.
    let index = -this.headSkip;
    for (const block of this.blocks) {
      const blockStart = index;
      const blockEnd = index + block.count;
      index = blockEnd;
      if (blockEnd <= from) continue;
      if (blockStart >= to) break;
      const texts = block.text.split('\n');
      const lo = Math.max(from, blockStart) - blockStart;
      const hi = Math.min(to, blockEnd) - blockStart;
      for (let i = lo; i < hi; i++) {
        out.push({ text: texts[i] ?? '', wrapped: isBitSet(block.wrapped, i) });
      }
    }
    const openStart = this.sealedRows - this.headSkip;
    for (let i = Math.max(from, openStart); i < to; i++) {
      out.push({ text: this.openText[i - openStart] ?? '', wrapped: this.openWrapped[i - openStart] ?? false });
    }
    return out;
  }

  private seal(): void {
    const count = this.openText.length;
    if (count === 0) return;
    let wrapped: Uint8Array | undefined;
    for (let i = 0; i < count; i++) {
      if (this.openWrapped[i]) {
        wrapped ??= new Uint8Array(Math.ceil(count / 8));
        wrapped[i >> 3] = (wrapped[i >> 3] ?? 0) | (1 << (i & 7));
      }
    }
    // join() builds a flat string, releasing the rope strings the terminal produced.
    this.blocks.push({ text: this.openText.join('\n'), count, wrapped });
    this.sealedRows += count;
    this.openText = [];
    this.openWrapped = [];
  }

  private unsealLast(): void {
    const block = this.blocks.pop();
    if (!block) return;
    this.sealedRows -= block.count;
    const texts = block.text.split('\n');
    const flags = texts.map((_, i) => isBitSet(block.wrapped, i));
    if (this.blocks.length === 0 && this.headSkip > 0) {
      // The last block was also the first: drop the rows already evicted from its front.
      texts.splice(0, this.headSkip);
      flags.splice(0, this.headSkip);
      this.headSkip = 0;
    }
    this.openText = texts;
    this.openWrapped = flags;
  }

  private evictOverflow(): void {
    let excess = this.length - this.maxRows;
    while (excess > 0) {
      const first = this.blocks[0];
      if (!first) {
        // Everything is in the open block.
        this.openText.splice(0, excess);
        this.openWrapped.splice(0, excess);
        this.evictedTotal += excess;
        return;
      }
      const available = first.count - this.headSkip;
      const drop = Math.min(excess, available);
      this.headSkip += drop;
      this.evictedTotal += drop;
      excess -= drop;
      if (this.headSkip >= first.count) {
        this.blocks.shift();
        this.sealedRows -= first.count;
        this.headSkip = 0;
      }
    }
  }
}

function isBitSet(bits: Uint8Array | undefined, i: number): boolean {
  return bits !== undefined && ((bits[i >> 3] ?? 0) & (1 << (i & 7))) !== 0;
}
