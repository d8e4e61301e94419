/**
 * The seed's first methods for structured runs, whose entries are filed as a session log
 * (SessionLogs), which the log methods read:
 * - `run_agent`, a prompt on an agent's headless mode (one process), is a face of the run service
 *   (RunFace): its run is in the ledger with the run states and events every run has, queued under
 *   the same limits, and cancelled the one way (`cancel_run` or `run_cancel` by its id, which is its
 *   session's). Its tools run as the CLI arguments the caller gave allow (CallerGovernance).
 * - `agent_session_*`, a multi-turn conversation on the agent's structured mode, kept here for
 *   now: who opened one may prompt, cancel or close it (and the owner).
 */
import { SwitchboardError } from '../core/errors.js';
import type { AgentCatalog } from '../agents/index.js';
import type { ApprovalPolicy } from '../approvals/policy/index.js';
import { CallerGovernance } from '../governance/caller-governance.js';
import { HeadlessBackend } from './backends/headless-backend.js';
import type { RunService } from './run-service.js';
import type { Conversation, TurnResult } from '../drivers/conversation.js';
import { conversationDriverFor } from '../drivers/conversation-drivers.js';
import type { NormalizedEntry } from '../output/entry.js';
import type { MsgStore } from '../output/msg-store.js';
import type { SessionLog, SessionLogs } from '../logs/index.js';

export interface RunAgentOptions {
  /** The caller's run service (the daemon's bridge). */
  service: RunService;
  agent: string;
  prompt: string;
  cwd: string;
  sandbox?: { home: string; modelUrl: string };
  args?: string[];
  /** Who started it ('owner', or the pane whose token did): only they or the owner may cancel it. */
  createdBy?: string;
}

export interface OpenConversationOptions {
  agent: string;
  cwd: string;
  sandbox?: { home: string; modelUrl: string };
  args?: string[];
  /** Judges the CLI's permission requests; what it leaves open ("ask") is denied, since no one is asked. */
  policy: ApprovalPolicy;
  /** Who opened it ('owner', or the pane whose token did): only they or the owner may cancel or close it. */
  createdBy?: string;
}

export class StructuredRuns {
  /** Open sessions, and when their log has taken in the last of their entries. */
  private readonly agentSessions = new Map<string, { session: Conversation; logged: Promise<void>; createdBy: string | undefined }>();

  constructor(
    private readonly logs: SessionLogs,
    private readonly catalog: AgentCatalog,
  ) {}

  /**
   * Submits `prompt` to an agent's headless mode as a run of the run service; its entries are the
   * session log named by the run's id, finished (with the CLI's last words on stderr, when it
   * failed) once the run's end is recorded.
   */
  async runAgent(options: RunAgentOptions): Promise<{ sessionId: string; failedToStart?: string }> {
    let log: SessionLog | undefined;
    const view = await options.service.submit(
      { backend: options.agent, prompt: options.prompt, cwd: options.cwd, keep_alive: false, ...(options.createdBy !== undefined ? { caller: options.createdBy } : {}) },
      {
        name: 'run_agent',
        driver: new HeadlessBackend({ tool: options.agent, catalog: this.catalog, ...(options.sandbox ? { sandbox: options.sandbox } : {}), ...(options.args ? { args: options.args } : {}) }),
        governance: new CallerGovernance({ face: 'run_agent', reason: "run_agent: the agent's tools run as the CLI arguments the caller gave allow; the policy file's sandbox and approvals do not judge them" }),
        opened: (runId) => {
          log = this.logs.open({ id: runId, kind: 'run', title: `${options.agent}: ${options.prompt.slice(0, 60)}`, agent: options.agent });
        },
        observe: (emission) => {
          // The daemon may have finished every log while shutting down: nothing to add then.
          if (emission.kind === 'entry' && log && !log.store.finished) log.store.push({ type: 'normalized', entry: emission.entry });
        },
        ended: (state) => {
          if (!log || log.store.finished) return;
          if (state.status === 'failed' && state.message.trim() !== '') log.store.push({ type: 'stderr', content: state.message });
          log.store.finish();
        },
      },
    );
    return { sessionId: view.id, ...(view.status === 'failed' && view.reason === 'spawn_failed' ? { failedToStart: view.message } : {}) };
  }

  /** Opens a multi-turn session on an agent's structured mode; its entries are the session's log. */
  async openAgentSession(options: OpenConversationOptions): Promise<string> {
    const driver = conversationDriverFor(options.agent, { catalog: this.catalog });
    const session = await driver.open({ cwd: options.cwd, sandbox: options.sandbox, args: options.args, policy: options.policy });
    const log = this.logs.open({ id: session.id, kind: 'session', title: `${options.agent} session`, agent: options.agent });
    const logged = fileEntries(session.entries, log).then(() => log.store.finish());
    this.agentSessions.set(session.id, { session, logged, createdBy: options.createdBy });
    return session.id;
  }

  /** Who opened the open session `id` (see OpenConversationOptions.createdBy); undefined when there is none, or it was opened in process. */
  creatorOf(id: string): string | undefined {
    return this.agentSessions.get(id)?.createdBy;
  }

  /** Gives an open session a prompt; resolves when the agent ends its turn. */
  promptAgentSession(id: string, text: string, signal?: AbortSignal): Promise<TurnResult> {
    return this.agentSession(id).prompt(text, { signal });
  }

  async cancelAgentSessionTurn(id: string): Promise<void> {
    await this.agentSession(id).cancelTurn();
  }

  /** Ends the session; resolves once its process is gone and its log has every entry and is finished. */
  async closeAgentSession(id: string): Promise<void> {
    const session = this.agentSession(id);
    const logged = this.agentSessions.get(id)?.logged;
    this.agentSessions.delete(id);
    await session.close();
    await logged;
  }

  private agentSession(id: string): Conversation {
    const open = this.agentSessions.get(id);
    if (!open) throw new SwitchboardError('SESSION_NOT_FOUND', `no open agent session: ${id}`, { session_id: id });
    return open.session;
  }

  /** Ends every open session, and waits for them (run_agent's runs are the run service's to end). */
  async close(): Promise<void> {
    const sessions = [...this.agentSessions.values()];
    this.agentSessions.clear();
    await Promise.allSettled(sessions.map((s) => s.session.close()));
  }
}

/**
 * Files a conversation's entries in its session's log as they come, its history first so nothing
 * said before this is lost; resolves when the conversation's store is finished.
 */
function fileEntries(source: MsgStore<NormalizedEntry>, log: SessionLog): Promise<void> {
  return new Promise((resolve) => {
    source.subscribe(
      (batch) => {
        for (const { msg } of batch) if (!log.store.finished) log.store.push({ type: 'normalized', entry: msg });
      },
      { onFinished: () => resolve() },
    );
  });
}
