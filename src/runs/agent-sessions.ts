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

/** The name a session's runs record as their face (their policy reads `agent_session (the caller's own rules)`). */
const FACE = 'agent_session';

export class AgentSession {
  readonly id = `ses_${randomBytes(8).toString('hex')}`;
  private phase: Phase = 'idle';
  private readonly driver: ConversationBackend;
  private readonly governance: CallerGovernance;
  private readonly notices = new EntryFactory('session-notice');
  /** The conversation's first run, once a turn opened it. */
  private thread: string | undefined;
  /** The last turn's run: the next names it as its parent. */
  private lastRun: string | undefined;
  /** The turn in flight: its run once made, and when it has ended. */
  private turn: { runId: string | undefined; ended: Promise<unknown> } | undefined;
  /** How to close the conversation the last turn left open; undefined when it left none (cancelled, or nothing yet). */
  private kept: (() => Promise<void>) | undefined;

  private readonly log: SessionLog;

  /** INVALID_PARAMS for an agent without a structured mode. The CLI starts with the first prompt. */
  constructor(
    private readonly options: OpenSessionOptions,
    catalog: AgentCatalog,
    logs: SessionLogs,
  ) {
    this.driver = new ConversationBackend({ driver: conversationDriverFor(options.agent, { catalog }), catalog, ...(options.sandbox ? { sandbox: options.sandbox } : {}), ...(options.args ? { args: options.args } : {}) });
    this.governance = new CallerGovernance({ face: FACE, approvals: options.approvals, reason: `${FACE}: the agent's requests are judged by the approval policy the caller opened the session with; the policy file's sandbox and approvals do not judge them` });
    this.log = logs.open({ id: this.id, kind: 'session', title: `${options.agent} session`, agent: options.agent });
  }

  get createdBy(): string | undefined {
    return this.options.createdBy;
  }

  /** Gives the agent a prompt as a run of the run service; resolves when the run has ended. */
  async prompt(text: string, signal?: AbortSignal): Promise<SessionTurn> {
    if (this.phase === 'turn') throw new SwitchboardError('INVALID_REQUEST', `session ${this.id} is busy with a turn: prompt again once it has ended (or cancel it)`, { session_id: this.id });
    if (this.phase !== 'idle') throw new SwitchboardError('SESSION_NOT_FOUND', `no open agent session: ${this.id}`, { session_id: this.id });
    this.phase = 'turn';
    const started = Date.now();
    const kept = this.kept;
    this.kept = undefined;
    if (kept === undefined && this.thread !== undefined) {
      // The last turn ended its conversation (cancelled from outside, or the CLI gave out): a new one starts.
      this.note(`the conversation of run ${this.thread} had ended; this turn starts a new one, without the earlier context`);
      this.thread = undefined;
    }
    const entries: NormalizedEntry[] = [];
    let settle: (state: RunState) => void = () => undefined;
    const ended = new Promise<RunState>((resolve) => (settle = resolve));
    const turn: { runId: string | undefined; ended: Promise<unknown> } = { runId: undefined, ended };
    this.turn = turn;
    const onAbort = (): void => void (turn.runId !== undefined ? this.options.service.interrupt(turn.runId).catch(() => undefined) : undefined);
    try {
      await this.options.service.submit(
        { backend: this.options.agent, prompt: text, cwd: this.options.cwd, keep_alive: true, parent: kept !== undefined ? this.lastRun : undefined, caller: this.options.createdBy },
        {
          name: FACE,
          driver: this.driver,
          governance: this.governance,
          conversation: { thread: kept !== undefined ? this.thread : undefined, keep: (close) => (this.kept = close) },
          opened: (runId) => {
            turn.runId = runId;
            this.thread ??= runId;
          },
          observe: (emission) => {
            if (emission.kind !== 'entry') return;
            entries.push(emission.entry);
            if (!this.log.store.finished) this.log.store.push({ type: 'normalized', entry: emission.entry });
          },
          ended: (state) => {
            // A run that never started never touched the conversation: it is still open as it was.
            if ((!('started_at' in state) || state.started_at === null) && this.kept === undefined) this.kept = kept;
            settle(state);
          },
        },
      );
      signal?.addEventListener('abort', onAbort, { once: true });
      if (signal?.aborted) onAbort();
      const state = await ended;
      const runId = turn.runId as string;
      this.lastRun = runId;
      return { runId, status: endStatusOf(state), stopReason: 'message' in state && state.message !== '' ? state.message : null, durationMs: Date.now() - started, entries, permissions: await this.permissionsOf(runId) };
    } catch (err) {
      // Refused before it ran (a bad folder, the queue full, the service shutting down): the conversation is as it was.
      if (turn.runId === undefined) this.kept ??= kept;
      throw err;
    } finally {
      signal?.removeEventListener('abort', onAbort);
      this.turn = undefined;
      this.turnEnded();
    }
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
  async close(): Promise<void> {
    if (this.phase === 'closing' || this.phase === 'closed') return;
    this.phase = 'closing';
    const turn = this.turn;
    if (turn?.runId !== undefined) {
      await this.options.service.cancel(turn.runId).catch(() => undefined);
      await turn.ended;
    }
    const kept = this.kept;
    this.kept = undefined;
    await kept?.().catch(() => undefined);
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
      after = page.next_after;
    }
    return out;
  }
}

function endStatusOf(state: RunState): EndStatus {
  if (!isEnded(state.status)) throw new SwitchboardError('INTERNAL_ERROR', `a session's run was reported ended while ${state.status}`);
  return state.status;
}
