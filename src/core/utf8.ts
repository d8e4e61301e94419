/**
 * UTF-8 decoding for a byte stream cut at arbitrary points, keeping track of where each piece of
 * text starts in the stream. A character split across two chunks is held back and decoded with the
 * next one, so text offsets stay exact (StringDecoder does the same but does not say how much it holds).
 */

/** Bytes at the end of `bytes` that start a character whose remaining bytes have not arrived (0–3). */
export function incompleteUtf8Tail(bytes: Uint8Array): number {
  const n = bytes.length;
  for (let i = 1; i <= Math.min(4, n); i++) {
    const b = bytes[n - i] ?? 0;
    if ((b & 0xc0) === 0x80) continue;
    const length = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
    return length > i ? i : 0;
  }
  return 0;
}

/** Bytes at the start of `bytes` that continue a character begun before them (0–3). */
export function leadingContinuationBytes(bytes: Uint8Array): number {
  let i = 0;
  while (i < Math.min(3, bytes.length) && ((bytes[i] ?? 0) & 0xc0) === 0x80) i++;
  return i;
}

export interface DecodedPiece {
  text: string;
  /** Stream offset of the first byte the text stands for. */
  offset: number;
  /** How many stream bytes the text stands for. */
  bytes: number;
}

export class Utf8Stream {
  private held: Buffer = Buffer.alloc(0);

  /** Decodes `chunk`, which starts at stream offset `offset`. */
  push(chunk: Uint8Array, offset: number): DecodedPiece {
    const all = this.held.length > 0 ? Buffer.concat([this.held, chunk]) : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    const tail = incompleteUtf8Tail(all);
    const start = offset - this.held.length;
    const complete = all.length - tail;
    this.held = Buffer.from(all.subarray(complete));
    return { text: all.toString('utf8', 0, complete), offset: start, bytes: complete };
  }

  /** Bytes held back, waiting for the rest of their character. */
  get heldBytes(): number {
    return this.held.length;
  }
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/** `bytes` as text when they are valid UTF-8, else undefined (never U+FFFD in place of bad bytes). */
export function decodeUtf8Strict(bytes: Uint8Array): string | undefined {
  try {
    return strictUtf8.decode(bytes);
  } catch {
    return undefined;
  }
}
