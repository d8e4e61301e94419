/**
 * The daemon's sessions: one log per pane (opened when the pane is created, forgotten when it is
 * removed), agent panes followed by a state tracker, and structured runs started through a driver.
 */
import { DisposableStore, type Disposable } from '../core/disposable.js';
import { Emitter, type Event } from '../core/emitter.js';
import { AgentPanes, type AgentCatalog, type StateChange } from '../agents/index.js';
import { HeadlessDriver, type RunResult } from '../drivers/headless-driver.js';
import type { Conversation, TurnResult } from '../drivers/conversation.js';
import { conversationDriverFor } from '../drivers/conversation-drivers.js';
import { SwitchboardError } from '../core/errors.js';
import type { ApprovalPolicy } from '../approvals/policy/index.js';
import type { Pane, PaneRegistry } from '../pane/index.js';
import type { NormalizedEntry } from '../output/entry.js';
import type { MsgStore } from '../output/msg-store.js';
import { PaneLog } from './pane-log.js';
import { LOG_PART_OF_SHARE, PANE_LOG_DEFAULTS, SessionLogs, type SessionLog, type SessionLogsOptions } from './session-logs.js';

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

export interface PaneStateChange {
  pane: Pane;
  change: StateChange;
}

export interface LogServiceOptions extends SessionLogsOptions {
  /** The registry's agent panes, when the caller keeps them (default: the service makes its own). */
  agentPanes?: AgentPanes;
}

export class LogService implements Disposable {
  readonly logs: SessionLogs;
  /** The agent in each agent pane: its tracker, its pending approval, how to prompt and answer it. */
  readonly agentPanes: AgentPanes;
  private readonly panes = new Map<string, PaneLog>();
  private readonly runs = new Map<string, { driver: HeadlessDriver; done: Promise<RunResult>; createdBy: string | undefined }>();
  /** Open sessions, and when their log has taken in the last of their entries. */
  private readonly agentSessions = new Map<string, { session: Conversation; logged: Promise<void>; createdBy: string | undefined }>();
  private readonly store = new DisposableStore();
  private readonly stateEmitter = new Emitter<PaneStateChange>();
  /** An agent pane's state changed. */
  readonly onPaneState: Event<PaneStateChange> = this.stateEmitter.event;

  constructor(
    private readonly registry: PaneRegistry,
    private readonly catalog: AgentCatalog,
    options: LogServiceOptions = {},
  ) {
    const { agentPanes, ...logOptions } = options;
    this.logs = new SessionLogs(logOptions);
    // Made first, so each new pane's agent exists before its log is attached.
    this.agentPanes = agentPanes ?? this.store.add(new AgentPanes(registry, catalog));
    for (const pane of registry.list()) this.attach(pane);
    this.store.add(registry.onPaneCreated((pane) => this.attach(pane)));
    this.store.add(registry.onPaneRemoved((pane) => this.detach(pane.id)));
  }

  /** The pane's session (its log, and for an agent pane its tracker). */
  paneSession(paneId: string): PaneLog | undefined {
    return this.panes.get(paneId);
  }

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

  /** Ends every run under way and waits for them. */
  async close(): Promise<void> {
    const runs = [...this.runs.entries()];
    for (const [id, run] of runs) run.driver.cancel(id);
    const sessions = [...this.agentSessions.values()];
    this.agentSessions.clear();
    await Promise.allSettled([...runs.map(([, run]) => run.done), ...sessions.map((s) => s.session.close())]);
    this.dispose();
  }

  dispose(): void {
    this.store.dispose();
    for (const session of this.panes.values()) session.dispose();
    this.panes.clear();
    this.logs.dispose();
    this.stateEmitter.dispose();
  }

  private attach(pane: Pane): void {
    if (this.panes.has(pane.id)) return;
    const profile = pane.agent ? this.catalog.find(pane.agent.name) : undefined;
    // A plain shell's output is the pane's raw history already; only agent logs spill to disk.
    // A pane's share of the daemon's memory: its log keeps part, its unparsed output the rest.
    const log: SessionLog = this.logs.open({
      id: pane.id,
      kind: 'pane',
      title: pane.title,
      agent: pane.agent?.name ?? null,
      store: PANE_LOG_DEFAULTS,
      spill: profile !== undefined,
      onShare: (share) => pane.setPendingLimit(share * (1 - LOG_PART_OF_SHARE)),
    });
    const session = new PaneLog(pane, log, this.agentPanes.get(pane.id));
    session.onState((change) => this.stateEmitter.fire({ pane, change }));
    this.panes.set(pane.id, session);
  }

  private detach(paneId: string): void {
    this.panes.get(paneId)?.dispose();
    this.panes.delete(paneId);
    this.logs.remove(paneId);
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
