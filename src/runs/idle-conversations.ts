/**
 * The agent conversations kept open between runs, waiting for a follow-up, over every backend: one
 * pool with one cap (`limits.idle_conversations`) and one idle time (`limits.idle_ms`). A CLI left
 * open costs its memory whether anyone comes back or not (an idle Claude Code holds about 250 MB),
 * so only a run that can be followed up is kept (`keep_alive`), the least recently used is closed
 * first past the cap, and each closes on its own after the idle time.
 *
 * The pool owns a conversation only while it is idle: a follow-up `take`s it back (it is then its
 * run's, counted under `limits.concurrency` like any run) and the driver parks it again after that
 * run, or closes it. Closing is the driver's: the pool only says when.
 */
import { errorMessage } from '../core/errors.js';
import { silentLogger, type Logger } from '../core/logger.js';

/** A conversation handed to the pool by its driver once its run ended. */
export interface IdleConversation {
  backend: string;
  /** The conversation: the id of its first run. */
  thread: string;
  /** Ends the conversation and every process it holds. */
  close(): Promise<void>;
}

/** Why the pool closed a conversation. */
/** Why a kept conversation closed: idle too long, past the cap, shut down, or its CLI started again on it by a resume (one process per conversation). */
export type IdleCloseReason = 'idle_timeout' | 'cap' | 'shutdown' | 'resumed';

export interface IdleConversationsOptions {
  /** Conversations kept at most; 0 keeps none. */
  max: number;
  /** How long one stays after it was parked. */
  idleMs: number;
  logger?: Logger;
}

interface Parked {
  conversation: IdleConversation;
  timer: NodeJS.Timeout;
}

export class IdleConversations {
  /** By thread, least recently used first (a Map keeps insertion order, and parking re-inserts). */
  private readonly parked = new Map<string, Parked>();
  private readonly closing = new Set<Promise<void>>();
  private readonly logger: Logger;

  constructor(private readonly options: IdleConversationsOptions) {
    this.logger = options.logger ?? silentLogger;
  }

  get max(): number {
    return this.options.max;
  }

  get idleMs(): number {
    return this.options.idleMs;
  }

  /** Keeps a conversation for a follow-up, as the most recently used; past the cap the least recently used is closed. */
  park(conversation: IdleConversation): void {
    this.take(conversation.thread);
    const timer = setTimeout(() => this.close(conversation.thread, 'idle_timeout'), this.options.idleMs);
    timer.unref();
    this.parked.set(conversation.thread, { conversation, timer });
    for (const thread of this.parked.keys()) {
      if (this.parked.size <= this.options.max) break;
      this.close(thread, 'cap');
    }
  }

  /** Takes a conversation back for a follow-up (the pool no longer closes it); undefined when it is not open. */
  take(thread: string): IdleConversation | undefined {
    const p = this.parked.get(thread);
    if (!p) return undefined;
    clearTimeout(p.timer);
    this.parked.delete(thread);
    return p.conversation;
  }

  has(thread: string): boolean {
    return this.parked.has(thread);
  }

  /** The threads kept now, with their backends. */
  list(): { backend: string; thread: string }[] {
    return [...this.parked.values()].map((p) => ({ backend: p.conversation.backend, thread: p.conversation.thread }));
  }

  /** Resolves once every close begun so far is over. */
  async settled(): Promise<void> {
    while (this.closing.size > 0) await Promise.all([...this.closing]);
  }

  /** Closes the conversation `thread` if it is kept, resolving once it is closed. */
  async closeNow(thread: string, why: IdleCloseReason): Promise<void> {
    this.close(thread, why);
    await this.settled();
  }

  /** Closes every conversation kept (the service shuts down). */
  async closeAll(): Promise<void> {
    for (const thread of [...this.parked.keys()]) this.close(thread, 'shutdown');
    await this.settled();
  }

  private close(thread: string, why: IdleCloseReason): void {
    const conversation = this.take(thread);
    if (!conversation) return;
    this.logger.info('closing an idle conversation', { backend: conversation.backend, thread, reason: why });
    const closing = conversation
      .close()
      .catch((err: unknown) => this.logger.warn('an idle conversation did not close cleanly', { backend: conversation.backend, thread, error: errorMessage(err) }))
      .finally(() => this.closing.delete(closing));
    this.closing.add(closing);
  }
}
