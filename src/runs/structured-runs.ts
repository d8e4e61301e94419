/**
 * Structured runs outside the bridge's ledger, the seed's first methods: `run_agent` (a prompt on an
 * agent's headless mode, one process) and `agent_session_*` (a multi-turn conversation on its
 * structured mode). Each one's entries are filed as a session log (SessionLogs), which the log
 * methods read; who started each one may cancel or close it (and the owner). The run service
 * (run-service.ts) is the other way to run an agent; issue 23 makes these its faces.
 */
import { SwitchboardError } from '../core/errors.js';
import type { AgentCatalog } from '../agents/index.js';
import type { ApprovalPolicy } from '../approvals/policy/index.js';
import { HeadlessDriver, type RunResult } from '../drivers/headless-driver.js';
import type { Conversation, TurnResult } from '../drivers/conversation.js';
import { conversationDriverFor } from '../drivers/conversation-drivers.js';
import type { NormalizedEntry } from '../output/entry.js';
import type { MsgStore } from '../output/msg-store.js';
import type { SessionLog, SessionLogs } from '../logs/index.js';

export interface RunAgentOptions {
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
  private readonly runs = new Map<string, { driver: HeadlessDriver; done: Promise<RunResult>; createdBy: string | undefined }>();
  /** Open sessions, and when their log has taken in the last of their entries. */
  private readonly agentSessions = new Map<string, { session: Conversation; logged: Promise<void>; createdBy: string | undefined }>();

  constructor(
    private readonly logs: SessionLogs,
    private readonly catalog: AgentCatalog,
  ) {}

  /** Starts `prompt` on an agent's headless mode; its entries are the new session's log. */
  runAgent(options: RunAgentOptions): { sessionId: string; done: Promise<RunResult> } {
    const driver = new HeadlessDriver({ tool: options.agent, catalog: this.catalog, sandbox: options.sandbox, args: options.args });
    const handle = driver.stream(options.prompt, { cwd: options.cwd });
    const log = this.logs.open({ id: handle.runId, kind: 'run', title: `${options.agent}: ${options.prompt.slice(0, 60)}`, agent: options.agent });
    void fileEntries(handle.entries, log).then(async () => {
      const result = await handle.done;
      // The daemon may have finished every log while shutting down: nothing to add then.
      if (log.store.finished) return;
      if (result.stderrTail.trim() !== '' && result.status === 'failed') log.store.push({ type: 'stderr', content: result.stderrTail });
      log.store.finish();
      void handle.entries.close();
    });
    this.runs.set(handle.runId, { driver, done: handle.done, createdBy: options.createdBy });
    void handle.done.finally(() => this.runs.delete(handle.runId));
    return { sessionId: handle.runId, done: handle.done };
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

  /** Who started the running structured run or the open session `id` (see RunAgentOptions.createdBy); undefined when it is neither, or was started in process. */
  creatorOf(id: string): string | undefined {
    return this.runs.get(id)?.createdBy ?? this.agentSessions.get(id)?.createdBy;
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

  /** Cancels a structured run; false when it is not running. */
  cancelRun(sessionId: string): boolean {
    return this.runs.get(sessionId)?.driver.cancel(sessionId) ?? false;
  }

  /** Ends every run under way and every open session, and waits for them. */
  async close(): Promise<void> {
    const runs = [...this.runs.entries()];
    for (const [id, run] of runs) run.driver.cancel(id);
    const sessions = [...this.agentSessions.values()];
    this.agentSessions.clear();
    await Promise.allSettled([...runs.map(([, run]) => run.done), ...sessions.map((s) => s.session.close())]);
  }
}

/**
 * Files a driver's entries in a session's log as they come, its history first so nothing said
 * before this is lost (written once for runs and sessions); resolves when the driver's store is
 * finished.
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
