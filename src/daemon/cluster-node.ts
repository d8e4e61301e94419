/**
 * `switchboard node`'s composition (issue 26): a run service of its own (this machine's policy,
 * its drivers, enforced here) whose ledger keeps its runs in `node-ledger.db` in the home, the
 * node's ledger of record, with an outbox that sends every event on to the controller (and, at
 * start, what the stream lacks of the runs kept here), and a RunNode over it that registers,
 * joins and pulls the controller's runs. Its terminal (`pty`) runs' panes are in a registry of
 * its own, each with its log as a daemon's panes have (LogService, under the same output budget),
 * which it serves to the controller (NodePaneServer): people look at them, read their logs and
 * type into them there. No API of its own: the controller is where people look.
 */
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { errorMessage } from '../core/errors.js';
import { withoutEndpointVariables } from '../protocol/discovery.js';
import { MemoryBudget } from '../core/memory-budget.js';
import type { Logger } from '../core/logger.js';
import { ensurePrivateDir } from '../platform/index.js';
import { connectCluster, ConversationShelf, EventPublisher, EVENTS_MAX_AGE_MS, nodeInboxPrefix, type ClusterConnection, type NatsOptions } from '../cluster/index.js';
import { ConversationCarrier, EventOutbox, NodeWorkspaces, OutboxLedgerStore, RunNode } from '../cluster-runs/index.js';
import { NodePaneServer } from '../cluster-panes/index.js';
import { PaneRegistry } from '../pane/index.js';
import { AgentCatalog, AgentPanes } from '../agents/index.js';
import { LogService } from '../logs/index.js';
import { RunLedger, SqliteLedgerStore } from '../ledger/index.js';
import { loadGovernancePolicy, parseGovernancePolicy, POLICY_FILE, Sandbox } from '../governance/index.js';
import { defaultBackends, RunService, type BackendDriver } from '../runs/index.js';
import { OUTPUT_MEMORY_BUDGET } from './output-budgets.js';

/** The node's own copy of its runs, in its home (apart from `ledger.db`, which a daemon there owns). */
const NODE_LEDGER_FILE = 'node-ledger.db';
/** At close, how long the outbox may go on sending what is written (the rest goes at the next start). */
const OUTBOX_DRAIN_MS = 5_000;
/** Where a node's repository runs' worktrees go, and the clones it makes of repositories given by URL, in its home. */
const WORKTREES_FOLDER = 'worktrees';
const CLONES_FOLDER = 'repos';
/** How long a run branch's worktree folder is kept once no run uses it, unless the node is told otherwise. */
const DEFAULT_WORKTREE_IDLE_MS = 7 * 24 * 60 * 60 * 1000;
/** How long a stopping node waits for the last copies of its conversations to be written. */
const CONVERSATIONS_DRAIN_MS = 5_000;

export interface ClusterNodeOptions {
  home: string;
  nats: NatsOptions;
  name: string;
  labels?: readonly string[];
  /** Runs at once. */
  slots: number;
  /**
   * The git repositories a run may name (`--repo NAME=PATH|URL`), each the top folder of one, or a
   * URL the node clones into the home's `repos/`: a run of one works in a worktree of its own under
   * the home's `worktrees/`, which the policy's sandbox must hold.
   */
  repos?: ReadonlyMap<string, string>;
  /**
   * A run branch's worktree folder no run has used for this long is removed, its branch kept
   * (`--worktree-days`; default 7 days, 0: never): NodeWorkspaces.pruneIdle.
   */
  worktreeIdleMs?: number;
  /** Only these backends (default: every profile's; only those whose CLI is here are offered). */
  only?: readonly string[];
  /** The drivers instead of the profiles' (tests). */
  backends?: BackendDriver[];
  /** Point every CLI at this model from an isolated HOME per backend under `agentHome` (demos, offline use, tests), as `daemon` does. */
  agentHome?: string;
  modelUrl?: string;
  logger: Logger;
  /** The controller may open panes here (create_pane with `node`), in a folder the node's policy's sandbox holds (`switchboard node --panes`). */
  openPanes?: boolean;
  /** Gives up a start still waiting for a controller (SHUTTING_DOWN). */
  signal?: AbortSignal;
  /** Tests: RunNodeOptions.claimed and taken. */
  claimed?: (runId: string) => Promise<void>;
  taken?: (runId: string) => Promise<void>;
}

export interface StartedClusterNode {
  readonly node: RunNode;
  readonly service: RunService;
  readonly ledger: RunLedger;
  readonly outbox: EventOutbox;
  /** The node's panes: its terminal runs', which the controller lists, attaches to and types into. */
  readonly panes: PaneRegistry;
  /** Stops pulling, ends the runs going (`cancelled (shutdown)`), sends what it can of their events, leaves the cluster and disconnects. */
  close(): Promise<void>;
}

/** Starts a node: resolves once it pulls its runs (it waits for a controller to answer its join). */
export async function startClusterNode(options: ClusterNodeOptions): Promise<StartedClusterNode> {
  const { home, logger } = options;
  ensurePrivateDir(home);
  const file = path.join(home, POLICY_FILE);
  const policy = existsSync(file) ? loadGovernancePolicy({ file }) : parseGovernancePolicy({}, { origin: 'default' });
  // Checked before anything starts (a path that is no repository is the person's to fix), and a URL cloned.
  const workspaces = await NodeWorkspaces.open(options.repos ?? new Map(), { worktrees: path.join(home, WORKTREES_FOLDER), clones: path.join(home, CLONES_FOLDER) }, logger);
  // The node's panes (its terminal runs'), and the agent in each: an approval the node's policy
  // leaves to a person waits for one (answer_approval on the controller, or keys typed into the pane).
  // Its programs call no daemon back: a token this process was started with (inside a pane of a
  // daemon here) is not handed on to them.
  const panes = new PaneRegistry({ logger, baseEnv: withoutEndpointVariables(process.env) });
  const catalog = AgentCatalog.load();
  const agentPanes = new AgentPanes(panes, catalog);
  // Each pane's log (the dashboard's log button on the controller), and its share of the output
  // budget: a pane past its share stops reading its program, as on a daemon. Nothing spills to
  // disk here: the controller reads what memory holds, and no export reaches a node's disk yet.
  const logs = new LogService(panes, catalog, { agentPanes, memory: new MemoryBudget(OUTPUT_MEMORY_BUDGET.totalBytes, OUTPUT_MEMORY_BUDGET), logger });

  const connection: ClusterConnection = await connectCluster(options.nats, { name: `switchboard-node-${options.name}`, logger, inboxPrefix: nodeInboxPrefix(options.name) });
  let ledger: RunLedger | undefined;
  let service: RunService | undefined;
  let outbox: EventOutbox | undefined;
  let paneServer: NodePaneServer | undefined;
  let conversations: ConversationCarrier | undefined;
  try {
    const publisher = new EventPublisher({ nc: connection.nc, node: options.name, logger });
    const local = new SqliteLedgerStore(path.join(home, NODE_LEDGER_FILE));
    outbox = new EventOutbox({ source: local, outlet: publisher, logger });
    ledger = new RunLedger({ store: new OutboxLedgerStore(local, outbox), rawOutput: policy.rawOutput, logger });
    // What an earlier start of this node wrote and the stream may lack (its runs ended by recover() go out after it).
    await outbox.replay(Date.now() - EVENTS_MAX_AGE_MS);
    const { agentHome, modelUrl } = options;
    const sandbox = agentHome !== undefined && modelUrl !== undefined ? (backend: string) => ({ home: path.join(agentHome, backend), modelUrl }) : undefined;
    const backends = options.backends ?? defaultBackends({ logger, catalog, registry: panes, agentPanes, ...(options.only ? { only: options.only } : {}), ...(sandbox ? { sandbox } : {}) });
    const defaultCwd = policy.forBackend('').roots[0];
    // Its own scope: a daemon of the same home never touches the node's processes, nor the node the daemon's.
    // A repository run's changes are read, committed and pushed as asked once its agent is done, before its end.
    service = (await RunService.start({ ledger, policy, backends, scope: `${home}#node`, logger, beforeEnd: (spec, outcome, stopped) => workspaces.report(spec, outcome, stopped), ...(defaultCwd !== undefined ? { defaultCwd } : {}) })).service;
    // Before the lease: a controller that sees the node finds its panes answering.
    // Only when its person said so: a pane is a program the node's approval policy never judges.
    const folders = new Sandbox(policy.forBackend('').roots);
    const openPanes = options.openPanes === true ? { defaultCwd: folders.roots[0] ?? homedir(), checkFolder: (cwd: string) => folders.checkFolder(cwd) } : undefined;
    // Whoever may publish on the node's subject may open one: the NATS users say who that is.
    if (openPanes && options.nats.auth.kind === 'none') logger.warn('this node opens panes for whoever may publish on its subjects, and its NATS connection has no user: give the controller and each node a user of their own (cluster.md, Security)', { node: options.name });
    // Its runs' conversations kept on its shelf, for a resume on another host; a shelved one put in place for a resume here.
    conversations = new ConversationCarrier({
      shelf: await ConversationShelf.open(connection.nc, options.name),
      placeOf: (backend, cwd) => (sandbox ? { home: sandbox(backend).home, cwd } : { home: homedir(), cwd, claudeConfigDir: process.env.CLAUDE_CONFIG_DIR, codexHome: process.env.CODEX_HOME }),
      logger,
    });
    paneServer = new NodePaneServer({ nc: connection.nc, node: options.name, panes, agentPanes, logs: logs.logs, logger, ...(openPanes && { openPanes }) });
    const node = await RunNode.start({
      nc: connection.nc,
      service,
      ledger,
      name: options.name,
      labels: options.labels ?? [],
      slots: options.slots,
      logger,
      ...(options.signal !== undefined && { signal: options.signal }),
      ...(options.claimed !== undefined && { claimed: options.claimed }),
      ...(options.taken !== undefined && { taken: options.taken }),
      conversations,
      workspaces,
    });
    // Looked at now and every hour: what went is on its branch.
    const worktreeIdleMs = options.worktreeIdleMs ?? DEFAULT_WORKTREE_IDLE_MS;
    if (worktreeIdleMs > 0 && workspaces.names().length > 0) workspaces.keepPruned(worktreeIdleMs);
    const carrying = conversations;
    const serving = paneServer;
    const running = service;
    const opened = ledger;
    const sending = outbox;
    return {
      node,
      service: running,
      ledger: opened,
      outbox: sending,
      panes,
      async close() {
        await node.stop();
        await workspaces.dispose();
        serving.dispose();
        await running.dispose().catch((err: unknown) => logger.warn('the node\'s runs did not stop cleanly', { error: errorMessage(err) }));
        logs.dispose();
        agentPanes.dispose();
        await panes.close().catch((err: unknown) => logger.warn('the node\'s panes did not close cleanly', { error: errorMessage(err) }));
        // Every work item acknowledged before the connection goes.
        await node.idle();
        if (!(await sending.drained(OUTBOX_DRAIN_MS))) logger.warn('the node stops with events not sent yet: they go at its next start', { runs: sending.unsent });
        // The runs' ends are out: only now does the controller see the node leave.
        await node.leave();
        // The last copies of the runs just ended, before the connection goes.
        await carrying.drained(CONVERSATIONS_DRAIN_MS);
        carrying.dispose();
        sending.close();
        await opened.close().catch((err: unknown) => logger.warn('the node\'s ledger did not close cleanly', { error: errorMessage(err) }));
        await connection.close();
      },
    };
  } catch (err) {
    paneServer?.dispose();
    conversations?.dispose();
    outbox?.close();
    await service?.dispose().catch(() => undefined);
    await ledger?.close().catch(() => undefined);
    logs.dispose();
    agentPanes.dispose();
    await panes.close({ graceMs: 0 }).catch(() => undefined);
    await connection.close();
    throw err;
  }
}
