/**
 * Where a node keeps copies of its agent CLIs' conversation files, so that a run resumed on
 * another host goes on with its conversation (issue 26): a JetStream object store per node,
 * `sb_conversations_<node>`. The node writes its own shelf only; the controller, which may read
 * every shelf, copies a conversation onto the shelf of the node a resume goes to before it sends
 * the run there, and that node reads its own shelf. So no node ever reads or overwrites another
 * node's conversations, and NATS subjects (whole tokens only) can say so.
 *
 * An object is named `<backend>/<conversation id>` and carries, in its metadata, where the file
 * sat under the CLI's folder (`relative`): the receiving side decides whether it accepts that place.
 *
 * Copies are written with the object store's own put, and read here chunk by chunk with the
 * stream API's get, never through a consumer (a node that may create consumers can have one
 * deliver to any subject, past its permissions) nor a direct get (which answers with the stored
 * bytes on whatever subject the asker names: reflected.ts). What a shelf says of an object is a node's word, so a read
 * follows no link, and stops at a size and a deadline before it holds more.
 */
import { createHash, type Hash } from 'node:crypto';
import { jetstream, jetstreamManager, type JetStreamManager, type MsgRequest } from '@nats-io/jetstream';
import { Objm, type ObjectStore } from '@nats-io/obj';
import type { NatsConnection } from '@nats-io/transport-node';
import { SwitchboardError } from '../core/errors.js';
import { conversationBucket } from './topology.js';

/** A copy not written again for this long is dropped: a conversation a month old is resumed from its node, or not at all. */
const SHELF_MAX_AGE_MS = 30 * 24 * 60 * 60 * 1000;
/** The most one copy may hold: a node writes no larger one, and nobody reads one. */
export const MAX_SHELVED_BYTES = 256 * 1024 * 1024;
/** A read that takes longer is given up (a node's shelf that trickles). */
const READ_DEADLINE_MS = 120_000;
/** The smallest chunk but the last a read takes (the store writes 128 KiB ones). */
const MIN_CHUNK_BYTES = 64 * 1024;
/** Reads of a copy its node keeps replacing, before giving up. */
const READ_ATTEMPTS = 5;

/** One conversation's copy as a shelf holds it. */
export interface ShelvedConversation {
  data: Uint8Array;
  /** Where the file sat under the CLI's folder on the node that wrote it (forward slashes). */
  relative: string;
}

const objectName = (backend: string, conversation: string): string => `${backend}/${conversation}`;

/** The object store's digest form: `SHA-256=` and the base64url digest (padded or not). */
function sameDigest(stated: unknown, sha: Hash): boolean {
  return typeof stated === 'string' && stated.replace(/=+$/, '') === `SHA-256=${sha.copy().digest('base64url')}`;
}

export class ConversationShelf {
  private constructor(
    private readonly bucket: string,
    private readonly store: ObjectStore,
    private readonly jsm: JetStreamManager,
  ) {}

  /**
   * Lays out `node`'s shelf (the controller's job, at the node's join: a node may not create
   * streams). Idempotent. No byte limit on the stream: JetStream reserves a stream's limit against
   * the server's storage whether it is used or not; copies age out instead, each is bounded, and
   * the server's own `max_file_store` bounds them all.
   */
  static async ensure(nc: NatsConnection, node: string): Promise<void> {
    await new Objm(nc).create(conversationBucket(node), { ttl: SHELF_MAX_AGE_MS * 1_000_000 });
  }

  /** Opens `node`'s shelf, laid out already (a node opens its own; the controller any), asking the server nothing on the way. */
  static async open(nc: NatsConnection, node: string): Promise<ConversationShelf> {
    const bucket = conversationBucket(node);
    const js = jetstream(nc, { checkAPI: false });
    return new ConversationShelf(bucket, await new Objm(js).open(bucket, false), await jetstreamManager(nc, { checkAPI: false }));
  }

  /** Writes a conversation's copy, in place of the one before. */
  async put(backend: string, conversation: string, copy: ShelvedConversation): Promise<void> {
    if (copy.data.length > MAX_SHELVED_BYTES) throw new SwitchboardError('LIMIT_EXCEEDED', `a conversation copy is at most ${MAX_SHELVED_BYTES} bytes (this one: ${copy.data.length})`);
    await this.store.putBlob({ name: objectName(backend, conversation), metadata: { relative: copy.relative } }, copy.data);
  }

  /**
   * A conversation's copy, or undefined when the shelf has none. One that is not a plain object of
   * this shelf (a link, another bucket's), too large, or whose bytes do not match its digest is
   * refused (INVALID_REQUEST). A copy replaced while it is read (its node writes it again, and
   * drops the old chunks) is read again as it is now.
   */
  get(backend: string, conversation: string): Promise<ShelvedConversation | undefined> {
    return this.read(backend, conversation, async (info, chunks) => {
      const data = new Uint8Array(info.size);
      let filled = 0;
      for await (const chunk of chunks) {
        data.set(chunk, filled);
        filled += chunk.length;
      }
      return { data, relative: info.relative };
    });
  }

  /**
   * Copies a conversation from this shelf onto `to`, in place of the one there, a chunk at a time
   * (the copier never holds the whole conversation): its size, or undefined when this shelf has
   * none. Checked as `get` checks; a copy that proves not whole on the way is never written there
   * (the store drops the chunks it wrote, and `to` keeps the copy it had).
   */
  copyTo(backend: string, conversation: string, to: ConversationShelf): Promise<number | undefined> {
    return this.read(backend, conversation, async (info, chunks) => {
      const iterator = chunks[Symbol.asyncIterator]();
      const stream = new ReadableStream<Uint8Array>({
        async pull(controller) {
          const next = await iterator.next();
          if (next.done === true) controller.close();
          else controller.enqueue(next.value);
        },
      });
      await to.store.put({ name: objectName(backend, conversation), metadata: { relative: info.relative } }, stream);
      return info.size;
    });
  }

  /**
   * Reads copy `<backend>/<conversation>` with `use`, which takes its chunks in order; read again
   * when they prove not whole because the copy was replaced meanwhile.
   */
  private async read<T>(backend: string, conversation: string, use: (info: { size: number; relative: string }, chunks: AsyncIterable<Uint8Array>) => Promise<T>): Promise<T | undefined> {
    const name = objectName(backend, conversation);
    const what = `the copy of ${backend} conversation ${conversation} on ${this.bucket}`;
    const deadline = Date.now() + READ_DEADLINE_MS;
    for (let attempt = 1; ; attempt++) {
      const info = await this.store.info(name);
      if (info === null || info.deleted) return undefined;
      if (info.options?.link !== undefined || info.bucket !== this.bucket) throw new SwitchboardError('INVALID_REQUEST', `${what} is not an object of its own`);
      if (!Number.isSafeInteger(info.size) || info.size < 0 || info.size > MAX_SHELVED_BYTES) throw new SwitchboardError('INVALID_REQUEST', `${what} says it holds ${info.size} bytes (at most ${MAX_SHELVED_BYTES})`);
      try {
        return await use({ size: info.size, relative: info.metadata?.relative ?? '' }, this.chunks(`$O.${this.bucket}.C.${info.nuid}`, info.size, info.digest, deadline, what));
      } catch (err) {
        if (!(err instanceof NotWhole)) throw err;
      }
      // Not whole: replaced meanwhile (read again), or made so.
      const now = await this.store.info(name);
      if (attempt >= READ_ATTEMPTS || now === null || now.nuid === info.nuid) throw new SwitchboardError('INVALID_REQUEST', `${what} is not whole`);
    }
  }

  /**
   * The chunks on `subject`, in order, up to `size` bytes; throws NotWhole, before the last chunk
   * is handed on, when they do not come to exactly that or to `digest`.
   */
  private async *chunks(subject: string, size: number, digest: string, deadline: number, what: string): AsyncGenerator<Uint8Array> {
    const sha = createHash('sha256');
    let filled = 0;
    let seq = 1;
    while (filled < size) {
      if (Date.now() > deadline) throw new SwitchboardError('TIMEOUT', `reading ${what} took longer than ${READ_DEADLINE_MS} ms`);
      // The stream API's get, not a direct get: its answer is wrapped in the API's own JSON, so a
      // node that names another reply subject cannot put a copy's bytes there (reflected.ts).
      const query = { seq, next_by_subj: subject } as unknown as MsgRequest;
      const chunk = await this.jsm.streams.getMessage(`OBJ_${this.bucket}`, query);
      // Chunks are the store's own size but the last: a copy of many tiny ones would take a request per byte.
      if (chunk === null || chunk.data.length === 0 || filled + chunk.data.length > size || (filled + chunk.data.length < size && chunk.data.length < MIN_CHUNK_BYTES)) throw new NotWhole();
      sha.update(chunk.data);
      filled += chunk.data.length;
      seq = chunk.seq + 1;
      if (filled === size && !sameDigest(digest, sha)) throw new NotWhole();
      yield chunk.data;
    }
    if (size === 0 && !sameDigest(digest, sha)) throw new NotWhole();
  }
}

/** A copy's chunks that do not make it up: replaced while it was read, or made so. */
class NotWhole extends Error {}
