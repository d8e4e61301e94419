/**
 * Where a node keeps copies of its agent CLIs' conversation files, so that a run resumed on
 * another host goes on with its conversation (issue 26): a JetStream object store per node,
 * `sb_conversations_<node>`. The node writes its own shelf only; the controller, which may read
 * every shelf, copies a conversation onto the shelf of the node a resume goes to before it sends
 * the run there, and that node reads its own shelf. So no node ever reads or overwrites another
 * node's conversations, and NATS subjects (whole tokens only) can say so.
 *
 * An object is named `<backend>/<conversation id>` and carries, in its metadata, where the file
 * sat under the CLI's HOME (`relative`): the receiving side decides whether it accepts that place.
 */
import { jetstream } from '@nats-io/jetstream';
import { Objm, type ObjectStore } from '@nats-io/obj';
import type { NatsConnection } from '@nats-io/transport-node';
import { conversationBucket } from './topology.js';

/** What one shelf may hold: past it the server refuses new copies (the older stay). */
const SHELF_MAX_BYTES = 4 * 1024 * 1024 * 1024;
/** A copy not written again for this long is dropped: a conversation a month old is resumed from its node, or not at all. */
const SHELF_MAX_AGE_MS = 30 * 24 * 60 * 60 * 1000;

/** One conversation's copy as a shelf holds it. */
export interface ShelvedConversation {
  data: Uint8Array;
  /** Where the file sat under the CLI's HOME on the node that wrote it (forward slashes). */
  relative: string;
}

const objectName = (backend: string, conversation: string): string => `${backend}/${conversation}`;

export class ConversationShelf {
  private constructor(private readonly store: ObjectStore) {}

  /**
   * Lays out `node`'s shelf (the controller's job, at the node's join: a node may not create
   * streams) and opens it. Idempotent.
   */
  static async ensure(nc: NatsConnection, node: string): Promise<ConversationShelf> {
    return new ConversationShelf(await new Objm(nc).create(conversationBucket(node), { max_bytes: SHELF_MAX_BYTES, ttl: SHELF_MAX_AGE_MS * 1_000_000 }));
  }

  /**
   * Opens `node`'s shelf, laid out already (a node opens its own; the controller any), asking the
   * server nothing on the way (a node may not ask for the account's or the stream's info). A copy
   * is read through a consumer that delivers to an inbox under `inboxPrefix` (a node's own).
   */
  static async open(nc: NatsConnection, node: string, inboxPrefix?: string): Promise<ConversationShelf> {
    const js = jetstream(nc, { checkAPI: false, ...(inboxPrefix !== undefined && { watcherPrefix: inboxPrefix }) });
    return new ConversationShelf(await new Objm(js).open(conversationBucket(node), false));
  }

  /** Writes a conversation's copy, in place of the one before. */
  async put(backend: string, conversation: string, copy: ShelvedConversation): Promise<void> {
    await this.store.putBlob({ name: objectName(backend, conversation), metadata: { relative: copy.relative } }, copy.data);
  }

  /** A conversation's copy, or undefined when the shelf has none. */
  async get(backend: string, conversation: string): Promise<ShelvedConversation | undefined> {
    const name = objectName(backend, conversation);
    const info = await this.store.info(name);
    if (info === null || info.deleted) return undefined;
    const data = await this.store.getBlob(name);
    if (data === null) return undefined;
    return { data, relative: info.metadata?.relative ?? '' };
  }
}
