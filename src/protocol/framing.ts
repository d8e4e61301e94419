/**
 * Newline-delimited framing for JSON-RPC over byte streams: splits arriving chunks into lines,
 * however the chunks fall (half a line, many lines, a line split in a multi-byte character), and
 * bounds the size of a line so a client cannot make the reader buffer without limit.
 */

export type FrameEvent =
  | { kind: 'line'; line: Buffer }
  /** A line longer than the limit was dropped (the part after the limit was never buffered). */
  | { kind: 'oversize'; bytes: number };

const NEWLINE = 0x0a;

export class LineFramer {
  private parts: Buffer[] = [];
  private partBytes = 0;
  /** Bytes of the current too-long line seen so far (while discarding it). */
  private discarding = -1;

  constructor(readonly maxLineBytes: number) {}

  /** Bytes of an unfinished line held right now. */
  get pendingBytes(): number {
    return this.partBytes;
  }

  /** True while part of a line has arrived and its end has not. */
  get hasPartialLine(): boolean {
    return this.partBytes > 0 || this.discarding >= 0;
  }

  /** Feeds a chunk; returns the complete lines (without the newline or a trailing CR) and oversize notices. */
  push(chunk: Buffer): FrameEvent[] {
    const events: FrameEvent[] = [];
    let start = 0;
    while (start < chunk.length) {
      const nl = chunk.indexOf(NEWLINE, start);
      const end = nl === -1 ? chunk.length : nl;
      const piece = chunk.subarray(start, end);
      if (this.discarding >= 0) {
        this.discarding += piece.length;
      } else if (this.partBytes + piece.length > this.maxLineBytes) {
        this.discarding = this.partBytes + piece.length;
        this.parts = [];
        this.partBytes = 0;
      } else if (piece.length > 0) {
        this.parts.push(piece);
        this.partBytes += piece.length;
      }
      if (nl === -1) break;
      if (this.discarding >= 0) {
        events.push({ kind: 'oversize', bytes: this.discarding });
        this.discarding = -1;
      } else {
        // concat copies, so the line owns its bytes rather than viewing the caller's chunk.
        const line = Buffer.concat(this.parts, this.partBytes);
        const end = line.length > 0 && line[line.length - 1] === 0x0d ? line.length - 1 : line.length;
        events.push({ kind: 'line', line: line.subarray(0, end) });
        this.parts = [];
        this.partBytes = 0;
      }
      start = nl + 1;
    }
    // The caller may reuse the chunk's memory: the piece of an unfinished line that views it is copied
    // (only that piece, so a line trickling in byte by byte costs linear time, not quadratic).
    const last = this.parts.length - 1;
    const tail = this.parts[last];
    if (tail && tail.buffer === chunk.buffer) this.parts[last] = Buffer.from(tail);
    return events;
  }
}
