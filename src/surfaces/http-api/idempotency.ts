/**
 * `Idempotency-Key` for the endpoints that start a run (`POST /agent/run`, the chat proxy): a
 * request repeated with the same key by the same caller gets the run the first one started, never a
 * second run. Agents have side effects and cost money, and HTTP clients retry on their own (the
 * `openai` package twice by default, on a timeout or a dropped connection), so a client that wants
 * to retry safely names its request.
 *
 * A key used again with a different request is refused (422): the caller confused two requests, and
 * guessing which it meant could run the wrong prompt. Keys are kept in memory for a day, at most
 * MAX_KEYS of them (the oldest go first); a daemon restart forgets them.
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { HttpError } from './router.js';

const IDEMPOTENCY_HEADER = 'idempotency-key';
const KEY_TTL_MS = 24 * 60 * 60_000;
const MAX_KEYS = 10_000;
const MAX_KEY_LENGTH = 255;

interface Remembered {
  runId: Promise<string>;
  fingerprint: string;
  at: number;
}

/** The request's Idempotency-Key, or undefined; a malformed one is a 400. */
export function idempotencyKeyOf(req: IncomingMessage): string | undefined {
  const raw = req.headers[IDEMPOTENCY_HEADER];
  if (raw === undefined) return undefined;
  const key = (Array.isArray(raw) ? raw.join(',') : raw).trim();
  // Printable ASCII without spaces, as the IETF draft's sf-string and every client's UUIDs are.
  if (key === '' || key.length > MAX_KEY_LENGTH || !/^[\x21-\x7e]+$/.test(key)) {
    throw new HttpError(400, 'INVALID_PARAMS', `Idempotency-Key must be 1 to ${MAX_KEY_LENGTH} printable characters without spaces`);
  }
  return key;
}

/** A digest of what makes two requests the same request. */
export function requestFingerprint(parts: unknown): string {
  return createHash('sha256').update(JSON.stringify(parts)).digest('hex');
}

export class IdempotencyKeys {
  private readonly keys = new Map<string, Remembered>();

  constructor(private readonly now: () => number = Date.now) {}

  /**
   * The run of the first request with this caller and key, or the one `start` begins now. A second
   * request that comes while the first is still starting its run waits for the same run. If
   * starting fails, the key is forgotten, so that the request can be made again.
   */
  async runFor(caller: string, key: string, fingerprint: string, start: () => Promise<string>): Promise<{ runId: string; repeated: boolean }> {
    this.expire();
    const id = `${caller}\u0000${key}`;
    const known = this.keys.get(id);
    if (known) {
      if (known.fingerprint !== fingerprint) throw new HttpError(422, 'INVALID_PARAMS', 'this Idempotency-Key was used for a different request: use a new key for a new request', { idempotency_key: key });
      return { runId: await known.runId, repeated: true };
    }
    const runId = start();
    this.keys.set(id, { runId, fingerprint, at: this.now() });
    while (this.keys.size > MAX_KEYS) this.keys.delete(this.keys.keys().next().value as string);
    try {
      return { runId: await runId, repeated: false };
    } catch (err) {
      if (this.keys.get(id)?.runId === runId) this.keys.delete(id);
      throw err;
    }
  }

  private expire(): void {
    const oldest = this.now() - KEY_TTL_MS;
    // Insertion order is age order: stop at the first key still young enough.
    for (const [id, entry] of this.keys) {
      if (entry.at >= oldest) break;
      this.keys.delete(id);
    }
  }
}
