/**
 * The seed's first methods for structured runs, whose entries are filed as a session log
 * (SessionLogs), which the log methods read:
 * - `run_agent`, a prompt on an agent's headless mode (one process), is a face of the run service
 *   (RunFace): its run is in the ledger with the run states and events every run has, queued under
 *   the same limits, and cancelled the one way (`cancel_run` or `run_cancel` by its id, which is its
 *   session's). Its tools run as the CLI arguments the caller gave allow (CallerGovernance).
 * - `agent_session_*`, a multi-turn conversation on the agent's structured mode, is a face of the
 *   run service too (agent-sessions.ts): each prompt is a run continuing the last one's
 *   conversation. Who opened a session may prompt, cancel or close it (and the owner).
 */
import { SwitchboardError } from '../core/errors.js';
import type { AgentCatalog } from '../agents/index.js';
import { CallerGovernance } from '../governance/caller-governance.js';
import { HeadlessBackend } from './backends/headless-backend.js';
import type { RunService } from './run-service.js';
import { AgentSession, type OpenSessionOptions, type SessionTurn } from './agent-sessions.js';
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

export class StructuredRuns {
  /** The agent sessions open now, by id. */
  private readonly agentSessions = new Map<string, AgentSession>();

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

  /** Opens a multi-turn session on an agent's structured mode (see AgentSession); its entries are the session's log. */
  openAgentSession(options: OpenSessionOptions): string {
    const session = new AgentSession(options, this.catalog, this.logs);
    this.agentSessions.set(session.id, session);
    return session.id;
  }

  /** Who opened the open session `id` (see OpenSessionOptions.createdBy); undefined when there is none, or it was opened in process. */
  creatorOf(id: string): string | undefined {
    return this.agentSessions.get(id)?.createdBy;
  }

  /** Gives an open session a prompt, as a run of its run service; resolves when the turn has ended. */
  promptAgentSession(id: string, text: string, signal?: AbortSignal): Promise<SessionTurn> {
    return this.agentSession(id).prompt(text, signal);
  }

  /** Stops the session's turn in flight; the conversation stays for the next prompt. */
  async cancelAgentSessionTurn(id: string): Promise<void> {
    await this.agentSession(id).cancelTurn();
  }

  /** Ends the session; resolves once its process is gone and its log has every entry and is finished. */
  async closeAgentSession(id: string): Promise<void> {
    const session = this.agentSession(id);
    this.agentSessions.delete(id);
    await session.close();
  }

  private agentSession(id: string): AgentSession {
    const open = this.agentSessions.get(id);
    if (!open) throw new SwitchboardError('SESSION_NOT_FOUND', `no open agent session: ${id}`, { session_id: id });
    return open;
  }

  /** Ends every open session, and waits for them (run_agent's runs are the run service's to end). */
  async close(): Promise<void> {
    const sessions = [...this.agentSessions.values()];
    this.agentSessions.clear();
    await Promise.allSettled(sessions.map((s) => s.close()));
  }
}
