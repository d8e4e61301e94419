import { rmSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { DisposableStore } from '../core/disposable.js';
import { Emitter, type Event } from '../core/emitter.js';
import { errorMessage, SwitchboardError } from '../core/errors.js';
import { silentLogger, type Logger } from '../core/logger.js';
import { MemoryBudget } from '../core/memory-budget.js';
import { OUTPUT_MEMORY_BUDGET, SPILL_DISK_BUDGET } from './output-budgets.js';
import { switchboardVersion } from '../core/version.js';
import { generateToken } from '../core/secrets.js';
import { CallerOrigins, createServices, TokenRegistry, TMUX_DIALOGS, type DaemonControl, type Grant, type Services, type TmuxDialogs } from '../api/index.js';
import { PaneRegistry, type PaneDefaults } from '../pane/index.js';
import { AgentCatalog, AgentPanes, COMMANDS_DIR_VARIABLE, sweepPrivateTemps, type McpServerCommand } from '../agents/index.js';
import { LogService } from '../logs/index.js';
import { StructuredRuns } from '../runs/index.js';
import { LedgerAskRecorder } from '../asks/index.js';
import { keyFileOf, prepareSealingKey, teamRecordOf, type TeamRecord } from '../orchestration/index.js';
import type { RunLedger } from '../ledger/index.js';
import type { InfoResult } from '../protocol/methods.js';
import { endpointVariables, tokenVariables } from '../protocol/discovery.js';
import { bubblewrapProblem, ensurePrivateDir, findBubblewrap, isProcessRunning, jailedCommand, killMarkedNow, localSocketPath, privateSocketDir, processIdentity, switchboardHome } from '../platform/index.js';
import { RpcServer, type AnyHandler, type ConnectionLimits } from '../surfaces/rpc/index.js';
import { AGENT_PANE_SCOPES, SCOPES, type Scope } from '../protocol/scopes.js';
import { DashboardServer, type DashboardServerOptions } from '../surfaces/http/index.js';
import { readRuntimeFile, removeRuntimeFile, runtimeFilePath, writeRuntimeFile, type RuntimeInfo } from './runtime-file.js';
import { killBridgeNow, startBridge, stopBridge, type BridgeOptions, type StartedBridge } from './bridge.js';
import { builtCliDir, preparePaneCommands } from './pane-programs.js';
import { DAEMON_MARKER_VARIABLE, daemonMarkerValue, recoverFromDeadDaemon, type RecoveryReport } from './recovery.js';

export { TMUX_DIALOGS, type TmuxDialogs };

export { DAEMON_NODE_FLAGS, daemonEnv, dropDaemonEnv } from './daemon-flags.js';

/** Seed 000's default port; the next free one is used when it is taken. */
export const DEFAULT_PORT = 8765;
export const DEFAULT_HOST = '127.0.0.1';
/** The dashboard's default port (the next free one when it is taken). */
export const DEFAULT_DASHBOARD_PORT = 8766;

/** The most disk `log_export` files may take in the home's exports folder, together. */
const DEFAULT_EXPORTS_MAX_BYTES = 1024 * 1024 * 1024;

export interface DaemonOptions {
  /** Where the runtime file and socket live (default $SWITCHBOARD_HOME or ~/.switchboard). */
  home?: string;
  host?: string;
  /** TCP port (default 8765, or the next free one); 0 lets the OS choose; false turns TCP off. */
  port?: number | false;
  /** The local socket path; false turns it off. Default: inside `home` (a named pipe on Windows). */
  socket?: string | false;
  logger?: Logger;
  paneDefaults?: Partial<PaneDefaults>;
  limits?: Partial<ConnectionLimits>;
  maxConnections?: number;
  /** The environment panes start from (default: this process's). */
  env?: NodeJS.ProcessEnv;
  /** Write the runtime file for clients to find (default true). */
  writeRuntimeFile?: boolean;
  /** Extra method implementations (tests). */
  handlers?: Partial<Record<string, AnyHandler>>;
  /** Check every result against its method's schema (tests): a drift is an INTERNAL_ERROR. */
  checkResults?: boolean;
  /** Serve the web dashboard on loopback too: `{port}` (0: any free one; default 8766 or the next free). Off by default. */
  dashboard?: { port?: number; webRoot?: string; answers?: DashboardServerOptions['answers'] } | false;
  /** A file of user-defined agent profiles (default: agents.yaml / .yml / .json in the home, or $SWITCHBOARD_AGENTS). */
  agentsFile?: string;
  /** The most disk `log_export` files may take together (default 1 GiB). */
  exportsMaxBytes?: number;
  /** The memory budget for what panes and sessions hold of their output (default OUTPUT_MEMORY_BUDGET's 12 MiB). */
  outputMemoryBytes?: number;
  /** The agent bridge (run service, run ledger, governance): its options, or false to leave it off. On by default. */
  bridge?: BridgeOptions | false;
  /**
   * Agent panes (and panes a scoped caller starts) in a bubblewrap sandbox: `bwrap` (required:
   * the daemon refuses to start without a working one), `auto` (when one works here), `off`
   * (default). See platform/process-jail.ts.
   */
  agentSandbox?: AgentSandboxMode;
  /**
   * The first-run dialogs of an agent CLI the tmux front end recognizes in a pane (folder trust,
   * model nudge, an offer to try something): answered by the policy `switchboard new --agent`
   * uses ('answer', the default), or left to the person ('off'), as on real tmux.
   */
  tmuxDialogs?: TmuxDialogs;
}

export const AGENT_SANDBOX_MODES = ['off', 'auto', 'bwrap'] as const;
export type AgentSandboxMode = (typeof AGENT_SANDBOX_MODES)[number];

/**
 * A running Switchboard daemon, the composition root: it builds the services once (panes, agent
 * profiles, logs, the tmux front end) and hands them to every transport (JSON-RPC on loopback TCP
 * and a local socket, the dashboard) with the authenticate step over its tokens (a fresh 256-bit
 * owner's token, published in a 0600 runtime file, and a scoped one per agent pane).
 */
export class Daemon implements DaemonControl {
  readonly panes: PaneRegistry;
  readonly agents: AgentCatalog;
  /** Every pane's and run's log, and the agent panes' state trackers. */
  readonly logs: LogService;
  /** The agent in each agent pane, shared by the logs, the services and the bridge's PTY runs. */
  readonly agentPanes: AgentPanes;
  private readonly structuredRuns: StructuredRuns;
  /** The one service object every transport takes. */
  readonly services: Services;
  /** The owner's token: everything. Agent panes get scoped tokens of their own (`tokens`). */
  readonly token: string;
  readonly tokens: TokenRegistry;
  readonly home: string;
  readonly exportsMaxBytes: number;
  readonly startedAt = new Date();
  tcp: { host: string; port: number } | undefined;
  socketPath: string | undefined;
  /** What this daemon found at start of a daemon of the same home that had died, and ended. */
  recovered: RecoveryReport | undefined;
  /** The marker value every pane of this daemon carries (recovery.ts). */
  readonly marker: string;
  /** The bubblewrap agent panes start in, or undefined when they run without a sandbox. */
  readonly agentSandbox: string | undefined;
  /** The agent bridge, once started (its run service is also in `services.bridge`). */
  bridge: StartedBridge | undefined;

  private readonly server: RpcServer;
  /** What panes and sessions may hold of their output, in memory and in spill files. */
  private readonly memoryBudget: MemoryBudget;
  private readonly diskBudget: MemoryBudget;
  /** The dashboard's server, when it is on. */
  readonly dashboardServer: DashboardServer | undefined;
  private readonly logger: Logger;
  private readonly publish: boolean;
  /** Where session logs spill what memory evicts; this daemon's own, removed at shutdown. */
  private readonly spillDir: string;
  /** The private folder under the temp dir that holds the socket when the home is too deep for one; removed at shutdown. */
  private socketDir: string | undefined;
  private closing: Promise<void> | undefined;
  /** The asks' and team runs' recorders in the ledger, once open: their writes are waited for before it closes. */
  private askRecorder: LedgerAskRecorder | undefined;
  private teamRecord: TeamRecord | undefined;
  /** What the daemon ends at shutdown besides its panes and servers (the services' tmux front end). */
  private readonly disposables = new DisposableStore();
  private readonly closedEmitter = new Emitter<void>();
  /** The daemon has shut down (after `close`, a `shutdown` request, or a signal handled by the caller). */
  readonly onClosed: Event<void> = this.closedEmitter.event;

  private constructor(options: DaemonOptions) {
    this.home = options.home ?? switchboardHome();
    this.exportsMaxBytes = options.exportsMaxBytes ?? DEFAULT_EXPORTS_MAX_BYTES;
    this.logger = options.logger ?? silentLogger;
    this.publish = options.writeRuntimeFile ?? true;
    this.marker = daemonMarkerValue(this.home, processIdentity());
    this.token = generateToken();
    this.tokens = new TokenRegistry(this.token);
    this.panes = new PaneRegistry({ logger: this.logger, defaults: options.paneDefaults, baseEnv: options.env });
    // Each pane's programs get the token they may have: the owner's for a shell the owner opens,
    // a scoped one of their own for an agent (never the owner's), revoked with the pane.
    this.panes.setPaneEnvProvider(({ id, agent, scopes }) => {
      const token = scopes === undefined && agent === undefined ? this.token : this.tokens.issue(id, (scopes ?? AGENT_PANE_SCOPES).filter((s): s is Scope => (SCOPES as readonly string[]).includes(s)));
      return tokenVariables(token);
    });
    this.panes.onPaneRemoved((pane) => this.tokens.revokePane(pane.id));
    this.agentSandbox = this.jailAgentPanes(options.agentSandbox ?? 'off', options.env ?? process.env);
    // A broken profile entry is skipped and reported (log, `agents`), never a reason not to start.
    this.agents = AgentCatalog.load({ home: this.home, file: options.agentsFile ?? process.env.SWITCHBOARD_AGENTS });
    for (const problem of this.agents.problems) this.logger.warn('agent profile skipped', { problem });
    this.spillDir = path.join(this.home, 'logs', String(process.pid));
    this.memoryBudget = new MemoryBudget(options.outputMemoryBytes ?? OUTPUT_MEMORY_BUDGET.totalBytes, OUTPUT_MEMORY_BUDGET);
    this.diskBudget = new MemoryBudget(SPILL_DISK_BUDGET.totalBytes, SPILL_DISK_BUDGET);
    // One agent per agent pane for everything: logs, the dashboard, answer_approval, asks, runs.
    // Made before the logs, so each new pane's agent exists before its log is attached.
    this.agentPanes = new AgentPanes(this.panes, this.agents);
    this.logs = new LogService(this.panes, this.agents, { agentPanes: this.agentPanes, spillDir: this.spillDir, memory: this.memoryBudget, disk: this.diskBudget, logger: this.logger });
    this.structuredRuns = new StructuredRuns(this.logs.logs, this.agents);
    this.services = this.disposables.add(createServices({ panes: this.panes, agents: this.agents, agentPanes: this.agentPanes, logs: this.logs, structuredRuns: this.structuredRuns, daemon: this, tmuxDialogs: options.tmuxDialogs ?? 'answer' }));
    const transport = { services: this.services, authenticate: this.tokens.authenticate, logger: this.logger, limits: options.limits, handlers: options.handlers, checkResults: options.checkResults };
    // A program in an agent pane that finds the owner's token is still held to its pane's grant.
    const origins = new CallerOrigins(this.panes, this.tokens);
    const originOf = (socket: net.Socket): Promise<Grant | undefined> => origins.capOfConnection(socket);
    this.server = new RpcServer({ ...transport, maxConnections: options.maxConnections, originOf });
    if (options.dashboard) {
      this.dashboardServer = new DashboardServer({ ...transport, webRoot: options.dashboard.webRoot, answers: options.dashboard.answers, originOf });
    }
  }

  /**
   * Starts agent panes and panes with a scoped token inside bubblewrap, as `mode` says: the
   * bubblewrap used, or undefined when panes run as they are. Throws CONFLICT when `bwrap` is
   * required and cannot run here.
   */
  private jailAgentPanes(mode: AgentSandboxMode, env: NodeJS.ProcessEnv): string | undefined {
    if (mode === 'off') return undefined;
    const bwrap = findBubblewrap(env);
    const problem = bwrap === undefined ? 'bwrap (bubblewrap) is not installed' : bubblewrapProblem(bwrap);
    if (problem !== undefined || bwrap === undefined) {
      if (mode === 'bwrap') throw new SwitchboardError('CONFLICT', `cannot sandbox agent panes: ${problem ?? 'no bwrap'} (install bubblewrap, or start without --agent-sandbox bwrap)`);
      this.logger.info('agent panes run without a sandbox', { problem });
      return undefined;
    }
    const home = this.home;
    // The runtime file holds the owner's token; the sealing key opens the home's sealed files. The
    // jail covers only files there are when a pane starts: the key is made now, before any pane.
    try {
      prepareSealingKey(home);
    } catch (err) {
      this.logger.warn('no sealing key for team presets: they cannot be saved until this is fixed', { error: errorMessage(err) });
    }
    const hiddenFiles = [runtimeFilePath(home), keyFileOf(home)];
    const inside = (dir: string | undefined): dir is string => dir !== undefined && path.resolve(dir).startsWith(path.resolve(home) + path.sep);
    this.panes.setPaneJail(({ agent, scopes, command, cwd, env }) => {
      if (agent === undefined && scopes === undefined) return undefined;
      // The home is read-only inside, but for what the pane itself works in: its temporary folder, its folder, its HOME.
      const writable = [path.join(home, 'tmp'), cwd, env.HOME, env.TMPDIR].filter(inside);
      return jailedCommand(bwrap, command, cwd, { hiddenFiles, readOnly: [home], writable });
    });
    return bwrap;
  }

  /** `switchboard mcp` as an agent CLI starts it: this Node and the built CLI (undefined when it is not built). */
  get mcpServer(): McpServerCommand | undefined {
    const dir = builtCliDir();
    return dir ? { command: process.execPath, args: [path.join(dir, 'main.js'), 'mcp'] } : undefined;
  }

  /** Where the dashboard listens, when it is on. */
  get dashboard(): { host: string; port: number } | undefined {
    return this.dashboardServer?.address;
  }

  /** A fresh one-time login URL for the dashboard; INVALID_PARAMS when it is off. */
  dashboardLoginUrl(): string {
    if (!this.dashboardServer?.address) throw new SwitchboardError('CONFLICT', 'the dashboard is off in this daemon (start it with `switchboard up`)');
    return this.dashboardServer.loginUrl();
  }

  /** Starts a daemon; rejects when another one already runs for the same home. */
  static async start(options: DaemonOptions = {}): Promise<Daemon> {
    const daemon = new Daemon(options);
    try {
      await daemon.listen(options);
    } catch (err) {
      if (daemon.bridge) await stopBridge(daemon.bridge, daemon.logger);
      await daemon.server.close();
      await daemon.panes.close({ graceMs: 0 });
      daemon.removeSocketDir();
      throw err;
    }
    return daemon;
  }

  /** How clients reach this daemon. */
  runtimeInfo(): RuntimeInfo {
    return {
      version: switchboardVersion(),
      pid: process.pid,
      ...(this.tcp ? { host: this.tcp.host, port: this.tcp.port } : {}),
      ...(this.socketPath ? { socket: this.socketPath } : {}),
      ...(this.dashboard ? { http: { host: this.dashboard.host, port: this.dashboard.port } } : {}),
      token: this.token,
      started_at: this.startedAt.toISOString(),
    };
  }

  info(): InfoResult {
    const panes = this.panes.list();
    return {
      name: 'switchboard',
      version: switchboardVersion(),
      pid: process.pid,
      started_at: this.startedAt.toISOString(),
      uptime_ms: Date.now() - this.startedAt.getTime(),
      panes: { total: panes.length, alive: panes.filter((p) => p.alive).length },
      transports: { ...(this.tcp ? { tcp: this.tcp } : {}), ...(this.socketPath ? { socket: this.socketPath } : {}), ...(this.dashboard ? { dashboard: this.dashboard } : {}) },
      limits: { max_request_bytes: this.server.requestSizeLimit, max_connections: this.server.connectionLimit },
      memory: memoryNow(),
      output_budget: { total_bytes: this.memoryBudget.totalBytes, members: this.memoryBudget.memberCount, share_bytes: this.memoryBudget.share, spill_total_bytes: this.diskBudget.totalBytes },
      ...(this.recovered ? { recovered: this.recovered } : {}),
      bridge: this.bridge
        ? { on: true, policy: this.bridge.policy, ledger: this.bridge.ledgerShown, interrupted_runs: this.bridge.recovered.interrupted, orphans_ended: this.bridge.recovered.processes, idle_conversations: this.bridge.service.idleConversations() }
        : { on: false, problem: this.services.bridge.offReason },
    };
  }

  requestShutdown(): void {
    // Let the reply to `shutdown` go out first.
    setImmediate(() => void this.close());
  }

  /** Stops accepting calls, ends every pane's processes, and removes the runtime file and socket. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.logger.info('shutting down');
      const bridge = this.bridge;
      this.bridge = undefined;
      this.services.bridge.detach('the daemon is shutting down');
      this.services.nodePanes.detach();
      // Before the ledger closes: the asks in flight are recorded there as failed (SHUTTING_DOWN),
      // and the team runs' boards as they stand.
      this.services.asks.dispose();
      this.services.teamRuns.dispose();
      // Those writes are not waited for as they are made (a ledger over the network holds up no ask
      // or run): they are here, before the ledger closes.
      await this.askRecorder?.settled();
      await this.teamRecord?.settled();
      if (bridge) await stopBridge(bridge, this.logger);
      await this.structuredRuns.close();
      await this.logs.close();
      this.disposables.dispose();
      this.agentPanes.dispose();
      await this.panes.close();
      await this.server.close();
      await this.dashboardServer?.close();
      if (this.publish) removeRuntimeFile(this.home, process.pid);
      this.removeSocketDir();
      // Spilled logs belong to this daemon's sessions, which end with it (exports stay).
      rmSync(this.spillDir, { recursive: true, force: true, maxRetries: 2 });
      this.logger.info('stopped');
      this.closedEmitter.fire();
    })();
    return this.closing;
  }

  /**
   * The last resort of a second signal during shutdown: every pane's processes killed at once
   * (SIGKILL, wherever they went), then the runtime file, socket and spilled logs removed.
   * Synchronous, so the caller can exit right after.
   */
  abortNow(): void {
    this.panes.killAllNow();
    if (this.bridge) killBridgeNow(this.bridge);
    killMarkedNow({ name: DAEMON_MARKER_VARIABLE, value: this.marker });
    this.server.removeSocketFile();
    if (this.publish) removeRuntimeFile(this.home, process.pid);
    this.removeSocketDir();
    rmSync(this.spillDir, { recursive: true, force: true, maxRetries: 2 });
  }

  /**
   * Asks go into the run ledger, so they outlive this daemon; those a daemon that died left in flight
   * are recorded as failed (interrupted) first. Without the ledger (the bridge off) they stay in memory.
   */
  private async keepAsksInLedger(ledger: RunLedger): Promise<void> {
    const rows = ledger.asks;
    if (!rows) return;
    try {
      const { recorder, interrupted } = await LedgerAskRecorder.open({ rows, logger: this.logger });
      if (interrupted.length > 0) this.logger.warn('asks left in flight by a daemon that died are recorded as failed (interrupted)', { asks: interrupted });
      await this.services.asks.engine.keepAsksIn(recorder);
      this.askRecorder = recorder;
    } catch (err) {
      this.logger.error('asks are kept in memory only: the run ledger could not take them', { error: errorMessage(err) });
    }
  }

  /**
   * Team runs go into the run ledger, sealed (their boards and records outlive this daemon); those
   * a daemon that died left going are recorded as failed first. Without the ledger they stay in memory.
   */
  private async keepTeamRunsInLedger(ledger: RunLedger): Promise<void> {
    const rows = ledger.teams;
    if (!rows) return;
    try {
      const record = teamRecordOf(this.home, rows, this.logger);
      const interrupted = await record.settleInterrupted();
      if (interrupted.length > 0) this.logger.warn('team runs left going by a daemon that stopped are recorded as failed', { runs: interrupted });
      this.services.teamRuns.keepRecordIn(record);
      this.teamRecord = record;
    } catch (err) {
      this.logger.error('team runs are kept in memory only: the run ledger could not take them', { error: errorMessage(err) });
    }
  }

  private removeSocketDir(): void {
    if (this.socketDir !== undefined) rmSync(this.socketDir, { recursive: true, force: true });
  }

  private async listen(options: DaemonOptions): Promise<void> {
    ensurePrivateDir(this.home);
    const existing = await refuseIfRunning(this.home);
    this.recovered = await recoverFromDeadDaemon(this.home, existing, this.logger);
    // Before any transport listens: runs a dead daemon left in flight are recorded as interrupted first.
    if (options.bridge !== false) {
      const started = await startBridge(this.home, this.agents, { ...options.bridge, panes: { registry: this.panes, agentPanes: this.agentPanes } }, this.logger);
      if ('bridge' in started) {
        this.bridge = started.bridge;
        this.services.bridge.attach(started.bridge.service);
        // A controller: its nodes' panes are reached by the same pane methods and dashboard sockets.
        if (started.bridge.cluster) this.services.nodePanes.attach(started.bridge.cluster.panes);
        await this.keepAsksInLedger(started.bridge.ledger);
        await this.keepTeamRunsInLedger(started.bridge.ledger);
      } else {
        this.services.bridge.detach(started.problem);
      }
    } else {
      this.services.bridge.detach('this daemon was started without it');
    }
    // Once every orphan is gone (the panes' above, the bridge's runs in startBridge), the private
    // temporary folders of agents whose owner died go too; one still some process's TMPDIR stays.
    const swept = sweepPrivateTemps(this.agents.tempRoot);
    if (swept.length > 0) {
      this.recovered = { ...(this.recovered ?? { daemon_pids: [], panes: 0, processes: 0, survivors: [], runtime_file_removed: false, socket_removed: false }), temp_folders: swept.length };
      this.logger.info('removed the temporary folders of agents whose owner had died', { folders: swept.length });
    }
    if (options.socket !== false) {
      // A home too deep for a socket path gets a folder of its own under the temp dir, with a name
      // no one can guess. A path the caller chose is left alone (its directory may be shared, like
      // /tmp); the socket itself is 0600 either way.
      let socketPath = options.socket ?? localSocketPath(this.home);
      if (socketPath === undefined) {
        this.socketDir = privateSocketDir();
        ensurePrivateDir(this.socketDir);
        socketPath = path.join(this.socketDir, 'sb.sock');
      }
      await this.server.listenLocal(socketPath);
      this.socketPath = socketPath;
    }
    if (options.port !== false) {
      this.tcp = await this.server.listenTcp(options.host ?? DEFAULT_HOST, options.port ?? DEFAULT_PORT);
    }
    if (this.dashboardServer && options.dashboard) {
      await this.dashboardServer.listen(options.host ?? DEFAULT_HOST, options.dashboard.port ?? DEFAULT_DASHBOARD_PORT);
    }
    if (!this.tcp && !this.socketPath) throw new SwitchboardError('INVALID_PARAMS', 'both transports are off: enable TCP or the local socket');
    // The token is each pane's own (the provider above); these are shared, with Switchboard's own
    // commands (`lask`…) on PATH for an agent's shell tool, and their folder for a login shell
    // that sets PATH afresh (pane-programs.ts, agents/environment/shell-startup.ts).
    const commands = preparePaneCommands(this.home, options.env ?? process.env, builtCliDir());
    this.panes.setPaneEnv({ [DAEMON_MARKER_VARIABLE]: this.marker, ...endpointVariables({ tcp: this.tcp, socket: this.socketPath }), ...(commands ? { PATH: commands.path, [COMMANDS_DIR_VARIABLE]: commands.dir } : {}) });
    if (this.publish) writeRuntimeFile(this.home, this.runtimeInfo());
    this.logger.info('listening', { tcp: this.tcp, socket: this.socketPath, home: this.home, pid: process.pid });
  }
}

function memoryNow(): InfoResult['memory'] {
  const m = process.memoryUsage();
  return { rss: m.rss, heap_total: m.heapTotal, heap_used: m.heapUsed, external: m.external, array_buffers: m.arrayBuffers };
}

/** Refuses to start when the runtime file names a live daemon that still answers; otherwise resolves with the file as found. */
async function refuseIfRunning(home: string): Promise<RuntimeInfo | undefined> {
  const existing = readRuntimeFile(home);
  if (!existing || existing.pid === process.pid || !isProcessRunning(existing.pid)) return existing;
  const answers = await canConnect(existing);
  if (answers) {
    throw new SwitchboardError('CONNECTION_FAILED', `a daemon is already running (pid ${existing.pid}); stop it with \`switchboard down\``, {
      pid: existing.pid,
    });
  }
  return existing;
}

function canConnect(info: RuntimeInfo): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = info.socket ? net.connect(info.socket) : info.port ? net.connect(info.port, info.host ?? DEFAULT_HOST) : undefined;
    if (!socket) {
      resolve(false);
      return;
    }
    socket.setTimeout(1_000, () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
