/**
 * A node's side of carrying conversations between hosts (issue 26). While a run goes on, the
 * node keeps a copy of its CLI's conversation file on its shelf (conversation-shelf.ts), written
 * again whenever the file has changed, looked at every second; so a node that dies mid-turn leaves
 * its conversation as of a moment before. Before a resume of a conversation this node does not
 * have, it puts the copy the controller shelved for it where the CLI reads it.
 *
 * A large file is written again less often (one second more per 2 MiB), so that a long
 * conversation being appended to does not send megabytes a second.
 */
import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { errorMessage } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import type { ConversationShelf } from '../cluster/index.js';
import { carriesConversation, conversationTarget, findConversationFile, type ConversationFile, type ConversationPlace } from '../runs/index.js';

/** How often a run's conversation file is looked at. */
const LOOK_EVERY_MS = 1_000;
/** A file is written again at most once per this many bytes of it per second (and once a second). */
const COPY_BYTES_PER_SECOND = 2 * 1024 * 1024;
/** Conversations whose last copy is remembered (the oldest forgotten past it: sent again once, at worst). */
const REMEMBERED_CONVERSATIONS = 1_000;
/** A conversation file larger than this is not carried (said once). */
const MAX_CARRIED_BYTES = 256 * 1024 * 1024;

export interface ConversationCarrierOptions {
  shelf: Pick<ConversationShelf, 'put' | 'get'>;
  /** Where `backend`'s CLI keeps its files on this node for a run in `cwd`. */
  placeOf: (backend: string, cwd: string) => ConversationPlace;
  logger: Logger;
  /** Between looks at a file (tests). */
  lookEveryMs?: number;
}

/** A run whose conversation is being carried. */
interface Carried {
  backend: string;
  conversation: string;
  place: ConversationPlace;
  timer: NodeJS.Timeout;
  file: ConversationFile | undefined;
  /** Not written again before then. */
  nextCopyAt: number;
  /** The copy being written, if one is; the next waits for it. */
  copying: Promise<void> | undefined;
  /** Said once per run: a failure, or a file too large. */
  said: boolean;
}

export class ConversationCarrier {
  private readonly carried = new Map<string, Carried>();
  /** Each conversation's file as last written to the shelf (by any run of it): unchanged, not sent again. */
  private readonly written = new Map<string, { size: number; mtimeMs: number }>();
  private readonly logger: Logger;

  constructor(private readonly options: ConversationCarrierOptions) {
    this.logger = options.logger.child({ component: 'conversation-carrier' });
  }

  /** Starts keeping run `runId`'s conversation on the shelf (again for the same conversation: nothing). */
  carry(runId: string, backend: string, cwd: string, conversation: string): void {
    if (!carriesConversation(backend, conversation)) return;
    const known = this.carried.get(runId);
    if (known?.conversation === conversation) return;
    if (known) clearInterval(known.timer);
    const run: Carried = { backend, conversation, place: this.options.placeOf(backend, cwd), timer: setInterval(() => this.look(run), this.options.lookEveryMs ?? LOOK_EVERY_MS), file: undefined, nextCopyAt: 0, copying: undefined, said: false };
    run.timer.unref();
    this.carried.set(runId, run);
    this.look(run);
  }

  /** The run has ended: its file is written once more if it changed, and no longer looked at. */
  async finish(runId: string): Promise<void> {
    const run = this.carried.get(runId);
    if (!run) return;
    this.carried.delete(runId);
    clearInterval(run.timer);
    await run.copying;
    run.nextCopyAt = 0;
    await this.copy(run);
  }

  /**
   * Puts the shelf's copy of a conversation where the CLI reads it, before a resume on this node:
   * 'here' when the CLI has it already (this host ran it, or shares its HOME), 'restored' when the
   * copy was put in place, 'none' when there is no copy (the CLI then says it has no such
   * conversation, and the run fails saying so).
   */
  async restore(backend: string, cwd: string, conversation: string): Promise<'here' | 'restored' | 'none'> {
    if (!carriesConversation(backend, conversation)) return 'none';
    const place = this.options.placeOf(backend, cwd);
    if (findConversationFile(backend, place, conversation) !== undefined) return 'here';
    const copy = await this.options.shelf.get(backend, conversation);
    if (copy === undefined) return 'none';
    const target = conversationTarget(backend, place, conversation, copy.relative);
    if (target === undefined) {
      this.logger.warn('a conversation copy names a place its CLI does not read from: not restored', { backend, conversation, relative: copy.relative });
      return 'none';
    }
    mkdirSync(path.dirname(target), { recursive: true, mode: 0o700 });
    // Whole or not at all: a CLI never reads half a conversation.
    const partial = `${target}.${randomBytes(6).toString('hex')}.partial`;
    writeFileSync(partial, copy.data, { mode: 0o600, flag: 'wx' });
    renameSync(partial, target);
    return 'restored';
  }

  dispose(): void {
    for (const run of this.carried.values()) clearInterval(run.timer);
    this.carried.clear();
  }

  private look(run: Carried): void {
    if (run.copying !== undefined || Date.now() < run.nextCopyAt) return;
    run.copying = this.copy(run).finally(() => {
      run.copying = undefined;
    });
  }

  /** Writes the file to the shelf if it changed since the last copy. */
  private async copy(run: Carried): Promise<void> {
    try {
      run.file ??= findConversationFile(run.backend, run.place, run.conversation);
      if (run.file === undefined) return;
      const { size, mtimeMs } = statSync(run.file.file);
      const key = `${run.backend}/${run.conversation}`;
      const written = this.written.get(key);
      if (written?.size === size && written.mtimeMs === mtimeMs) return;
      if (size > MAX_CARRIED_BYTES) {
        this.sayOnce(run, 'a conversation file is too large to carry to another host', { file: run.file.file, bytes: size, most: MAX_CARRIED_BYTES });
        return;
      }
      const data = readFileSync(run.file.file);
      await this.options.shelf.put(run.backend, run.conversation, { data, relative: run.file.relative });
      this.written.delete(key);
      this.written.set(key, { size, mtimeMs });
      if (this.written.size > REMEMBERED_CONVERSATIONS) this.written.delete(this.written.keys().next().value ?? '');
      run.nextCopyAt = Date.now() + (data.length / COPY_BYTES_PER_SECOND) * 1_000;
    } catch (err) {
      // Looked at again at the next tick: a shelf out of reach now may answer then.
      this.sayOnce(run, 'could not keep a copy of a conversation for another host', { conversation: run.conversation, error: errorMessage(err) });
    }
  }

  private sayOnce(run: Carried, message: string, fields: Record<string, unknown>): void {
    if (run.said) return;
    run.said = true;
    this.logger.warn(message, { backend: run.backend, ...fields });
  }
}
