/**
 * Request bodies, read the one way every HTTP route reads them: at most a limit of bytes, decoded
 * as strict UTF-8 (as JSON-RPC decodes a request: invalid bytes are PARSE_ERROR, never replaced by
 * U+FFFD). A body over the limit is not kept; the rest of it is read and thrown away, up to a bound,
 * so that a client still sending reads the 413 instead of a reset, and the answer closes the
 * connection (`Connection: close`).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { SwitchboardError } from '../../core/errors.js';
import { decodeUtf8Strict } from '../../core/utf8.js';

/** Past the limit, at most this much more of a body is read and dropped before the answer. */
const BODY_DISCARD_BYTES = 16 * 1024 * 1024;

/** A body over its limit: LIMIT_EXCEEDED, answered 413 on every route. */
export class BodyTooLarge extends SwitchboardError {
  constructor(readonly limit: number) {
    super('LIMIT_EXCEEDED', `the body is larger than ${limit} bytes`, { limit });
  }
}

/** The request's body, at most `limit` bytes: BodyTooLarge past it (the rest read and dropped up to a bound). */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length'] ?? NaN);
  // Too large to be worth reading even to throw it away: answered at once, and the connection closed.
  if (Number.isFinite(declared) && declared > limit + BODY_DISCARD_BYTES) return Promise.reject(new BodyTooLarge(limit));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const settle = (outcome: () => void): void => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onGone);
      req.off('close', onGone);
      outcome();
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size <= limit) chunks.push(chunk);
      else if (chunks.length > 0) chunks.length = 0;
      if (size > limit + BODY_DISCARD_BYTES) settle(() => reject(new BodyTooLarge(limit)));
    };
    const onEnd = (): void => settle(() => (size > limit ? reject(new BodyTooLarge(limit)) : resolve(Buffer.concat(chunks))));
    const onGone = (): void => settle(() => reject(new SwitchboardError('INVALID_REQUEST', 'the client went away before its body was read')));
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onGone);
    req.on('close', onGone);
  });
}

/** The body as text: PARSE_ERROR when it is not valid UTF-8. */
export function bodyText(body: Uint8Array): string {
  const text = decodeUtf8Strict(body);
  if (text === undefined) throw new SwitchboardError('PARSE_ERROR', 'parse error: the body is not valid UTF-8');
  return text;
}

/** An answer to a refused body ends the connection: what the client still sends is not read. */
export function closeAfterAnswer(res: ServerResponse): void {
  if (!res.headersSent) res.setHeader('Connection', 'close');
}
