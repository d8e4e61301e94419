/**
 * The daemon's sessions: one log per pane (opened when the pane is created, forgotten when it is
 * removed), agent panes followed by a state tracker, and structured runs started through a driver.
 */
import type { Disposable } from '../core/disposable.js';
import { Emitter, type Event } from '../core/emitter.js';
import type { AgentCatalog, StateChange } from '../agents/index.js';
import { HeadlessDriver, type RunResult } from '../drivers/headless-driver.js';
import type { Conversation, TurnResult } from '../drivers/conversation.js';
import { conversationDriverFor } from '../drivers/conversation-drivers.js';
import { SwitchboardError } from '../core/errors.js';
import type { ApprovalPolicy } from '../approvals/policy/index.js';
import type { Pane, PaneRegistry } from '../pane/index.js';
import { PaneLog } from './pane-log.js';
import { LOG_PART_OF_SHARE, PANE_LOG_DEFAULTS, SessionLogs, type SessionLog, type SessionLogsOptions } from './session-logs.js';

export interface RunAgentOptions {
  agent: string;
  prompt: string;
  cwd: string;
  sandbox?: { home: string; modelUrl: string };
  args?: string[];
}

export interface OpenConversationOptions {
  agent: string;
  cwd: string;
  sandbox?: { home: string; modelUrl: string };
  args?: string[];
  /** Judges the CLI's permission requests; what it leaves open ("ask") is denied, since no one is asked. */
  policy: ApprovalPolicy;
}

export interface PaneStateChange {
  pane: Pane;
  change: StateChange;
}

export class LogService implements Disposable {
  readonly logs: SessionLogs;
  private readonly panes = new Map<string, PaneLog>();
  private readonly runs = new Map<string, { driver: HeadlessDriver; done: Promise<RunResult> }>();
  /** Open sessions, and when their log has taken in the last of their entries. */
  private readonly agentSessions = new Map<string, { session: Conversation; logged: Promise<void> }>();
  private readonly disposables: Disposable[] = [];
  private readonly stateEmitter = new Emitter<PaneStateChange>();
  /** An agent pane's state changed. */
  readonly onPaneState: Event<PaneStateChange> = this.stateEmitter.event;

  constructor(
    private readonly registry: PaneRegistry,
    private readonly catalog: AgentCatalog,
    options: SessionLogsOptions = {},
  ) {
    this.logs = new SessionLogs(options);
    for (const pane of registry.list()) this.attach(pane);
    this.disposables.push(
      registry.onPaneCreated((pane) => this.attach(pane)),
      registry.onPaneRemoved((pane) => this.detach(pane.id)),
    );
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
    // The run's own store feeds the session log; history first, so nothing said before this is lost.
    handle.entries.subscribe((batch) => {
      for (const { msg } of batch) if (!log.store.finished) log.store.push({ type: 'normalized', entry: msg });
    }, {
      onFinished: () => {
        void handle.done.then((result) => {
          // The daemon may have finished every log while shutting down: nothing to add then.
          if (log.store.finished) return;
          if (result.stderrTail.trim() !== '' && result.status === 'failed') log.store.push({ type: 'stderr', content: result.stderrTail });
          log.store.finish();
          void handle.entries.close();
        });
      },
    });
    this.runs.set(handle.runId, { driver, done: handle.done });
    void handle.done.finally(() => this.runs.delete(handle.runId));
    return { sessionId: handle.runId, done: handle.done };
  }

  /** Opens a multi-turn session on an agent's structured mode; its entries are the session's log. */
  async openAgentSession(options: OpenConversationOptions): Promise<string> {
    const driver = conversationDriverFor(options.agent, { catalog: this.catalog });
    const session = await driver.open({ cwd: options.cwd, sandbox: options.sandbox, args: options.args, policy: options.policy });
    const log = this.logs.open({ id: session.id, kind: 'session', title: `${options.agent} session`, agent: options.agent });
    const logged = new Promise<void>((resolve) => {
      session.entries.subscribe(
        (batch) => {
          for (const { msg } of batch) if (!log.store.finished) log.store.push({ type: 'normalized', entry: msg });
        },
        {
          onFinished: () => {
            log.store.finish();
            resolve();
          },
        },
      );
    });
    this.agentSessions.set(session.id, { session, logged });
    return session.id;
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
    for (const d of this.disposables.splice(0)) d.dispose();
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
    const session = new PaneLog(pane, log, profile);
    session.onState((change) => this.stateEmitter.fire({ pane, change }));
    this.panes.set(pane.id, session);
  }

  private detach(paneId: string): void {
    this.panes.get(paneId)?.dispose();
    this.panes.delete(paneId);
    this.logs.remove(paneId);
  }
}
