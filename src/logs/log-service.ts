/**
 * The daemon's session logs: one per pane (opened when the pane is created, forgotten when it is
 * removed), an agent pane's with what its AgentPane tells (prompts, states, approvals). Runs file
 * their own logs here too (runs/structured-runs.ts); nothing here runs an agent.
 */
import { DisposableStore, type Disposable } from '../core/disposable.js';
import { Emitter, type Event } from '../core/emitter.js';
import { AgentPanes, type AgentCatalog, type StateChange } from '../agents/index.js';
import type { Pane, PaneRegistry } from '../pane/index.js';
import { PaneLog } from './pane-log.js';
import { LOG_PART_OF_SHARE, PANE_LOG_DEFAULTS, SessionLogs, type SessionLog, type SessionLogsOptions } from './session-logs.js';

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
  paneLog(paneId: string): PaneLog | undefined {
    return this.panes.get(paneId);
  }

  /** Finishes every log (kept for callers that close rather than dispose). */
  close(): Promise<void> {
    this.dispose();
    return Promise.resolve();
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
