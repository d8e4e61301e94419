/**
 * A node's side of carrying conversations between hosts (issue 26). While a run goes on, the
 * node keeps a copy of its CLI's conversation file on its shelf (conversation-shelf.ts), written
 * again whenever the file has changed; so a node that dies mid-turn leaves its conversation as
 * of a moment before. Before a resume of a conversation, it puts the copy the controller shelved
 * for it where the CLI reads it, unless the CLI has it here already as it is or further on.
 *
 * What it costs: a file is looked at every second and written whole when it changed, but no
 * sooner than one second more per 512 KiB of it (a 20 MiB conversation being appended to goes at
 * most every 40 s, about 0.5 MiB/s); a file not there yet is looked for less and less often (up
 * to once a minute), since finding a Codex rollout walks its dated folders.
 */
import { mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { errorMessage } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import { MAX_SHELVED_BYTES, type ConversationShelf } from '../cluster/index.js';
import { carriesConversation, conversationTarget, findConversationFile, type ConversationFile, type ConversationPlace } from '../runs/index.js';

/** How often a run's conversation file is looked at. */
const LOOK_EVERY_MS = 1_000;
/** A file is written again no sooner than this many bytes of it per second after the last copy. */
const COPY_BYTES_PER_SECOND = 512 * 1024;
/** The longest wait between two looks for a file that is not there yet. */
const MAX_LOOK_BACKOFF_MS = 60_000;
/** Conversations whose last copy is remembered (the oldest forgotten past it: sent again once, at worst). */
const REMEMBERED_CONVERSATIONS = 1_000;

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
  /** Not looked at again before then (a copy just written, or a file not found yet). */
  nextLookAt: number;
  /** Looks that found no file, in a row: the wait before the next one doubles with each. */
  misses: number;
  /** The copy being written, if one is; the next waits for it. */
  copying: Promise<void> | undefined;
  /** Said once per run: a failure, or a file too large. */
  said: boolean;
}

export class ConversationCarrier {
  private readonly carried = new Map<string, Carried>();
  /** Each conversation's file as last written to the shelf (by any run of it): unchanged, not sent again. */
  private readonly written = new Map<string, { size: number; mtimeMs: number }>();
  /** Last copies of ended runs still being written, each with its conversation (`<backend>/<id>`). */
  private readonly finishing = new Map<Promise<void>, string>();
  private disposed = false;
  private readonly logger: Logger;

  constructor(private readonly options: ConversationCarrierOptions) {
    this.logger = options.logger.child({ component: 'conversation-carrier' });
  }

  /** Starts keeping run `runId`'s conversation on the shelf (again for the same conversation: nothing). */
  carry(runId: string, backend: string, cwd: string, conversation: string): void {
    if (this.disposed || !carriesConversation(backend, conversation)) return;
    const known = this.carried.get(runId);
    if (known?.conversation === conversation) return;
    if (known) clearInterval(known.timer);
    const run: Carried = { backend, conversation, place: this.options.placeOf(backend, cwd), timer: setInterval(() => this.look(run), this.options.lookEveryMs ?? LOOK_EVERY_MS), file: undefined, nextLookAt: 0, misses: 0, copying: undefined, said: false };
    run.timer.unref();
    this.carried.set(runId, run);
    this.look(run);
  }

  /**
   * The run has ended: its file is written once more if it changed, and no longer looked at.
   * Resolves once that copy is written (or failed, said in the log).
   */
  finish(runId: string): Promise<void> {
    const run = this.carried.get(runId);
    if (!run) return Promise.resolve();
    this.carried.delete(runId);
    clearInterval(run.timer);
    const last = (async () => {
      await run.copying;
      await this.copy(run);
    })();
    this.finishing.set(last, `${run.backend}/${run.conversation}`);
    void last.finally(() => this.finishing.delete(last));
    return last;
  }

  /**
   * Writes conversation `conversation`'s copy now, if its file changed since the last (a resume
   * elsewhere is about to copy it from the shelf): the last copies of ended runs first, then a run
   * that carries it. False when no run here carries it, or carried it and ended.
   */
  async shelveNow(backend: string, conversation: string): Promise<boolean> {
    const key = `${backend}/${conversation}`;
    const ended = [...this.finishing].filter(([, of]) => of === key).map(([last]) => last);
    await Promise.all(ended);
    const runs = [...this.carried.values()].filter((run) => run.backend === backend && run.conversation === conversation);
    for (const run of runs) {
      // In the run's own line of copies: never two of one file at once.
      await run.copying;
      const now = this.copy(run).finally(() => {
        if (run.copying === now) run.copying = undefined;
      });
      run.copying = now;
      await now;
    }
    return runs.length > 0 || ended.length > 0 || this.written.has(key);
  }

  /** Resolves once the last copies of ended runs are written, or after `timeoutMs` (a node stopping waits this long at most). */
  async drained(timeoutMs: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, timeoutMs);
    });
    await Promise.race([Promise.all([...this.finishing.keys()]), timeout]);
    clearTimeout(timer);
  }

  /**
   * Puts the shelf's copy of a conversation where the CLI reads it, before a resume on this node.
   * 'here' when the CLI has it already as the copy has it or further on (this host ran it last, or
   * shares its HOME); 'restored' when the copy was put in place, over a file here that the copy
   * goes on from (the conversation went on elsewhere since); 'none' when there is no copy (the CLI
   * then says it has no such conversation, and the run fails saying so). A file here that differs
   * from the copy otherwise is the CLI's own and is kept.
   */
  async restore(backend: string, cwd: string, conversation: string): Promise<'here' | 'restored' | 'none'> {
    if (!carriesConversation(backend, conversation)) return 'none';
    const place = this.options.placeOf(backend, cwd);
    const local = await findConversationFile(backend, place, conversation);
    const copy = await this.options.shelf.get(backend, conversation);
    if (copy === undefined) return local !== undefined ? 'here' : 'none';
    const target = local?.file ?? (await conversationTarget(backend, place, conversation, copy.relative));
    if (target === undefined) {
      this.logger.warn('a conversation copy names a place its CLI does not read from: not restored', { backend, conversation, relative: copy.relative });
      return 'none';
    }
    if (local !== undefined && !goesOnFrom(copy.data, await readFile(local.file))) return 'here';
    await mkdir(path.dirname(target), { recursive: true, mode: 0o700 });
    // Whole or not at all: a CLI never reads half a conversation.
    const partial = `${target}.${randomBytes(6).toString('hex')}.partial`;
    try {
      await writeFile(partial, copy.data, { mode: 0o600, flag: 'wx' });
      await rename(partial, target);
    } finally {
      await rm(partial, { force: true });
    }
    return 'restored';
  }

  /** Stops looking at files; copies already being written finish (see drained). */
  dispose(): void {
    this.disposed = true;
    for (const run of this.carried.values()) clearInterval(run.timer);
    this.carried.clear();
  }

  private look(run: Carried): void {
    if (run.copying !== undefined || Date.now() < run.nextLookAt) return;
    const copying = this.copy(run).finally(() => {
      if (run.copying === copying) run.copying = undefined;
    });
    run.copying = copying;
  }

  /** Writes the file to the shelf if it changed since the last copy. */
  private async copy(run: Carried): Promise<void> {
    try {
      run.file ??= await findConversationFile(run.backend, run.place, run.conversation);
      if (run.file === undefined) {
        run.misses++;
        run.nextLookAt = Date.now() + Math.min(MAX_LOOK_BACKOFF_MS, (this.options.lookEveryMs ?? LOOK_EVERY_MS) * 2 ** run.misses);
        return;
      }
      const { size, mtimeMs } = await stat(run.file.file);
      const key = `${run.backend}/${run.conversation}`;
      const written = this.written.get(key);
      if (written?.size === size && written.mtimeMs === mtimeMs) return;
      if (size > MAX_SHELVED_BYTES) {
        this.sayOnce(run, 'a conversation file is too large to carry to another host', { file: run.file.file, bytes: size, most: MAX_SHELVED_BYTES });
        return;
      }
      // Up to its last whole line: a copy taken while the CLI appends one never ends mid-line (the
      // next turn would be written onto the broken one).
      const read = await readFile(run.file.file);
      const data = read.subarray(0, read.lastIndexOf(0x0a) + 1);
      if (data.length === 0) return;
      await this.options.shelf.put(run.backend, run.conversation, { data, relative: run.file.relative });
      this.written.delete(key);
      this.written.set(key, { size, mtimeMs });
      if (this.written.size > REMEMBERED_CONVERSATIONS) this.written.delete(this.written.keys().next().value ?? '');
      run.nextLookAt = Date.now() + (data.length / COPY_BYTES_PER_SECOND) * 1_000;
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

/** True when `copy` is `local` and more after it: the conversation went on from where the file here stops. */
function goesOnFrom(copy: Uint8Array, local: Uint8Array): boolean {
  return copy.length > local.length && Buffer.from(copy.buffer, copy.byteOffset, local.length).equals(local);
}
