/**
 * `agent_session_*`: a multi-turn conversation on an agent's structured mode, as a face of the run
 * service (RunFace). Each prompt is a run, recorded, limited, queued and cancelled as every run is,
 * that continues the conversation of the run before it (its `parent`). The session holds the
 * conversation between turns itself: neither the idle pool's cap nor its time closes it under a
 * person who is thinking. The session's log, named by its id, files every turn's entries.
 *
 * A session is a small state machine: `idle` (waiting for a prompt) → `turn` (a run in flight) →
 * `idle`, and from either `closing` → `closed`. One turn at a time; a second prompt during a turn
 * is refused, as the CLI would refuse it.
 */
import { randomBytes } from 'node:crypto';
import { SwitchboardError } from '../core/errors.js';
import type { AgentCatalog } from '../agents/index.js';
import type { ApprovalPolicy } from '../approvals/index.js';
import { CallerGovernance } from '../governance/caller-governance.js';
import { isEnded, type EndStatus, type RunState } from '../ledger/run-model.js';
import { conversationDriverFor } from '../drivers/conversation-drivers.js';
import { EntryFactory, type NormalizedEntry } from '../output/entry.js';
import type { SessionLog, SessionLogs } from '../logs/index.js';
import { ConversationBackend } from './backends/conversation-backend.js';
import type { ToolCallAnswer } from './backends/backend-driver.js';
import type { RunService } from './run-service.js';

export interface OpenSessionOptions {
  /** The caller's run service (the daemon's bridge): every turn is one of its runs. */
  service: RunService;
  agent: string;
  cwd: string;
  sandbox?: { home: string; modelUrl: string } | undefined;
  args?: string[] | undefined;
  /** Judges the CLI's permission requests; what it leaves open ("ask") is denied, since no one is asked. */
  approvals: ApprovalPolicy;
  /** Who opened it ('owner', or the pane whose token did): only they or the owner may prompt, cancel or close it. */
  createdBy?: string | undefined;
}

/** One permission request of a turn and how it was answered, as the run's ledger recorded it. */
export interface SessionPermission {
  toolName: string;
  decision: ToolCallAnswer['decision'];
  reason: string;
  decidedBy: string;
}

/** One turn of a session: its run, how it ended, and what it said and asked. */
export interface SessionTurn {
  runId: string;
  status: EndStatus;
  /** Why it ended, in the CLI's words where it gave them (end_turn), else the run's. */
  stopReason: string | null;
  durationMs: number;
  /** This turn's entries only (the session's log has them all). */
  entries: NormalizedEntry[];
  permissions: SessionPermission[];
}

type Phase = 'idle' | 'turn' | 'closing' | 'closed';

/** The conversation open between turns: its first run, the last turn's run, and how to close it. */
interface OpenConversation {
  thread: string;
  lastRun: string;
  close: () => Promise<void>;
}

/** The turn in flight: its run once made, and its end. */
interface Turn {
  runId: string | undefined;
  ended: Promise<RunState>;
}

/** The name a session's runs record as their face (their policy reads `agent_session (the caller's own rules)`). */
const FACE = 'agent_session';

export class AgentSession {
  readonly id = `ses_${randomBytes(8).toString('hex')}`;
  private phase: Phase = 'idle';
  private readonly driver: ConversationBackend;
  private readonly governance: CallerGovernance;
  private readonly log: SessionLog;
  private readonly notices = new EntryFactory('session-notice');
  /** The conversation kept between turns; undefined before the first turn and while a turn has it. */
  private conversation: OpenConversation | undefined;
  /** The first run of a conversation that ended with its last turn (a run_cancel, a CLI that gave out), until the next turn says so. */
  private lostThread: string | undefined;
  private turn: Turn | undefined;
  private closing: Promise<void> | undefined;

  /** INVALID_PARAMS for an agent without a structured mode. The CLI starts with the first prompt. */
  constructor(
    private readonly options: OpenSessionOptions,
    catalog: AgentCatalog,
    logs: SessionLogs,
  ) {
    this.driver = new ConversationBackend({ driver: conversationDriverFor(options.agent, { catalog }), catalog, ...(options.sandbox ? { sandbox: options.sandbox } : {}), ...(options.args ? { args: options.args } : {}) });
    this.governance = new CallerGovernance({
      face: FACE,
      approvals: options.approvals,
      reason: `${FACE}: the agent's requests are judged by the approval policy the caller opened the session with; the policy file's sandbox and approvals do not judge them`,
      // `~` in a call is the agent's HOME: the sandbox's when there is one.
      ...(options.sandbox ? { home: options.sandbox.home } : {}),
    });
    this.log = logs.open({ id: this.id, kind: 'session', title: `${options.agent} session`, agent: options.agent });
  }

  get createdBy(): string | undefined {
    return this.options.createdBy;
  }

  /**
   * Gives the agent a prompt as a run of the run service; resolves when the run has ended.
   * SPAWN_FAILED when the CLI could not be started.
   */
  async prompt(text: string, signal?: AbortSignal): Promise<SessionTurn> {
    if (this.phase === 'turn') throw new SwitchboardError('INVALID_REQUEST', `session ${this.id} is busy with a turn: prompt again once it has ended (or cancel it)`, { session_id: this.id });
    if (this.phase !== 'idle') throw new SwitchboardError('SESSION_NOT_FOUND', `no open agent session: ${this.id}`, { session_id: this.id });
    this.phase = 'turn';
    const startedAt = Date.now();
    // The turn has the conversation now; the run's end says where it goes next.
    const open = this.conversation;
    this.conversation = undefined;
    if (this.lostThread !== undefined) {
      this.note(`the conversation of run ${this.lostThread} had ended; this turn starts a new one, without the earlier context`);
      this.lostThread = undefined;
    }
    const entries: NormalizedEntry[] = [];
    let kept: (() => Promise<void>) | undefined;
    let settle: (state: RunState) => void = () => undefined;
    const turn: Turn = { runId: undefined, ended: new Promise<RunState>((resolve) => (settle = resolve)) };
    this.turn = turn;
    const onAbort = (): void => {
      if (turn.runId !== undefined) void this.options.service.interrupt(turn.runId).catch(() => undefined);
    };
    try {
      await this.options.service.submit(
        { backend: this.options.agent, prompt: text, cwd: this.options.cwd, keep_alive: true, caller: this.options.createdBy },
        {
          name: FACE,
          driver: this.driver,
          governance: this.governance,
          conversation: { continues: open ? { thread: open.thread, parent: open.lastRun } : undefined, keep: (close) => (kept = close) },
          opened: (runId) => (turn.runId = runId),
          observe: (emission) => {
            const entry = emission.kind === 'entry' ? emission.entry : emission.kind === 'notice' ? this.notices.make('system_message', emission.text) : undefined;
            if (!entry) return;
            entries.push(entry);
            if (!this.log.store.finished) this.log.store.push({ type: 'normalized', entry });
          },
          ended: (state) => {
            this.afterTurn(open, turn.runId, state, kept);
            settle(state);
          },
        },
      );
    } catch (err) {
      // Refused before a run was made (a bad folder, the queue full, the service shutting down): the conversation is as it was.
      if (turn.runId === undefined) this.conversation = open;
      this.turn = undefined;
      this.turnEnded();
      throw err;
    }
    signal?.addEventListener('abort', onAbort, { once: true });
    if (signal?.aborted) onAbort();
    try {
      const state = await turn.ended;
      const runId = turn.runId as string;
      if (state.status === 'failed' && state.reason === 'spawn_failed') throw new SwitchboardError('SPAWN_FAILED', `${this.options.agent} could not be started: ${state.message}`, { session_id: this.id, run_id: runId });
      return { runId, status: endStatusOf(state), stopReason: 'message' in state && state.message !== '' ? state.message : null, durationMs: Date.now() - startedAt, entries, permissions: await this.permissionsOf(runId) };
    } finally {
      signal?.removeEventListener('abort', onAbort);
      this.turn = undefined;
      this.turnEnded();
    }
  }

  /**
   * Where the conversation goes once a turn's run has ended: back as it was when the run never
   * started (it never touched it); kept, with this run as the last, when the driver handed it
   * back; else it ended with the run, and the next turn starts a new one and says so.
   */
  private afterTurn(open: OpenConversation | undefined, runId: string | undefined, state: RunState, kept: (() => Promise<void>) | undefined): void {
    const ran = 'started_at' in state && state.started_at !== null;
    if (!ran || runId === undefined) this.conversation = open;
    else if (kept) this.conversation = { thread: open?.thread ?? runId, lastRun: runId, close: kept };
    // A CLI that never started had no conversation to lose.
    else if (open || !(state.status === 'failed' && state.reason === 'spawn_failed')) this.lostThread = open?.thread ?? runId;
  }

  /** Back to waiting for a prompt, unless the session began to close meanwhile. */
  private turnEnded(): void {
    if (this.phase === 'turn') this.phase = 'idle';
  }

  /** Stops the turn in flight, if any; the conversation stays for the next prompt. */
  async cancelTurn(): Promise<void> {
    const runId = this.turn?.runId;
    if (runId !== undefined) await this.options.service.interrupt(runId);
  }

  /** Ends the session: the turn in flight, the CLI, then the log (with every entry, finished). */
  close(): Promise<void> {
    this.closing ??= this.shutDown();
    return this.closing;
  }

  private async shutDown(): Promise<void> {
    this.phase = 'closing';
    const turn = this.turn;
    if (turn?.runId !== undefined) {
      // Its end is awaited only when the service took the cancel; else disposing the driver below ends it.
      const cancelled = await this.options.service.cancel(turn.runId).then(
        () => true,
        () => false,
      );
      if (cancelled) await turn.ended;
    }
    const open = this.conversation;
    this.conversation = undefined;
    await open?.close().catch(() => undefined);
    await this.driver.dispose().catch(() => undefined);
    if (!this.log.store.finished) this.log.store.finish();
    this.phase = 'closed';
  }

  private note(text: string): void {
    if (!this.log.store.finished) this.log.store.push({ type: 'normalized', entry: this.notices.make('system_message', text) });
  }

  /** The permission requests the run judged (not the calls the CLI made on its own, audited afterwards). */
  private async permissionsOf(runId: string): Promise<SessionPermission[]> {
    const out: SessionPermission[] = [];
    let after: number | null = 0;
    while (after !== null) {
      const page = await this.options.service.events(runId, after);
      for (const e of page.events) {
        if (e.type !== 'decision') continue;
        const d = e.data as { subject?: { tool_name?: unknown }; decision?: unknown; reason?: unknown; by?: unknown };
        if (typeof d.subject?.tool_name !== 'string' || typeof d.by !== 'string' || d.by === 'cli' || (d.decision !== 'allow' && d.decision !== 'deny')) continue;
        out.push({ toolName: d.subject.tool_name, decision: d.decision, reason: typeof d.reason === 'string' ? d.reason : '', decidedBy: d.by });
      }
      // A page with nothing on it cannot move on: stop rather than ask for it again.
      after = page.events.length > 0 ? page.next_after : null;
    }
    return out;
  }
}

function endStatusOf(state: RunState): EndStatus {
  if (!isEnded(state.status)) throw new SwitchboardError('INTERNAL_ERROR', `a session's run was reported ended while ${state.status}`);
  return state.status;
}
