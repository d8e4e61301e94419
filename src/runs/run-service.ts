/**
 * The run service (seed 004's bridge, as one object the API layer calls): submit a run, see it,
 * list runs, cancel one, read or follow its events from any sequence number, and see the backends
 * with their capabilities and health. It is the supervisor too: it starts each backend's processes
 * on demand through its driver, holds runs in `queued` while the concurrency limits are full,
 * ends a run past its limits, and at start records the runs a service that died left in flight as
 * `failed (interrupted)` and ends the processes it left behind. The conversations kept open for
 * follow-ups are one pool over every backend (idle-conversations.ts), capped and counted here.
 */
import { randomBytes } from 'node:crypto';
import { realpathSync, statSync } from 'node:fs';
import type { Disposable } from '../core/disposable.js';
import { SwitchboardError, errorMessage } from '../core/errors.js';
import { silentLogger, type Logger } from '../core/logger.js';
import { SCHEMA_VERSIONS, type SchemaVersion } from '../output/stream-events.js';
import type { RunLedger, SubscribeOptions } from '../ledger/run-ledger.js';
import type { EventPage, PruneResult, RunQuery, RunRecord } from '../ledger/ledger-store.js';
import { AdmissionQueue } from '../governance/admission.js';
import { Governor } from '../governance/governor.js';
import type { CallerGovernance } from '../governance/caller-governance.js';
import type { GovernancePolicy } from '../governance/policy-file.js';
import { isEnded, step, type RunLimits, type RunMode, type RunSpec, type RunState, type RunStatus } from '../ledger/run-model.js';
import { agentSessionIn, doneEvent, stateEvent, type RunEvent } from '../ledger/run-events.js';
import type { BackendCapabilities, BackendDriver, BackendHealth, DriverEmission } from './backends/backend-driver.js';
import { LiveRun, type BeforeEnd } from './live-run.js';
import type { ClusterNodeView, RemoteRuns } from './remote-runs.js';
import { RemoteSubmissions } from './remote-submit.js';
import { IdleConversations, type IdleConversation } from './idle-conversations.js';
import { findProcessesWithEnv } from '../platform/index.js';
import { BRIDGE_MARKER_VARIABLE, bridgeMarkerValue, endOrphans, markerScope } from './process-marker.js';

export interface RunServiceOptions {
  ledger: RunLedger;
  policy: GovernancePolicy;
  /** The drivers, at most one per backend and mode. */
  backends: readonly BackendDriver[];
  /** The folder of a run that names none (the chat proxy's); it must be inside the sandbox. */
  defaultCwd?: string;
  /** Whose processes the markers name (default: the ledger's file); services of another scope are never touched. */
  scope?: string;
  /** Expands `~` in tool calls (default: the user's home). */
  home?: string;
  logger?: Logger;
  now?: () => number;
  /**
   * A cluster's nodes (a controller, issue 26): a run of a backend some node has goes to a node
   * instead of a driver here, and the runs sent to nodes are taken up again at start, not recorded
   * as interrupted (their nodes may still be running them).
   */
  remote?: RemoteRuns;
  /**
   * What a run records last, once its agent is done and before its end (LiveRunContext.beforeEnd):
   * a cluster node's report of what a repository run changed. Not for runs of a face.
   */
  beforeEnd?: BeforeEnd;
}

/** The nodes runs can go to: none and `cluster: false` on a service with no cluster. */
export interface ClusterNodesView {
  cluster: boolean;
  nodes: ClusterNodeView[];
}

/** Who made a run when no caller is named (the library, the owner's token). */
export const OWNER_CALLER = 'owner';

export interface SubmitRequest {
  /** Who makes it: OWNER_CALLER, or the pane whose token calls (it alone and the owner may cancel the run). Default: the owner. */
  caller?: string | undefined;
  backend: string;
  prompt: string;
  cwd?: string | undefined;
  /** `auto` (default): stdio where the backend has a structured driver, else PTY. */
  mode?: 'auto' | RunMode | undefined;
  /** The latest schema version the client speaks; the run speaks the highest both know. */
  schema_version?: string | undefined;
  /** Continue this earlier run's conversation. */
  parent?: string | undefined;
  /**
   * Keep the conversation (the agent CLI) open after the run for a follow-up naming it as `parent`
   * (default true); false ends the CLI with the run. Kept ones are capped by `limits.idle_conversations`.
   */
  keep_alive?: boolean | undefined;
  /** Tighter bounds than the policy's (a caller can lower a limit, never raise it). */
  limits?: RunLimits | undefined;
  /**
   * The run's id when another service chose it: a cluster node runs a controller's run under the
   * controller's id (CONFLICT if this ledger has it). Absent: a new one.
   */
  run_id?: string | undefined;
  /** The labels a cluster node must have to take the run (a controller's runs only). */
  labels?: readonly string[] | undefined;
  /** The cluster node to take the run (a controller's runs only): it must be live, with the backend, the labels and a free slot. */
  node?: string | undefined;
  /**
   * Resume this earlier run's agent conversation in a new CLI process, by the CLI's own resume (it
   * recorded the CLI's conversation id): a run that has ended, or a node run orphaned by its lost
   * node, which this ends (cancelled, resumed). The new run records it as its `parent`; a node run
   * is resumed on a node (`node`, or any that can take it).
   */
  resume?: string | undefined;
  /**
   * The CLI's own conversation id to resume (RunSpec.agent_session), given by a controller to its
   * node with the run; never taken from a surface (they name the run to resume, `resume`).
   */
  agent_session?: string | undefined;
  /**
   * A repository of the cluster's nodes the run works in (a controller's runs only): its node makes
   * a git worktree of it on a branch of the run's own, and `cwd` is a folder inside it (its top
   * unless given). A follow-up and a resume go on on their run's branch.
   */
  repo?: string | undefined;
  /** With `repo`: what the branch starts from (the node's HEAD of it unless given). */
  ref?: string | undefined;
  /** With `repo`: push the branch to the repository's origin after the run. */
  push?: boolean | undefined;
}

/**
 * A way into the run service other than the bridge's own `run_*`: one of the seed's older methods
 * (`run_agent`, `agent_execute`, `agent_session_*`), which names its own driver options (an isolated
 * HOME, the CLI's arguments, the task's approval policy) and governs its own tool calls. Its run is
 * recorded, limited, queued and cancelled as every run is.
 */
export interface RunFace {
  /** The method it came by (`run_agent`, `agent_execute`, `agent_session`): the run's recorded policy says so. */
  name: string;
  /**
   * The driver of the face's runs, built from the call's options. Without `conversation` it serves
   * this run alone and is disposed once the run has ended; with one, the face owns and disposes it.
   */
  driver: BackendDriver;
  /**
   * The face holds a conversation across its runs (agent_session_*: one per prompt): the idle pool
   * and its time limit do not apply, and the run records its predecessor as its `parent`. A limit
   * reached ends the turn by an interrupt, so the conversation outlives it.
   */
  conversation?: FaceConversation;
  /** The caller's governance instead of the policy file's (its admission is recorded as the run's). */
  governance: CallerGovernance;
  /** The run's id, once it is made and before anything of it runs. */
  opened?: (runId: string) => void;
  /** Each thing the driver reports, as it comes, before it is recorded (a session log files the entries). */
  observe?: (emission: DriverEmission) => void;
  /** Once the run's end is recorded: how it ended. */
  ended?: (state: RunState) => void;
}

/** A conversation a face keeps across its runs itself (see RunFace.conversation). */
interface FaceConversation {
  /** The conversation this run continues (its first run) and the run before this one, its recorded parent; absent: a new conversation. */
  continues?: { thread: string; parent: string } | undefined;
  /** Called once a run ended with the conversation still open: how to close it. Until then, or when never called, nothing is kept. */
  keep: (close: () => Promise<void>) => void;
}

/** A run as every surface shows it (in a list, `prompt` is a preview: see prompt_truncated). */
export interface RunView extends RunSpec {
  /** The whole prompt's size in UTF-8 bytes. */
  prompt_bytes: number;
  /** True when `prompt` is only its first KiB (lists); the run itself (get) has it whole. */
  prompt_truncated: boolean;
  status: RunStatus;
  reason: string | null;
  message: string;
  started_at: number | null;
  ended_at: number | null;
  /** The last event's number (a reader resumes after it). */
  last_seq: number;
  /** Where a queued run is in line (0: next): for a place, or for a slot on its node when every node was full; else null. */
  queue_position: number | null;
}

/** A page of runs, newest first, and the `before` of the next page (null: no more). */
export interface RunViewPage {
  runs: RunView[];
  next_before: number | null;
}

export interface BackendInfo {
  name: string;
  modes: RunMode[];
  default_mode: RunMode;
  capabilities: BackendCapabilities[];
  health: BackendHealth;
  /** Its conversations kept open for a follow-up now, and the processes they hold (Linux; elsewhere 0). */
  idle: IdleCount;
}

export interface IdleCount {
  conversations: number;
  processes: number;
}

/** The conversations kept open for follow-ups, over every backend: how many, their processes, the policy's bounds. */
export interface IdleConversationsView extends IdleCount {
  /** `limits.idle_conversations`: the most kept at once; past it the least recently used is closed. */
  max: number;
  /** `limits.idle_ms`: how long one stays open after its last run. */
  idle_ms: number;
  backends: Record<string, IdleCount>;
}

export interface RecoveryReport {
  interrupted: string[];
  processes: number;
}

/**
 * The most a page of runs or events holds, about, in bytes of JSON (at least one item, however
 * big): past it the page stops and says where to go on, whatever count was asked for.
 */
export const PAGE_BYTES = 4 * 1024 * 1024;
/** How often retention runs while the service does. */
const RETENTION_INTERVAL_MS = 60 * 60_000;
/** How long a backend's health is reused before it is checked again. */
const HEALTH_TTL_MS = 30_000;

/**
 * The schema version to speak, as ACP negotiates a protocol version: the client proposes the latest
 * it speaks, and the answer is that one if this side speaks it, else this side's latest below it.
 */
export function negotiateRunSchema(proposed: string | undefined, supported: readonly SchemaVersion[] = SCHEMA_VERSIONS): SchemaVersion {
  const latest = supported[supported.length - 1] ?? 'v2';
  if (proposed === undefined) return latest;
  const n = /^v(\d+)$/.exec(proposed);
  if (!n) throw new SwitchboardError('INVALID_PARAMS', `schema_version must look like v1 or v2, not ${JSON.stringify(proposed)}`, { schema_version: proposed, supported });
  const below = supported.filter((v) => Number(v.slice(1)) <= Number(n[1]));
  const pick = below[below.length - 1];
  if (!pick) throw new SwitchboardError('INVALID_PARAMS', `no common schema_version: the client speaks up to ${proposed}, this server ${supported.join(', ')}`, { schema_version: proposed, supported });
  return pick;
}

export class RunService {
  private readonly ledger: RunLedger;
  private readonly governor: Governor;
  private readonly logger: Logger;
  private readonly now: () => number;
  private readonly drivers = new Map<string, Map<RunMode, BackendDriver>>();
  private readonly live = new Map<string, LiveRun>();
  /** The faces of the runs that came by one, while they live. */
  private readonly faces = new Map<string, RunFace>();
  /** Each run's conversation (its first run's id), for follow-ups. */
  private readonly threads = new Map<string, { thread: string; mode: RunMode }>();
  private readonly admission: AdmissionQueue;
  /** Conversations kept for a follow-up, over every backend. */
  private readonly idle: IdleConversations;
  /** The conversation a follow-up took from the idle pool, until its driver has it (given back if it never does). */
  private readonly reserved = new Map<string, IdleConversation>();
  private readonly health = new Map<string, { at: number; value: Promise<BackendHealth> }>();
  private readonly scope: string;
  private readonly marker: string;
  private closing = false;
  private retentionTimer: NodeJS.Timeout | undefined;
  /** The runs this service sends to cluster nodes (a controller's), when it has a cluster. */
  private readonly remote: RemoteSubmissions | undefined;

  constructor(private readonly options: RunServiceOptions) {
    this.ledger = options.ledger;
    this.governor = new Governor(options.policy, options.home);
    this.logger = options.logger ?? silentLogger;
    this.now = options.now ?? Date.now;
    for (const d of options.backends) {
      let modes = this.drivers.get(d.name);
      if (!modes) this.drivers.set(d.name, (modes = new Map<RunMode, BackendDriver>()));
      modes.set(d.mode, d);
    }
    this.admission = new AdmissionQueue(options.policy.concurrency, (backend) => options.policy.forBackend(backend).concurrency);
    this.idle = new IdleConversations({ max: options.policy.idle.maxConversations, idleMs: options.policy.idle.idleMs, logger: this.logger });
    this.scope = markerScope(options.scope ?? 'default');
    this.marker = bridgeMarkerValue(this.scope);
    if (options.remote) {
      this.remote = new RemoteSubmissions({
        ledger: this.ledger,
        policy: options.policy,
        governor: this.governor,
        admission: this.admission,
        remote: options.remote,
        logger: this.logger,
        now: this.now,
        negotiate: (proposed) => this.negotiate(proposed),
        checkQueueCaps: (caller, prompt) => this.checkQueueCaps(caller, prompt),
        newRunId,
        tighter,
      });
    }
  }

  /** Creates the service and recovers what a service of the same scope left behind. */
  static async start(options: RunServiceOptions): Promise<{ service: RunService; recovered: RecoveryReport }> {
    const service = new RunService(options);
    const recovered = await service.recover();
    await service.applyRetention();
    return { service, recovered };
  }

  /**
   * Removes ended runs past the policy's retention (`ledger.retention`: age, size), and ended asks
   * and team runs past its age, now and then every hour while the service runs. Runs in flight are never removed.
   */
  async applyRetention(): Promise<PruneResult> {
    const rule = this.options.policy.retention;
    if (rule.maxAgeMs === undefined && rule.maxBytes === undefined) return { runs: 0, events: 0, bytes: 0, asks: 0, teamRuns: 0 };
    this.retentionTimer ??= setInterval(() => void this.applyRetention().catch((err: unknown) => this.logger.warn('retention failed', { error: errorMessage(err) })), RETENTION_INTERVAL_MS);
    this.retentionTimer.unref();
    const removed = await this.ledger.prune(rule, this.now());
    if (removed.runs > 0 || removed.asks > 0 || removed.teamRuns > 0) this.logger.info('removed runs, asks and team runs past the retention policy', { ...removed });
    return removed;
  }

  /**
   * Runs in flight in the ledger belonged to a service that is gone: each is recorded as
   * `failed (interrupted)`, every event before kept; processes it left behind are ended.
   */
  async recover(): Promise<RecoveryReport> {
    const orphans = await endOrphans(this.scope);
    const interrupted: string[] = [];
    for (const record of await this.ledger.unfinished()) {
      if (this.live.has(record.spec.id)) continue;
      this.ledger.resumeRun(record.spec.id, record.last_seq);
      // A run on a node lives on there: its events keep coming into the ledger, numbered by the node.
      if (record.spec.node !== undefined && this.remote) {
        this.remote.takeUp(record);
        continue;
      }
      const state = { status: record.status, since: record.spec.created_at, started_at: record.started_at ?? record.spec.created_at } as Parameters<typeof step>[0];
      const at = this.now();
      const message = 'the service running it stopped before it ended (a restart found it in flight)';
      const next = step(state, { type: 'fail', reason: 'interrupted', message }, at);
      this.ledger.append(record.spec.id, stateEvent(next.transition));
      this.ledger.append(record.spec.id, doneEvent(at, 'failed', 'interrupted', message));
      interrupted.push(record.spec.id);
    }
    await this.ledger.flush();
    if (interrupted.length > 0 || orphans.processes > 0) this.logger.info('recorded runs left in flight as interrupted', { runs: interrupted.length, processes: orphans.processes });
    return { interrupted, processes: orphans.processes };
  }

  /** The latest schema version both sides speak (see negotiateRunSchema). */
  negotiate(proposed: string | undefined): SchemaVersion {
    return negotiateRunSchema(proposed);
  }

  /**
   * Submits a run. Bad input is refused with INVALID_PARAMS and not recorded; a run governance
   * refuses (a folder outside the sandbox, a backend turned off) is recorded as `failed (policy)`
   * and refused with FORBIDDEN, naming the run and the rule. A run that comes by a face (RunFace)
   * runs on the face's driver under the face's governance; only a face that keeps a conversation
   * continues one (RunFace.conversation), never through a run's `parent`.
   */
  async submit(request: SubmitRequest, face?: RunFace): Promise<RunView> {
    if (this.closing) throw new SwitchboardError('SHUTTING_DOWN', 'the run service is shutting down');
    const remote = this.remote;
    if (face && request.resume !== undefined) throw new SwitchboardError('INVALID_PARAMS', `a run of ${face.name} does not resume another run`, { resume: request.resume });
    if (request.resume !== undefined && request.parent !== undefined) throw new SwitchboardError('INVALID_PARAMS', 'a run follows up an open conversation (parent) or resumes one (resume), not both', { parent: request.parent, resume: request.resume });
    const caller = request.caller ?? OWNER_CALLER;
    const resuming = request.resume !== undefined ? await this.resumable(request.resume, request.backend, caller) : undefined;
    // A follow-up goes where its conversation is: to the node that ran its parent, or here.
    const parentRecord = !face && remote && request.parent !== undefined ? await this.ledger.run(request.parent) : undefined;
    if (!face && remote && request.parent !== undefined && !parentRecord) throw new SwitchboardError('RUN_NOT_FOUND', `no run ${request.parent} to follow up`, { run_id: request.parent });
    const toNode = resuming ? resuming.record.spec.node !== undefined : parentRecord ? parentRecord.spec.node !== undefined : remote?.offers(request.backend) === true;
    if (!face && remote && toNode) {
      // Checked in the same turn of the event loop as the node run takes the conversation (remote.submit reserves it before its first await).
      if (resuming) this.checkConversationFree(resuming.agentSession);
      // A repository run's folder is inside its worktree, never this machine's default.
      const cwd = request.cwd ?? resuming?.record.spec.cwd ?? parentRecord?.spec.cwd ?? (request.repo !== undefined ? undefined : this.options.defaultCwd);
      const id = await remote.submit({ caller, backend: request.backend, prompt: request.prompt, cwd, mode: resuming ? 'stdio' : request.mode, schema_version: request.schema_version, parent: parentRecord, keep_alive: request.keep_alive, limits: request.limits, labels: request.labels, node: request.node, resume: resuming, repo: request.repo, ref: request.ref, push: request.push });
      return this.view(id);
    }
    if (request.labels !== undefined && request.labels.length > 0) throw new SwitchboardError('INVALID_PARAMS', `labels choose a cluster node, and no node has ${request.backend}`, { backend: request.backend });
    if (request.node !== undefined) throw new SwitchboardError('INVALID_PARAMS', `node ${request.node} is a cluster node's name, and no node ${resuming ? 'ran the run to resume' : `has ${request.backend}`}`, { node: request.node });
    if (request.repo !== undefined || request.ref !== undefined || request.push !== undefined) throw new SwitchboardError('INVALID_PARAMS', `repo, ref and push choose a repository of a cluster node's, and no node has ${request.backend}`, { backend: request.backend });
    const modes = face ? new Map([[face.driver.mode, face.driver]]) : this.drivers.get(request.backend);
    // A face names what its run continues itself (FaceConversation), never by a request's parent.
    if (face && request.parent !== undefined) throw new SwitchboardError('INVALID_PARAMS', `a run of ${face.name} is not followed up by parent`, { parent: request.parent });
    const continues = face?.conversation?.continues;
    if (!modes) throw new SwitchboardError('INVALID_PARAMS', `unknown backend ${JSON.stringify(request.backend)}; there are ${[...this.drivers.keys(), ...(this.options.remote?.backendNames() ?? [])].join(', ')}`, { backend: request.backend });
    const id = request.run_id ?? newRunId();
    if (request.run_id !== undefined && (this.live.has(id) || (await this.ledger.run(id)) !== undefined)) throw new SwitchboardError('CONFLICT', `run ${id} is in this ledger already`, { run_id: id });
    if (request.prompt.trim() === '') throw new SwitchboardError('INVALID_PARAMS', 'the prompt is empty');
    const schema = this.negotiate(request.schema_version);
    let parent: { thread: string; mode: RunMode } | undefined;
    let cwd = request.cwd;
    let parentNotKept = false;
    if (face && continues) {
      // The face keeps its conversation itself (not in the idle pool) and runs one turn at a time.
      parent = { thread: continues.thread, mode: face.driver.mode };
    } else if (request.parent !== undefined) {
      const record = await this.ledger.run(request.parent);
      if (!record) throw new SwitchboardError('RUN_NOT_FOUND', `no run ${request.parent} to follow up`, { run_id: request.parent });
      if (record.spec.backend !== request.backend) throw new SwitchboardError('INVALID_PARAMS', `run ${request.parent} ran on ${record.spec.backend}: a follow-up goes to the same backend`, { parent: request.parent });
      if (!isEnded(record.status)) throw new SwitchboardError('INVALID_REQUEST', `run ${request.parent} is still ${record.status}: follow it up once it has ended`, { parent: request.parent });
      parent = this.threads.get(request.parent);
      if (!parent) throw new SwitchboardError('INVALID_PARAMS', `the conversation of run ${request.parent} is no longer open: start a new run`, { parent: request.parent });
      parentNotKept = record.spec.keep_alive === false;
      cwd ??= record.spec.cwd;
    } else if (resuming) {
      cwd ??= resuming.record.spec.cwd;
    }
    // One CLI process per conversation: a resume of a run whose conversation is still open here
    // closes that first (its next prompt would have been a follow-up; the caller chose a new process).
    const resumedThread = request.resume !== undefined ? this.threads.get(request.resume)?.thread : undefined;
    if (resumedThread !== undefined && this.idle.has(resumedThread)) await this.idle.closeNow(resumedThread, 'resumed');
    cwd ??= this.options.defaultCwd;
    // The CLI's conversation to resume: the run's named here, or the one its controller sent.
    const agentSession = resuming?.agentSession ?? request.agent_session;
    if (cwd === undefined) throw new SwitchboardError('INVALID_PARAMS', 'cwd is required: the folder the agent works in');
    if (!isDirectory(cwd)) throw new SwitchboardError('INVALID_PARAMS', `cwd is not a folder: ${cwd}`, { cwd });
    // A resumed conversation is the structured driver's, whatever was asked.
    const mode: RunMode = parent?.mode ?? (agentSession !== undefined ? 'stdio' : request.mode === undefined || request.mode === 'auto' ? (modes.has('stdio') ? 'stdio' : 'pty') : request.mode);
    const driver = modes.get(mode);
    if (!driver) throw new SwitchboardError('INVALID_PARAMS', `${request.backend} has no ${mode} driver (it has ${[...modes.keys()].join(', ')})`, { backend: request.backend, mode });
    if (agentSession !== undefined && driver.capabilities().resumes !== true) throw new SwitchboardError('INVALID_PARAMS', `${request.backend} in ${mode} mode cannot resume a conversation of its CLI: start a new run`, { backend: request.backend, mode });
    if (parent && !driver.capabilities().followUps) throw new SwitchboardError('INVALID_PARAMS', `${request.backend} has no conversation to follow up: start a new run`, { backend: request.backend, parent: request.parent });
    const parentThread = parent?.thread;
    if (parentThread !== undefined && [...this.live.values()].some((r) => this.threads.get(r.spec.id)?.thread === parentThread)) throw new SwitchboardError('INVALID_REQUEST', `the conversation of run ${request.parent ?? ''} is busy with another run: follow it up once that has ended`, { parent: request.parent });
    if (parent && !face && !this.idle.has(parent.thread)) throw this.notOpen(request.parent ?? parent.thread, parentNotKept);
    if (!SCHEMA_VERSIONS.includes(schema) || !driver.capabilities().schemaVersions.includes(schema)) throw new SwitchboardError('INVALID_PARAMS', `${request.backend} does not speak schema ${schema}`);
    // Every policy has rules (the sandbox, the blocklist) that must be applied before the act; a
    // driver that cannot ask could only be judged afterwards, which is no policy at all.
    if (!face && !driver.capabilities().permissionRequests) throw new SwitchboardError('FORBIDDEN', `${request.backend} in ${mode} mode cannot ask before it acts, so governance cannot enforce its policy; refused (use a mode that asks)`, { backend: request.backend, mode, rule: 'capabilities.permission_requests' });

    if (agentSession !== undefined) this.checkConversationFree(agentSession);
    if (!this.admission.hasRoom(request.backend)) this.checkQueueCaps(caller, request.prompt);
    const backendPolicy = this.governor.backend(request.backend);
    const spec: RunSpec = {
      id,
      backend: request.backend,
      mode,
      prompt: request.prompt,
      cwd,
      // Kept now and checked again at start: a queued run starts here or not at all.
      real_cwd: realPathOf(cwd),
      created_by: caller,
      policy: face ? `${face.name} (the caller's own rules)` : `${this.options.policy.origin}${backendPolicy.source.limits.startsWith('backends.') || backendPolicy.source.approvals.startsWith('backends.') || backendPolicy.source.sandbox.startsWith('backends.') ? ` (backends.${request.backend})` : ''}`,
      ...(face ? {} : { policy_hash: this.options.policy.hash }),
      limits: tighter(backendPolicy.limits, request.limits),
      schema_version: schema,
      parent: continues?.parent ?? request.parent ?? request.resume ?? null,
      ...(agentSession !== undefined ? { agent_session: agentSession } : {}),
      // A face's run is continued only where the face keeps the conversation; else its driver is closed with it.
      keep_alive: face ? face.conversation !== undefined : (request.keep_alive ?? true) && driver.capabilities().followUps,
      created_at: this.now(),
    };
    const admit = face ? face.governance.admission() : this.governor.admit(request.backend, cwd);
    const run = new LiveRun(spec, { ledger: this.ledger, governor: face?.governance ?? this.governor, logger: this.logger, now: this.now, ...(face?.observe ? { observe: face.observe } : {}), ...(face?.conversation ? { stopBy: 'interrupt' as const } : {}), ...(!face && this.options.beforeEnd ? { beforeEnd: this.options.beforeEnd } : {}) }, (r) => this.onEnded(r));
    this.live.set(spec.id, run);
    if (face) {
      this.faces.set(spec.id, face);
      face.opened?.(spec.id);
    }
    run.open({ subject: { run: 'admission', backend: spec.backend, cwd }, decision: admit.decision === 'allow' ? 'allow' : 'deny', rule: admit.rule, reason: admit.reason, by: 'policy' });
    if (admit.decision !== 'allow') {
      await run.end({ type: 'fail', reason: 'policy', message: admit.reason });
      throw new SwitchboardError('FORBIDDEN', `refused by the policy: ${admit.reason}`, { run_id: spec.id, rule: admit.rule });
    }
    const thread = parent?.thread ?? spec.id;
    // A face's conversation is the face's to keep: nothing to remember of it here.
    if (!face) this.threads.set(spec.id, { thread, mode });
    if (parent && !face) {
      // Out of the idle pool from now on: neither the cap nor the idle time closes it under a run waiting for it.
      const taken = this.idle.take(thread);
      if (!taken) {
        await run.end({ type: 'fail', reason: 'policy', message: 'the conversation closed before the follow-up could take it' });
        throw this.notOpen(request.parent ?? thread, false);
      }
      this.reserved.set(spec.id, taken);
    }
    const keepIdle = face?.conversation ? face.conversation.keep : spec.keep_alive === true ? (close: () => Promise<void>): void => this.idle.park({ backend: spec.backend, thread, close }) : undefined;
    const env = { [BRIDGE_MARKER_VARIABLE]: this.marker, SWITCHBOARD_BRIDGE_RUN: thread };
    this.admission.request(spec.id, spec.backend, () => {
      if (run.start(driver, thread, parent !== undefined, env, keepIdle)) this.reserved.delete(spec.id);
    });
    if (run.state.status === 'queued') {
      const stats = this.admission.stats();
      run.record({ type: 'decision', ts: this.now(), data: { subject: { run: 'concurrency', backend: spec.backend }, decision: 'queue', rule: 'limits.concurrency', reason: `${stats.running} runs are running (limit ${this.options.policy.concurrency}${backendPolicy.concurrency !== null ? `, ${backendPolicy.concurrency} on ${spec.backend}` : ''}); waiting in line`, by: 'policy' }, compat: { text: 'queued', status: 'queue', is_error: false } });
    }
    return this.view(spec.id);
  }

  /** A run by id: RUN_NOT_FOUND when the ledger has none. */
  async get(runId: string): Promise<RunView> {
    return this.view(runId);
  }

  /** A page of runs, newest first, prompts as previews; at most `limit` runs and about PAGE_BYTES. */
  async list(query: RunQuery = {}): Promise<RunViewPage> {
    const page = await this.ledger.runs({ ...query, maxBytes: Math.min(query.maxBytes ?? PAGE_BYTES, PAGE_BYTES) });
    return { runs: page.runs.map((r) => this.toView(r)), next_before: page.next_before };
  }

  /**
   * Cancels a run: a queued one at once, a running one once its processes are gone. An ended run is
   * left as it is. Only its maker (`caller`, as at submit) or the owner may: anyone else FORBIDDEN.
   * An orphaned run (its cluster node was lost) is ended here, `cancelled`, without waiting for the node:
   * that is the person's choice the status waits for.
   */
  async cancel(runId: string, caller: string = OWNER_CALLER): Promise<RunView> {
    const view = await this.view(runId);
    this.checkMaker(runId, view, caller);
    const run = this.live.get(runId);
    if (run) await run.end({ type: 'cancel', reason: 'cancelled_by_user', message: 'cancelled by the caller' }, 'cancel');
    else if (view.node !== undefined && !isEnded(view.status) && this.remote) await this.remote.cancel(view, view);
    return this.view(runId);
  }

  /**
   * Ends a live run `failed (policy)` with `message`: what a cluster node does when the controller's
   * policy, judging the run's decisions again, denies one this service's policy allowed.
   * RUN_NOT_FOUND when no such run is live here.
   */
  async failForPolicy(runId: string, message: string): Promise<RunView> {
    const run = this.live.get(runId);
    if (!run) throw new SwitchboardError('RUN_NOT_FOUND', `no live run ${runId}`, { run_id: runId });
    await run.end({ type: 'fail', reason: 'policy', message }, 'cancel');
    return this.view(runId);
  }

  /**
   * Ends a run's turn but not its conversation, where its driver can (agent_session_cancel: the CLI
   * stops what it does and waits for the next prompt); else it is a cancel. The run is recorded
   * `cancelled` either way. Only its maker or the owner may, as for cancel. A cluster node's run is
   * interrupted on its node, which keeps the conversation for a follow-up there.
   */
  async interrupt(runId: string, caller: string = OWNER_CALLER): Promise<RunView> {
    const view = await this.view(runId);
    this.checkMaker(runId, view, caller, 'interrupt');
    const run = this.live.get(runId);
    if (run) await run.end({ type: 'cancel', reason: 'cancelled_by_user', message: 'the turn was interrupted by the caller' }, 'interrupt');
    else if (view.node !== undefined && !isEnded(view.status) && this.remote) await this.remote.cancel(view, view, 'interrupt');
    return this.view(runId);
  }

  /**
   * A run's recorded events after `afterSeq`: at most `limit` and about PAGE_BYTES, and the `after`
   * of the next page (null once the page reaches the last event recorded).
   */
  async events(runId: string, afterSeq = 0, limit = 1_000): Promise<EventPage> {
    await this.view(runId);
    const events = await this.ledger.events(runId, afterSeq, limit, PAGE_BYTES);
    const last = events.at(-1)?.seq ?? afterSeq;
    // Read after the page: an event recorded meanwhile is past it, and the next page has it.
    const recorded = (await this.ledger.run(runId))?.last_seq ?? last;
    return { events, next_after: last < recorded ? last : null };
  }

  /** Follows a run from `afterSeq`: recorded events, then live ones, ending after `done` (RUN_NOT_FOUND first if there is no such run). */
  async subscribe(runId: string, afterSeq: number, listener: (event: RunEvent) => void, options: SubscribeOptions = {}): Promise<Disposable> {
    await this.view(runId);
    return this.ledger.subscribe(runId, afterSeq, listener, options);
  }

  /** Every backend: its modes, capabilities and health (binary, version, how well its screens are known, the model). */
  async backends(): Promise<BackendInfo[]> {
    return Promise.all(
      [...this.drivers.entries()].map(async ([name, modes]) => {
        const drivers = [...modes.values()];
        const primary = modes.get('stdio') ?? drivers[0];
        if (!primary) throw new SwitchboardError('INTERNAL_ERROR', `backend ${name} has no driver`);
        const idle = this.idleConversations().backends[name] ?? { conversations: 0, processes: 0 };
        return { name, modes: [...modes.keys()], default_mode: primary.mode, capabilities: drivers.map((d) => d.capabilities()), health: await this.healthOf(primary), idle };
      }),
    );
  }

  /**
   * The conversations kept open for follow-ups now, over every backend and per backend, with the
   * processes they hold: every process of a run carries its conversation's id (SWITCHBOARD_BRIDGE_RUN),
   * so the count is of what is really running, children included (Linux; elsewhere 0).
   */
  idleConversations(): IdleConversationsView {
    const kept = this.idle.list();
    const processes = new Map<string, number>();
    if (kept.length > 0) {
      const threads = new Set(kept.map((k) => k.thread));
      for (const p of findProcessesWithEnv('SWITCHBOARD_BRIDGE_RUN')) if (threads.has(p.value)) processes.set(p.value, (processes.get(p.value) ?? 0) + 1);
    }
    const backends: Record<string, IdleCount> = {};
    let total = 0;
    for (const k of kept) {
      const count = (backends[k.backend] ??= { conversations: 0, processes: 0 });
      const n = processes.get(k.thread) ?? 0;
      count.conversations++;
      count.processes += n;
      total += n;
    }
    return { conversations: kept.length, processes: total, max: this.idle.max, idle_ms: this.idle.idleMs, backends };
  }

  /** Resolves once every idle conversation the pool began to close is closed. */
  idleSettled(): Promise<void> {
    return this.idle.settled();
  }

  /** The cluster's live nodes where this service is a controller (`cluster: false` and none elsewhere). */
  nodes(): ClusterNodesView {
    const remote = this.options.remote;
    return { cluster: remote !== undefined, nodes: remote?.nodes() ?? [] };
  }

  /** Backend names, for validating a request before anything runs. */
  backendNames(): string[] {
    return [...this.drivers.keys()];
  }

  /** Ends every run (`cancelled (shutdown)`), every driver's processes, and writes the ledger out. The ledger stays open (its owner closes it). */
  async dispose(): Promise<void> {
    this.closing = true;
    clearInterval(this.retentionTimer);
    this.remote?.dispose();
    await Promise.all([...this.live.values()].map((r) => r.end({ type: 'cancel', reason: 'shutdown', message: 'the run service shut down' }, 'cancel')));
    await this.idle.closeAll();
    for (const modes of this.drivers.values()) for (const d of modes.values()) await d.dispose().catch((err: unknown) => this.logger.warn('a driver did not close cleanly', { backend: d.name, error: errorMessage(err) }));
    await this.ledger.flush();
  }

  private onEnded(run: LiveRun): void {
    this.live.delete(run.spec.id);
    const face = this.faces.get(run.spec.id);
    this.faces.delete(run.spec.id);
    if (face) {
      face.ended?.(run.state);
      // A face that keeps a conversation owns its driver across runs.
      if (!face.conversation)
        void face.driver.dispose().catch((err: unknown) => this.logger.warn('a run\'s own driver did not close cleanly', { run_id: run.spec.id, error: errorMessage(err) }));
    }
    // A follow-up that ended before its driver took the conversation (cancelled while queued) gives it back.
    const reserved = this.reserved.get(run.spec.id);
    this.reserved.delete(run.spec.id);
    if (reserved) this.idle.park(reserved);
    // Its place (or its spot in line) goes to the next run waiting.
    this.admission.release(run.spec.id);
  }

  /** FORBIDDEN unless `caller` made the run or is the owner. */
  private checkMaker(runId: string, view: RunView, caller: string, act: 'cancel' | 'interrupt' | 'resume' = 'cancel'): void {
    const maker = view.created_by ?? OWNER_CALLER;
    if (caller === OWNER_CALLER || caller === maker) return;
    const whose = maker === OWNER_CALLER ? 'the owner' : `pane ${maker}`;
    throw new SwitchboardError('FORBIDDEN', `forbidden: run ${runId} was made by ${whose}; only the caller that made a run, or the owner, may ${act} it (the token of pane ${caller} did not)`, { run_id: runId, created_by: maker });
  }

  /**
   * The run `runId` to resume on `backend`, and its CLI's conversation id: RUN_NOT_FOUND when there
   * is no such run, INVALID_REQUEST while it is still going, INVALID_PARAMS when it ran on another
   * backend or never recorded a conversation of its CLI (a PTY run, a CLI that never said its id).
   */
  private async resumable(runId: string, backend: string, caller: string): Promise<{ record: RunRecord; agentSession: string }> {
    const record = await this.ledger.run(runId);
    if (!record) throw new SwitchboardError('RUN_NOT_FOUND', `no run ${runId} to resume`, { run_id: runId });
    // A resume hands the conversation, all its context, to the new run's maker (and ends an orphan): as a cancel, only the run's maker or the owner.
    this.checkMaker(runId, this.toView(record), caller, 'resume');
    if (record.spec.backend !== backend) throw new SwitchboardError('INVALID_PARAMS', `run ${runId} ran on ${record.spec.backend}: a resume goes to the same backend`, { resume: runId, backend: record.spec.backend });
    if (!isEnded(record.status) && record.status !== 'orphaned') throw new SwitchboardError('INVALID_REQUEST', `run ${runId} is still ${record.status}: resume it once it has ended (or its node was lost)`, { resume: runId, status: record.status });
    if (record.status === 'orphaned' && !this.remote) throw new SwitchboardError('INVALID_REQUEST', `run ${runId} is orphaned on node ${record.spec.node ?? '?'}: resume it from a controller of its cluster`, { resume: runId });
    let agentSession: string | undefined;
    for (let after = 0; ; ) {
      const page = await this.ledger.events(runId, after, 1_000);
      for (const event of page) agentSession = agentSessionIn(event) ?? agentSession;
      const last = page.at(-1);
      if (!last) break;
      after = last.seq;
    }
    if (agentSession === undefined) throw new SwitchboardError('INVALID_PARAMS', `run ${runId} recorded no conversation of its CLI to resume (${record.spec.mode === 'pty' ? 'it ran in a terminal' : 'the CLI never said its id'}): start a new run`, { resume: runId });
    return { record, agentSession };
  }

  /**
   * INVALID_REQUEST when a run going here or on a node (sent, not ended) has the CLI's conversation
   * `agentSession` already: two CLI processes on one conversation would fork or corrupt it.
   */
  private checkConversationFree(agentSession: string): void {
    const busy = [...this.live.values()].find((r) => r.spec.agent_session === agentSession)?.spec.id ?? this.remote?.resuming(agentSession);
    if (busy !== undefined) throw new SwitchboardError('INVALID_REQUEST', `the conversation ${agentSession} is busy with run ${busy}: resume it once that has ended`, { agent_session: agentSession, run_id: busy });
  }

  /** INVALID_PARAMS for a follow-up of a run whose conversation is closed, saying why it may be. */
  private notOpen(parent: string, notKept: boolean): SwitchboardError {
    const why = notKept
      ? 'it was submitted with keep_alive: false, so its CLI ended with it'
      : `conversations are kept ${this.idle.idleMs} ms after their last run, ${this.idle.max} at most over every backend (limits.idle_ms, limits.idle_conversations in the policy), or it ended with a cancel or a failure`;
    return new SwitchboardError('INVALID_PARAMS', `the conversation of run ${parent} is no longer open (${why}): start a new run`, { parent });
  }

  private healthOf(driver: BackendDriver): Promise<BackendHealth> {
    const key = `${driver.name}/${driver.mode}`;
    const cached = this.health.get(key);
    if (cached && this.now() - cached.at < HEALTH_TTL_MS) return cached.value;
    const value = driver.health().catch((err: unknown): BackendHealth => ({ ok: false, binary: null, version: null, version_support: null, model_reachable: null, problem: errorMessage(err) }));
    this.health.set(key, { at: this.now(), value });
    return value;
  }

  private async view(runId: string): Promise<RunView> {
    const record = await this.ledger.run(runId);
    if (!record) throw new SwitchboardError('RUN_NOT_FOUND', `no run ${runId}`, { run_id: runId });
    return this.toView(record);
  }

  /**
   * Throws LIMIT_EXCEEDED when one more waiting run of `caller` with `prompt` would pass the
   * policy's queue caps: runs waiting per caller (the owner has a higher cap of its own) and bytes
   * of prompt every waiting run holds (they stay in memory until they start).
   */
  private checkQueueCaps(caller: string, prompt: string): void {
    const caps = this.options.policy.queue;
    let mine = 0;
    let bytes = Buffer.byteLength(prompt);
    for (const run of this.live.values()) {
      if (run.state.status !== 'queued') continue;
      if ((run.spec.created_by ?? OWNER_CALLER) === caller) mine++;
      bytes += run.promptBytes;
    }
    for (const run of this.remote?.queued() ?? []) {
      if (run.caller === caller) mine++;
      bytes += run.promptBytes;
    }
    const cap = caller === OWNER_CALLER ? caps.maxPerOwner : caps.maxPerCaller;
    const who = caller === OWNER_CALLER ? 'the owner' : `pane ${caller}`;
    if (mine >= cap) throw new SwitchboardError('LIMIT_EXCEEDED', `the run queue is full for ${who}: ${mine} of its runs already wait for a place (at most ${cap}: queue.${caller === OWNER_CALLER ? 'max_per_owner' : 'max_per_caller'} in the policy); submit again once some have started`, { queued: mine, limit: cap });
    if (bytes > caps.maxPromptBytes) throw new SwitchboardError('LIMIT_EXCEEDED', `the run queue would hold ${bytes} bytes of prompt (at most ${caps.maxPromptBytes}: queue.max_prompt_bytes in the policy); submit again once some runs have started`, { bytes, limit: caps.maxPromptBytes });
  }

  private toView(r: RunRecord): RunView {
    // In the admission queue, or (a node run every node was full for) in its node's line for a slot.
    const position = r.status !== 'queued' ? -1 : Math.max(this.admission.position(r.spec.id), this.remote?.slotLinePosition(r.spec.id) ?? -1);
    return { ...r.spec, prompt_bytes: r.prompt_bytes, prompt_truncated: r.prompt_truncated, status: r.status, reason: r.reason, message: r.message, started_at: r.started_at, ended_at: r.ended_at, last_seq: r.last_seq, queue_position: position >= 0 ? position : null };
  }
}

function newRunId(): string {
  return `run_${randomBytes(8).toString('hex')}`;
}

/** The folder's real path now (INVALID_PARAMS if it went away since it was checked). */
function realPathOf(dir: string): string {
  try {
    return realpathSync.native(dir);
  } catch (err) {
    throw new SwitchboardError('INVALID_PARAMS', `cwd cannot be resolved: ${dir}: ${errorMessage(err)}`, { cwd: dir }, { cause: err });
  }
}

function isDirectory(dir: string): boolean {
  try {
    return statSync(dir).isDirectory();
  } catch {
    return false;
  }
}

/** The policy's limits, lowered (never raised) by the caller's. */
function tighter(policy: Required<RunLimits>, asked: RunLimits | undefined): RunLimits {
  const out: RunLimits = { ...policy };
  for (const key of Object.keys(policy) as (keyof RunLimits)[]) {
    const value = asked?.[key];
    if (value !== undefined) out[key] = Math.min(value, policy[key]);
  }
  return out;
}
