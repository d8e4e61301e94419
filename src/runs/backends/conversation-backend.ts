/**
 * A backend on stdio, through the CLI's structured multi-turn driver (src/drivers: Claude Code
 * stream-json, Codex exec/resume, ACP for Gemini CLI and OpenCode). A run is one turn of a
 * conversation; a run without a parent opens a conversation of its own, and a follow-up run
 * continues its parent's. After a run that can be followed up the conversation is handed on with
 * how to close it (`keepIdle`): to the run service's idle pool (idle-conversations.ts), which says
 * when it closes, or to the face that keeps it (an agent session); any other run closes its
 * conversation, and the CLI with it, before it ends.
 *
 * Every permission request the CLI raises goes to governance (`request.judge`), which decides it in
 * its own words. A conversation process that died is started again on the next turn, with a
 * growing pause between attempts: the Claude and Codex drivers resume the CLI's own conversation by
 * its id, an ACP agent starts a fresh session (said in a notice). Cancelling a run ends its
 * conversation and the whole process tree; interrupting it (`DriverRun.interrupt`) ends the turn
 * the CLI's own way and keeps the conversation.
 */
import type { Disposable } from '../../core/disposable.js';
import { SwitchboardError, errorMessage, isSwitchboardError } from '../../core/errors.js';
import { silentLogger, type Logger } from '../../core/logger.js';
import { AgentCatalog, type AgentProfile } from '../../agents/index.js';
import type { Conversation, ConversationDriver, ReplyPiece, TurnResult } from '../../drivers/conversation.js';
import { SESSION_MARKER } from '../../drivers/conversation-turn.js';
import { agentSessionEvent } from '../../ledger/run-events.js';
import { terminateProcessTree } from '../../platform/index.js';
import { reachable, StreamingBackend, type BackendCapabilities, type BackendHealth, type DriverOutcome, type DriverRun, type DriverRunRequest } from './backend-driver.js';

export interface ConversationBackendOptions {
  driver: ConversationDriver;
  catalog?: AgentCatalog;
  /** Run the CLI from this isolated HOME against this model (tests, demos). */
  sandbox?: { home: string; modelUrl: string };
  args?: string[];
  env?: Record<string, string>;
  logger?: Logger;
}

/** Restarts of a dead conversation process in a row before the run fails as crashed. */
const MAX_RESTARTS = 3;
const RESTART_BACKOFF_MS = 250;
const MAX_RESTART_BACKOFF_MS = 5_000;
/** The drivers' own words for a CLI that died in the middle of a turn (src/drivers: claude, ACP, codex). */
/** How long what a crashed CLI left running gets to end on TERM before KILL. */
const LEFTOVER_GRACE_MS = 1_000;
const CRASH_PATTERN = /(in the middle of the turn|during the turn|before the turn completed)/;

interface Slot {
  thread: string;
  cwd: string;
  /**
   * The run the conversation serves now: its permission requests are judged, and recorded, by this
   * run's governance (a follow-up's, not the ended run that opened the conversation).
   */
  current: DriverRunRequest;
  conversation: Conversation | undefined;
  busy: boolean;
  restarts: number;
  closed: boolean;
}

export class ConversationBackend extends StreamingBackend {
  readonly mode = 'stdio' as const;
  private readonly profile: AgentProfile;
  private readonly slots = new Map<string, Slot>();
  private readonly logger: Logger;

  constructor(private readonly options: ConversationBackendOptions) {
    super();
    this.profile = (options.catalog ?? AgentCatalog.load()).get(options.driver.name);
    this.logger = options.logger ?? silentLogger;
  }

  get name(): string {
    return this.options.driver.name;
  }

  capabilities(): BackendCapabilities {
    const c = this.options.driver.capabilities();
    return { backend: this.name, mode: 'stdio', ...c, resumes: true };
  }

  async health(): Promise<BackendHealth> {
    const h = await this.options.driver.health();
    const support = h.version === null ? null : this.profile.versionSupport(h.version).level;
    const model = this.options.sandbox ? await reachable(this.options.sandbox.modelUrl) : null;
    return { ok: h.ok && model !== false, binary: h.binary, version: h.version, version_support: support, model_reachable: model, ...(h.problem !== undefined ? { problem: h.problem } : model === false ? { problem: `the model at ${this.options.sandbox?.modelUrl ?? ''} does not answer` } : {}) };
  }

  stream(request: DriverRunRequest): DriverRun {
    const slot = this.slotFor(request);
    let cancelling = false;
    const done = this.turn(slot, request, () => cancelling).then(
      async (outcome) => {
        await this.afterRun(slot, request);
        return outcome;
      },
      async (err: unknown) => {
        await this.afterRun(slot, request);
        throw err;
      },
    );
    const run: DriverRun = {
      done,
      cancel: async () => {
        cancelling = true;
        await this.closeSlot(slot);
        await done;
      },
      // The CLI's own cancel of its turn: the conversation stays, and goes where the run says after it.
      interrupt: async () => {
        cancelling = true;
        await slot.conversation?.cancelTurn();
        await done;
      },
    };
    this.runs.set(request.runId, run);
    return run;
  }

  async dispose(): Promise<void> {
    await Promise.all([...this.slots.values()].map((s) => this.closeSlot(s)));
    await Promise.all([...this.runs.values()].map((r) => r.done.catch(() => undefined)));
  }

  private slotFor(request: DriverRunRequest): Slot {
    if (!request.followUp) {
      const slot: Slot = { thread: request.thread, cwd: request.cwd, current: request, conversation: undefined, busy: true, restarts: 0, closed: false };
      this.slots.set(request.thread, slot);
      return slot;
    }
    const slot = this.slots.get(request.thread);
    if (!slot || slot.closed) throw new SwitchboardError('INVALID_PARAMS', `the conversation of run ${request.thread} has ended: start a new run instead of a follow-up`, { thread: request.thread });
    if (slot.busy) throw new SwitchboardError('INVALID_REQUEST', `the conversation of run ${request.thread} is busy with another run`, { thread: request.thread });
    if (slot.cwd !== request.cwd) throw new SwitchboardError('INVALID_PARAMS', `a follow-up runs in its conversation's folder (${slot.cwd})`, { cwd: request.cwd });
    slot.busy = true;
    slot.current = request;
    return slot;
  }

  private async turn(slot: Slot, request: DriverRunRequest, cancelling: () => boolean): Promise<DriverOutcome> {
    for (;;) {
      let conversation: Conversation;
      // What a conversation opened for this run said while it started (an ACP agent's "session
      // started" note) is this run's too; a kept one's history belongs to the runs before.
      const fresh = slot.conversation === undefined;
      try {
        conversation = await this.open(slot, request);
      } catch (err) {
        if (cancelling()) return { status: 'cancelled', message: 'cancelled while the CLI started' };
        return { status: 'failed', reason: 'spawn_failed', message: errorMessage(err) };
      }
      if (cancelling()) return { status: 'cancelled', message: 'cancelled while the CLI started' };
      let result: TurnResult;
      const feed = this.feed(conversation, request, fresh ? 0 : conversation.entries.stats().lastSeq);
      try {
        result = await conversation.prompt(request.prompt);
      } catch (err) {
        feed.dispose();
        if (cancelling()) return { status: 'cancelled', message: 'cancelled' };
        // The conversation's process is gone for good (an ACP agent that died): start it again.
        if (isSwitchboardError(err, 'INVALID_REQUEST') && slot.restarts < MAX_RESTARTS) {
          await this.restart(slot, request, errorMessage(err));
          continue;
        }
        return { status: 'failed', reason: 'crashed', message: errorMessage(err) };
      }
      await feed.drained();
      feed.dispose();
      if (cancelling() || result.status === 'cancelled') return { status: 'cancelled', message: result.stopReason ?? 'cancelled' };
      const errors = result.entries.filter((e) => e.type === 'error').map((e) => e.content);
      if (result.status === 'completed') {
        slot.restarts = 0;
        return { status: 'completed', message: result.stopReason ?? '' };
      }
      const crashed = errors.some((e) => CRASH_PATTERN.test(e));
      if (crashed) {
        slot.restarts++;
        // What the dead CLI started lives on without it (Codex's native binary under its Node
        // launcher holds the conversation's lock): ended, so that the next turn starts clean.
        await terminateProcessTree(0, { graceMs: LEFTOVER_GRACE_MS, marker: { name: SESSION_MARKER, value: conversation.id }, rootExited: true }).catch(() => undefined);
      }
      return { status: 'failed', reason: crashed ? 'crashed' : 'agent_error', message: errors.join('; ') || `the turn failed (${result.stopReason ?? 'no reason given'})` };
    }
  }

  private async open(slot: Slot, request: DriverRunRequest): Promise<Conversation> {
    if (slot.conversation) return slot.conversation;
    const conversation = await this.options.driver.open({
      cwd: request.cwd,
      ...(this.options.sandbox ? { sandbox: this.options.sandbox } : {}),
      // Every request is governance's to decide, in its words: nothing is decided by a policy of the driver's own.
      judge: (p) => slot.current.judge({ subject: p.subject, toolName: p.toolName, input: p.input, ...(p.toolCallId !== undefined ? { toolCallId: p.toolCallId } : {}) }),
      env: { ...this.options.env, ...request.env },
      ...(this.options.args ? { args: this.options.args } : {}),
      // Only the conversation's first opening resumes: a restart after a crash is the driver's own.
      ...(request.resume !== undefined && !request.followUp ? { resume: request.resume } : {}),
      // Entries go on at once (the run service batches its own writes): no 16 ms window here.
      store: { batchMs: 0 },
    });
    if (slot.closed) {
      await conversation.close();
      throw new SwitchboardError('INVALID_REQUEST', 'the run was cancelled while its conversation opened');
    }
    slot.conversation = conversation;
    return conversation;
  }

  private async restart(slot: Slot, request: DriverRunRequest, why: string): Promise<void> {
    const pause = Math.min(RESTART_BACKOFF_MS * 2 ** slot.restarts, MAX_RESTART_BACKOFF_MS);
    slot.restarts++;
    const old = slot.conversation;
    slot.conversation = undefined;
    await old?.close().catch(() => undefined);
    request.emit({ kind: 'notice', text: `${this.name}'s conversation process had ended (${why}); starting it again in ${pause} ms without its earlier context` });
    this.logger.warn('restarting a conversation process', { backend: this.name, thread: slot.thread, attempt: slot.restarts });
    await new Promise((resolve) => setTimeout(resolve, pause));
  }

  /** The conversation's entries after `afterSeq` to the run, as they come; `drained` waits for the last one pushed so far. */
  private feed(conversation: Conversation, request: DriverRunRequest, afterSeq: number): Disposable & { drained(): Promise<void> } {
    let delivered = afterSeq;
    const waiters: { seq: number; resolve: () => void }[] = [];
    // The CLI says its conversation id in its own time (Claude at its first turn's start), and it
    // comes with an entry: recorded once per run, as soon as it is known, so that a run whose node
    // is lost mid-turn can still be resumed.
    let announced: string | null = null;
    const announce = (): void => {
      const id = conversation.agentSessionId;
      if (id === null || id === announced) return;
      announced = id;
      request.emit({ kind: 'event', event: agentSessionEvent(Date.now(), this.name, id) });
    };
    announce();
    // Pieces of the reply come at once and entries in batches: a piece waits for the entries
    // recorded before it, so the run sees both in the order the CLI sent them.
    const heldPieces: ReplyPiece[] = [];
    const releasePieces = (): void => {
      while (heldPieces.length > 0 && (heldPieces[0]?.afterSeq ?? Infinity) <= delivered) request.emit({ kind: 'delta', text: (heldPieces.shift() as ReplyPiece).text });
    };
    const pieces = conversation.pieces?.((piece) => {
      heldPieces.push(piece);
      releasePieces();
    });
    const unsubscribe = conversation.entries.subscribe(
      (batch) => {
        for (const m of batch) {
          if (m.seq <= delivered) continue;
          // Pieces that came before this entry go first.
          while (heldPieces.length > 0 && (heldPieces[0]?.afterSeq ?? Infinity) < m.seq) request.emit({ kind: 'delta', text: (heldPieces.shift() as ReplyPiece).text });
          delivered = m.seq;
          request.emit({ kind: 'entry', entry: m.msg });
        }
        announce();
        releasePieces();
        for (let i = waiters.length - 1; i >= 0; i--) {
          const w = waiters[i];
          if (w && w.seq <= delivered) {
            waiters.splice(i, 1);
            w.resolve();
          }
        }
      },
      {
        history: afterSeq < conversation.entries.stats().lastSeq,
        onFinished: () => waiters.splice(0).forEach((w) => w.resolve()),
        // Never waited for in vain: a reader the log dropped for falling behind gets nothing more.
        onDropped: (reason) => {
          this.logger.warn('a run fell behind its conversation log', { backend: this.name, run_id: request.runId, reason });
          delivered = Number.MAX_SAFE_INTEGER;
          waiters.splice(0).forEach((w) => w.resolve());
        },
      },
    );
    return {
      dispose: () => {
        unsubscribe();
        pieces?.dispose();
        waiters.splice(0).forEach((w) => w.resolve());
      },
      drained: () => {
        const seq = conversation.entries.stats().lastSeq;
        if (seq <= delivered || conversation.entries.finished) return Promise.resolve();
        return new Promise<void>((resolve) => waiters.push({ seq, resolve }));
      },
    };
  }

  /**
   * After a run: its conversation goes to the idle pool when the run can be followed up (and the
   * conversation is still open), else it is closed, its CLI gone before the run is recorded ended.
   */
  private async afterRun(slot: Slot, request: DriverRunRequest): Promise<void> {
    this.runs.delete(request.runId);
    slot.busy = false;
    if (slot.closed) {
      this.slots.delete(slot.thread);
      return;
    }
    if (request.keepIdle) request.keepIdle(() => this.closeSlot(slot));
    else await this.closeSlot(slot);
  }

  private async closeSlot(slot: Slot): Promise<void> {
    slot.closed = true;
    if (!slot.busy) this.slots.delete(slot.thread);
    const conversation = slot.conversation;
    slot.conversation = undefined;
    await conversation?.close().catch((err: unknown) => this.logger.warn('a conversation did not close cleanly', { backend: this.name, error: errorMessage(err) }));
  }
}
