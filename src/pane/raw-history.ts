/**
 * The last `maxBytes` of a pane's raw output, exactly as the program wrote it, for clients that
 * replay it into their own terminal. Bytes are copied into fixed blocks so a retained history never
 * pins the larger buffers the reads arrived in.
 */

const BLOCK_BYTES = 16 * 1024;
/** A pane's first block: a shell's prompt and a few commands fit, and an idle pane holds no more. */
const FIRST_BLOCK_BYTES = 1024;

export interface RawRead {
  data: Buffer;
  /** Stream offset of data[0]. */
  from: number;
  /** True when bytes before `from` were requested but are no longer held. */
  truncated: boolean;
}

export class RawHistory {
  private readonly blocks: Buffer[] = [];
  /** Bytes used in the last block. */
  private tailUsed = 0;
  /** Stream offset of the first byte of blocks[0]. */
  private startOffset = 0;
  private total = 0;
  /** Bytes held in blocks (every block but the tail is full). */
  private held = 0;

  constructor(readonly maxBytes: number) {}

  /** Bytes ever appended: the stream offset just past the newest byte. */
  get endOffset(): number {
    return this.total;
  }

  /** Stream offset of the oldest byte `read` returns (at most `maxBytes` back from the end). */
  get firstOffset(): number {
    return Math.max(this.startOffset, this.total - Math.min(this.heldBytes, this.maxBytes));
  }

  get heldBytes(): number {
    return this.held;
  }

  append(chunk: Uint8Array): void {
    this.total += chunk.length;
    if (this.maxBytes <= 0) {
      this.startOffset = this.total;
      return;
    }
    let offset = 0;
    while (offset < chunk.length) {
      let tail = this.blocks.at(-1);
      if (!tail || this.tailUsed === tail.length) {
        tail = Buffer.allocUnsafeSlow(tail ? BLOCK_BYTES : FIRST_BLOCK_BYTES);
        this.blocks.push(tail);
        this.tailUsed = 0;
      }
      const n = Math.min(tail.length - this.tailUsed, chunk.length - offset);
      tail.set(chunk.subarray(offset, offset + n), this.tailUsed);
      this.tailUsed += n;
      this.held += n;
      offset += n;
    }
    // Evict whole blocks while the rest still covers maxBytes.
    for (let first = this.blocks[0]; first && this.blocks.length > 1 && this.held - first.length >= this.maxBytes; first = this.blocks[0]) {
      this.blocks.shift();
      this.held -= first.length;
      this.startOffset += first.length;
    }
  }

  /** The bytes from stream offset `from` (default: everything held, capped at maxBytes) to the end. */
  read(from?: number): RawRead {
    const oldest = this.firstOffset;
    const start = Math.min(this.total, Math.max(from ?? oldest, oldest));
    const truncated = from !== undefined && from < oldest;
    const data = Buffer.allocUnsafe(this.total - start);
    let written = 0;
    let blockOffset = this.startOffset;
    for (let i = 0; i < this.blocks.length; i++) {
      const block = this.blocks[i] as Buffer;
      const used = i === this.blocks.length - 1 ? this.tailUsed : block.length;
      const blockEnd = blockOffset + used;
      if (blockEnd > start) {
        const lo = Math.max(0, start - blockOffset);
        written += block.copy(data, written, lo, used);
      }
      blockOffset = blockEnd;
    }
    return { data: data.subarray(0, written), from: start, truncated: truncated || (from === undefined && oldest > 0) };
  }
}
