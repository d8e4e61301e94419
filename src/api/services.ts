/**
 * The one service object: what every operation works on. The daemon builds it once and hands it to
 * every transport (JSON-RPC over TCP and the local socket, the dashboard's WebSocket, and the HTTP
 * API and MCP to come), which reach the pane, agent and log layers only through the operations.
 */
import { homedir, hostname } from 'node:os';
import path from 'node:path';
import type { Disposable } from '../core/disposable.js';
import { SwitchboardError } from '../core/errors.js';
import type { PaneRegistry } from '../pane/index.js';
import { DEFAULT_FIRST_RUN_POLICY, type AgentCatalog, type AgentPanes, type McpServerCommand } from '../agents/index.js';
import type { LogService } from '../logs/index.js';
import { StructuredRuns, type RunService } from '../runs/index.js';
import { AskService } from '../asks/index.js';
import { presetStoreOf, TeamRuns, type PresetStore } from '../orchestration/index.js';
import type { InfoResult } from '../protocol/methods.js';
import type { TmuxService } from '../tmux/service.js';
import { NodePanesSlot } from './remote-panes.js';

/** What operations may ask of the daemon that hosts them. */
export interface DaemonControl {
  info(): InfoResult;
  /** Where the daemon keeps its private files (log exports go under it). */
  readonly home: string;
  /** The most disk the exports folder may hold, in bytes: an export past it is refused or cut off. */
  readonly exportsMaxBytes: number;
  /** A fresh one-time login URL for the dashboard; CONFLICT when it is off. */
  dashboardLoginUrl(): string;
  /** How an agent CLI starts Switchboard's MCP server (`switchboard mcp`), put in a sandboxed agent's configuration; undefined when the CLI is not built. */
  readonly mcpServer?: McpServerCommand | undefined;
  /** Shuts the daemon down after the current response is sent. */
  requestShutdown(): void;
}

/** What the tmux front end does with an agent CLI's first-run dialogs: answer them by policy, or leave them. */
export const TMUX_DIALOGS = ['answer', 'off'] as const;
export type TmuxDialogs = (typeof TMUX_DIALOGS)[number];

/**
 * The tmux front end's namespaces over the daemon's panes, made on first use (most daemons never
 * see a tmux command), ended with the services. Its modules (the command table, formats, layouts:
 * about 250 KiB of code) are loaded then too.
 */
export class TmuxFrontEnd implements Disposable {
  private service: TmuxService | undefined;
  private loading: Promise<TmuxService> | undefined;
  private disposed = false;

  constructor(
    private readonly panes: PaneRegistry,
    private readonly agents: AgentCatalog,
    private readonly dialogs: TmuxDialogs = 'answer',
  ) {}

  /** The tmux service, made now if it was not yet. */
  get(): Promise<TmuxService> {
    if (this.service) return Promise.resolve(this.service);
    this.loading ??= (async () => {
      const [{ TmuxService }, { RegistryPaneHost }] = await Promise.all([import('../tmux/service.js'), import('../tmux/registry-host.js')]);
      if (this.disposed) throw new SwitchboardError('SHUTTING_DOWN', 'the daemon is shutting down');
      // An agent CLI a tmux pane runs has its first-run dialogs answered as `switchboard new --agent` answers them.
      const firstRun = this.dialogs === 'answer' ? DEFAULT_FIRST_RUN_POLICY : undefined;
      this.service = new TmuxService(new RegistryPaneHost(this.panes, { agents: this.agents, firstRun }), { pid: process.pid, hostName: hostname(), uid: process.getuid?.() ?? 0, socketFiles: true });
      return this.service;
    })();
    return this.loading;
  }

  /** Where the tmux front end placed a pane, if it made it (never makes the service). */
  paneOf(paneId: string): ReturnType<TmuxService['paneOf']> {
    return this.service?.paneOf(paneId);
  }

  dispose(): void {
    this.disposed = true;
    this.service?.dispose();
    this.service = undefined;
  }
}

/** Every service an operation may use. */
export interface Services {
  readonly panes: PaneRegistry;
  readonly agents: AgentCatalog;
  /** The agent in each agent pane (its tracker, its pending approval, how to prompt it): one for every surface and run. */
  readonly agentPanes: AgentPanes;
  /** Every session's log. */
  readonly logs: LogService;
  /** `run_agent` and `agent_session_*`: structured runs whose entries are session logs. */
  readonly structuredRuns: StructuredRuns;
  /** The tmux front end over the same panes. */
  readonly tmux: TmuxFrontEnd;
  /** Agents asking agents: the ask engine over the agent panes. */
  readonly asks: AskService;
  readonly daemon: DaemonControl;
  /** The agent bridge (seed 004): its run service once the daemon has started it. */
  readonly bridge: AgentBridge;
  /** Seed 003's team presets, sealed in the daemon's home. */
  readonly teamPresets: PresetStore;
  /** Seed 003's team runs: a planner and its workers in the daemon's panes. */
  readonly teamRuns: TeamRuns;
  /** A cluster controller's way to its nodes' panes, once its cluster side has started. */
  readonly nodePanes: NodePanesSlot;
}

/**
 * Where the agent bridge's run service is, once started: the daemon opens the run ledger and
 * recovers what a dead daemon left in flight before it listens, after the services exist.
 */
export class AgentBridge {
  private current: RunService | undefined;
  private why = 'the agent bridge has not started yet';

  /** The run service, or undefined while the bridge is off. */
  get service(): RunService | undefined {
    return this.current;
  }

  /** Why there is no run service now (for the CONFLICT every run call answers then). */
  get offReason(): string {
    return this.why;
  }

  /** Puts the started run service in place. */
  attach(service: RunService): void {
    this.current = service;
  }

  /** Takes the run service away (it could not start, or the daemon is shutting down), saying why. */
  detach(why: string): RunService | undefined {
    const service = this.current;
    this.current = undefined;
    this.why = why;
    return service;
  }
}

/** Builds the services over the daemon's parts. No I/O: the tmux front end starts on first use. */
export function createServices(
  parts: Omit<Services, 'tmux' | 'asks' | 'bridge' | 'agentPanes' | 'structuredRuns' | 'teamPresets' | 'teamRuns' | 'nodePanes'> & { bridge?: AgentBridge; agentPanes?: AgentPanes; structuredRuns?: StructuredRuns; tmuxDialogs?: TmuxDialogs },
): Services & Disposable {
  const tmux = new TmuxFrontEnd(parts.panes, parts.agents, parts.tmuxDialogs);
  // The logs' when the caller made none of its own (they are the same: the logs take the daemon's).
  const agentPanes = parts.agentPanes ?? parts.logs.agentPanes;
  const asks = new AskService({ panes: parts.panes, agentPanes });
  // The caller's (the daemon ends its runs before its logs), else one of the services' own.
  const structuredRuns = parts.structuredRuns ?? new StructuredRuns(parts.logs.logs, parts.agents);
  const nodePanes = new NodePanesSlot();
  const teamRuns = new TeamRuns({ home: homedir(), worktrees: path.join(parts.daemon.home, 'worktrees') });
  return {
    panes: parts.panes,
    agents: parts.agents,
    agentPanes,
    structuredRuns,
    logs: parts.logs,
    daemon: parts.daemon,
    bridge: parts.bridge ?? new AgentBridge(),
    tmux,
    asks,
    teamPresets: presetStoreOf(parts.daemon.home),
    teamRuns,
    nodePanes,
    dispose: () => {
      nodePanes.dispose();
      teamRuns.dispose();
      if (!parts.structuredRuns) void structuredRuns.close();
      asks.dispose();
      tmux.dispose();
    },
  };
}
