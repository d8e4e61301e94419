/**
 * A controller's runs on cluster nodes (issue 26), as the run service submits and governs them.
 * The node judges a run by its own policy (its folders, its tool calls); what this side can judge
 * it judges first: the backend turned on by the controller's policy, the caller's queue caps, and
 * the concurrency limits, which hold over the whole cluster because every node run takes a place
 * in the service's one admission queue from submit until its `done` comes in. A run waiting for a
 * place waits here, `queued`, and is sent to its node once it has one. So does a run for which
 * every node that could take it is full: it waits in its node's line (slot-lines.ts) for a slot
 * there, then for its place. A run that may go to any node moves, before it is sent, to another
 * node that has a slot for it first, or whose line it can wait in when its own node is lost (the
 * ledger records the move: RunMove). Every run records the hash
 * of the controller's policy, and every tool call its node allowed is judged again by the
 * controller's approval rules: one they deny stops the run, `failed (policy)`. The controller writes no event of a node's run (the node numbers
 * them) except the end of one no node started.
 */
import path from 'node:path';
import type { Disposable } from '../core/disposable.js';
import { SwitchboardError, errorMessage } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import type { AdmissionQueue } from '../governance/admission.js';
import type { Governor } from '../governance/governor.js';
import type { GovernancePolicy } from '../governance/policy-file.js';
import type { RunRecord } from '../ledger/ledger-store.js';
import type { RunLedger } from '../ledger/run-ledger.js';
import { initialState, isEnded, repoBranchOf, RUN_STATUSES, step, type EndStatus, type RunInput, type RunLimits, type RunMode, type RunRepo, type RunSpec, type RunState, type RunStatus } from '../ledger/run-model.js';
import { doneEvent, stateEvent, type RunEvent } from '../ledger/run-events.js';
import type { SchemaVersion } from '../output/stream-events.js';
import { admittedFolder, recheckDecision } from './policy-recheck.js';
import type { RemoteRuns, RunPlace, StopHow } from './remote-runs.js';
import { SlotLines } from './slot-lines.js';
import { carriesBackend } from './conversation-files.js';

/** What a node run needs of the run service that submits it. */
export interface RemoteSubmitContext {
  ledger: RunLedger;
  policy: GovernancePolicy;
  governor: Governor;
  /** The service's one admission queue: a node run holds a place in it as a local run does. */
  admission: AdmissionQueue;
  remote: RemoteRuns;
  logger: Logger;
  now: () => number;
  negotiate(proposed: string | undefined): SchemaVersion;
  /** LIMIT_EXCEEDED when one more waiting run of `caller` would pass the policy's queue caps. */
  checkQueueCaps(caller: string, prompt: string): void;
  newRunId(): string;
  tighter(policy: Required<RunLimits>, asked: RunLimits | undefined): RunLimits;
}

/** What a node run asks for (the run service's SubmitRequest, as far as a node run uses it). */
export interface RemoteSubmitRequest {
  caller: string;
  backend: string;
  prompt: string;
  cwd: string | undefined;
  mode: 'auto' | RunMode | undefined;
  schema_version: string | undefined;
  /** The node run this one follows up in its open conversation, on its node. */
  parent: RunRecord | undefined;
  /** Its conversation stays open on its node after it, for a follow-up (default true). */
  keep_alive: boolean | undefined;
  limits: RunLimits | undefined;
  labels: readonly string[] | undefined;
  /** The node to take it, by name (else the least loaded that can). */
  node: string | undefined;
  /** The node run whose CLI conversation this run resumes, and that conversation's id (checked by the run service). */
  resume: { record: RunRecord; agentSession: string } | undefined;
  /** A repository of the nodes' to run in, on a branch of the run's own (`cwd` is then a folder inside its worktree). */
  repo: string | undefined;
  /** With `repo`: what the branch starts from (the node's HEAD of it unless given). */
  ref: string | undefined;
  /** With `repo` (or a follow-up's or resume's): push the branch to the repository's origin after the run. */
  push: boolean | undefined;
}

/** A node run in flight: it holds its place until its `done` is in the ledger. */
interface InFlight {
  caller: string;
  promptBytes: number;
  following: Disposable | undefined;
  /** Its node. */
  node: string | undefined;
  /** Sent to its node (not waiting here for a place): it takes one of the node's slots until it ends or is orphaned. */
  sent: boolean;
  /** Let out of its node's line: the slot it waited for is its own while it waits for its place. */
  slotted: boolean;
  /** The CLI's conversation it resumes (RunSpec.agent_session). */
  agentSession: string | undefined;
  /** Its spec as it stands: `node` changes when it moves. */
  spec: RunSpec;
  /** How this service placed it; undefined for a run taken up at a restart (it stays where the ledger says). */
  placement: Placement | undefined;
}

/** What a run submitted here needs of a node, and whether it may go to another than the one chosen first. */
interface Placement {
  needs: Needs;
  mode: 'auto' | RunMode;
  /** It goes to the node named (a follow-up's parent's, or the caller's), or to none. */
  pinned: boolean;
  /** A resume kept to its own node while that is live (resumeKeptAt); free to go elsewhere once it is gone. */
  keptAt: string | undefined;
}

export class RemoteSubmissions {
  private readonly inFlight = new Map<string, InFlight>();
  /** Runs between their node's choice and their hold: their slot and conversation are taken already. */
  private readonly reserved = new Map<string, { node: string; agentSession: string | undefined }>();
  /** Runs waiting for a slot on their node, every node that could take them having been full. */
  private readonly lines = new SlotLines();
  private readonly watchingNodes: Disposable;

  constructor(private readonly context: RemoteSubmitContext) {
    this.watchingNodes = context.remote.onNodesChanged(() => this.advanceLines());
    context.remote.trackPlaces((runId) => this.placeOf(runId));
  }

  /** True when a live node has `backend`: a run of it goes to the cluster. */
  offers(backend: string): boolean {
    return this.context.remote.offers(backend);
  }

  /**
   * Checks, records and sends (or queues) a run for a node: its id. INVALID_PARAMS for what the
   * controller can tell is wrong, FORBIDDEN (recorded `failed (policy)`) for a backend its policy
   * turns off, LIMIT_EXCEEDED when no live node has the backend and the labels or the caller's
   * queue is full; a run that could not be sent is recorded failed, unless a node has it after all.
   * When every node that could take it is full, it waits here for a slot (the queue caps count it).
   */
  async submit(request: RemoteSubmitRequest): Promise<string> {
    const { context } = this;
    if (request.prompt.trim() === '') throw new SwitchboardError('INVALID_PARAMS', 'the prompt is empty');
    const parent = request.parent;
    if (parent) this.checkFollowUp(parent, request);
    const schema = context.negotiate(request.schema_version);
    const { resume } = request;
    const id = context.newRunId();
    const repo = repoOf(id, request, resume?.record.spec.repo ?? parent?.spec.repo);
    const cwd = repo ? (request.cwd ?? '.') : request.cwd;
    if (cwd === undefined) throw new SwitchboardError('INVALID_PARAMS', 'cwd is required: the folder the agent works in, on the node');
    if (repo && (path.isAbsolute(cwd) || path.win32.isAbsolute(cwd) || cwd.split(/[\\/]/).includes('..'))) throw new SwitchboardError('INVALID_PARAMS', `with a repository, cwd is a folder inside its worktree, relative and without ..: ${cwd}`, { cwd });
    const labels = request.labels ?? [];
    if (resume) this.checkOrphanStands(resume.record);
    const needs: Needs = { backend: request.backend, labels, repo: repo?.name };
    const keptAt = resume && request.node === undefined ? this.resumeKeptAt(resume.record, needs) : undefined;
    const named = parent?.spec.node ?? request.node ?? keptAt;
    const free = this.nodeFor(needs, named, resume?.record.spec.node);
    const node = free ?? this.lineFor(needs, named, resume?.record.spec.node);
    if (node === undefined) {
      throw new SwitchboardError('LIMIT_EXCEEDED', `no node of the cluster can take a ${request.backend} run: none has it${labels.length > 0 ? ` with the labels ${labels.join(', ')}` : ''}${repo ? ` and the repository ${repo.name}` : ''}`, { backend: request.backend, labels: [...labels], ...(repo ? { repo: repo.name } : {}) });
    }
    const waitsForSlot = free === undefined;
    if (waitsForSlot || !context.admission.hasRoom(request.backend)) context.checkQueueCaps(request.caller, request.prompt);
    const backendPolicy = context.governor.backend(request.backend);
    const asked = request.mode ?? 'auto';
    const spec: RunSpec = {
      id,
      backend: request.backend,
      // What the caller asked for; `auto` is the node's choice, and its events say which it made.
      mode: asked === 'auto' ? 'stdio' : asked,
      prompt: request.prompt,
      cwd,
      created_by: request.caller,
      // Its node's own: the node it runs on (a run that waits for a slot may move to another).
      policy: `${context.policy.origin}, and its node's own`,
      policy_hash: context.policy.hash,
      limits: context.tighter(backendPolicy.limits, request.limits),
      schema_version: schema,
      parent: resume?.record.spec.id ?? parent?.spec.id ?? null,
      ...(resume ? { agent_session: resume.agentSession } : {}),
      // Its node keeps the conversation for a follow-up, as its own policy's idle limits allow (a terminal run keeps none).
      keep_alive: (request.keep_alive ?? true) && asked !== 'pty',
      node,
      ...(repo ? { repo } : {}),
      created_at: context.now(),
    };
    // Taken at once, before any wait: a submit beside this one sees the slot and the conversation taken.
    this.reserved.set(spec.id, { node, agentSession: spec.agent_session });
    try {
      context.ledger.createRun(spec);
      if (!backendPolicy.enabled) {
        // Recorded as a local run the policy refuses is: the refusal has its run and its rule.
        const rule = `backends.${spec.backend}.enabled`;
        this.endUnstarted(spec, { type: 'fail', reason: 'policy', message: `runs on ${spec.backend} are turned off by the policy (${context.policy.origin})` });
        await context.ledger.flush();
        throw new SwitchboardError('FORBIDDEN', `refused by the policy: runs on ${spec.backend} are turned off by the policy (${context.policy.origin})`, { run_id: spec.id, rule });
      }
      // The person chose: the orphaned run ends here (its node, should it come back, is told to stop
      // it), and this run goes on with its conversation.
      if (resume?.record.status === 'orphaned') this.cancelOrphaned(resume.record.spec, resume.record.started_at, `resumed as run ${spec.id} on node ${node}`);
      // In the store before any node can send an event of it.
      await context.ledger.flush();
      this.hold(spec, Buffer.byteLength(spec.prompt), 0, false, { needs, mode: asked, pinned: parent !== undefined || request.node !== undefined, keptAt });
      // The free slot it was chosen for is its own while it waits for its place (a run let out of
      // its line takes its slot so too): two runs waiting for places never count on one slot.
      const flight = this.inFlight.get(spec.id);
      if (flight && !waitsForSlot) flight.slotted = true;
    } finally {
      this.reserved.delete(spec.id);
    }
    if (waitsForSlot) {
      context.logger.info('every node that can take a run is full: it waits for a slot on one', { run_id: spec.id, node, ahead: this.lines.waitingFor(node) });
      this.lines.join(node, spec.id, spec.backend, () => this.admit(spec.id));
      // A slot may have freed since the node was chosen.
      this.advanceLines();
      return spec.id;
    }
    // Sent at once when there is room, and a failure to send is then the caller's to hear; sent
    // later, once a place frees up, a failure is recorded (the run ends failed) and logged.
    let now = true;
    let sent: Promise<void> | undefined;
    context.admission.request(spec.id, spec.backend, () => {
      const sending = this.send(spec, asked);
      if (now) sent = sending;
      else void sending.catch((err: unknown) => context.logger.warn('a node run that waited for a place could not be sent', { run_id: spec.id, error: errorMessage(err) }));
    });
    now = false;
    if (sent) await sent;
    return spec.id;
  }

  /**
   * A run that had waited for a slot on its node and has one now: it takes that slot, and waits
   * for its place in the admission queue as any run does; a failure to send it is recorded (the
   * run ends failed) and logged.
   */
  private admit(runId: string): void {
    const flight = this.inFlight.get(runId);
    if (!flight?.placement) return;
    flight.slotted = true;
    const { mode } = flight.placement;
    this.context.admission.request(runId, flight.spec.backend, () => {
      // As it stands when its place comes: where it is sent is where the ledger last said.
      this.send(flight.spec, mode).catch((err: unknown) => this.context.logger.warn('a node run that waited for a slot could not be sent', { run_id: runId, error: errorMessage(err) }));
    });
  }

  /** Sends on the runs waiting for a slot whose node has one now, then moves those another node can take. */
  private advanceLines(): void {
    const live = new Set(this.context.remote.nodes().map((n) => n.name));
    this.lines.advance((node, backend) => live.has(node) && this.context.remote.choose(backend, [], { occupied: this.occupied, node }) !== undefined);
    this.moveWaiting(live);
  }

  /**
   * The runs still waiting once their lines moved on, those that waited longest first. One that may
   * go to any node goes to another with a slot for it now (a node's own line was let out first, so
   * no run passes one waiting for that node). One whose node is gone (lost, or left) waits in the
   * shortest line of another node that could take it; one that must go to that node (a follow-up,
   * a node named), or that no other node could take, ends not started.
   */
  private moveWaiting(live: ReadonlySet<string>): void {
    for (const { runId, node } of this.lines.oldestFirst()) {
      const flight = this.inFlight.get(runId);
      const placement = flight?.placement;
      if (!flight || !placement) continue;
      const { needs } = placement;
      // A resume kept to its own node is tied to it while that node is live.
      const tied = placement.pinned || (placement.keptAt !== undefined && live.has(placement.keptAt));
      const free = tied ? undefined : this.context.remote.choose(needs.backend, needs.labels, { occupied: this.occupied, ...(needs.repo !== undefined ? { repo: needs.repo } : {}) });
      if (free !== undefined && free !== node) {
        if (this.move(flight, free, `node ${free} has a slot for it first`)) this.admit(runId);
      } else if (!live.has(node)) {
        const line = placement.pinned ? undefined : this.lineFor(needs, undefined, undefined);
        if (line === undefined) {
          this.endWaiting(flight, `node ${node} went away while the run waited for a slot there, and ${placement.pinned ? 'the run goes to that node only' : 'no other node can take it'}; nothing was started: submit it again`);
        } else if (this.move(flight, line, `node ${node} went away while it waited for a slot there`)) {
          this.lines.join(line, runId, flight.spec.backend, () => this.admit(runId));
        }
      }
    }
  }

  /** Takes a waiting run out of its line and records that it goes to `node` now (it is not on any node yet). */
  private move(flight: InFlight, node: string, why: string): boolean {
    const { spec } = flight;
    // Ended meanwhile (its done recorded, its subscriber not told yet): it stays as it is, and leaves its line at its release.
    if (!this.context.ledger.isLive(spec.id)) return false;
    this.context.ledger.moveRun(spec.id, node);
    this.lines.leave(spec.id);
    this.context.logger.info('a run waiting for a slot goes to another node', { run_id: spec.id, from: spec.node, to: node, why });
    flight.spec = { ...spec, node };
    flight.node = node;
    return true;
  }

  /** Ends a run that was waiting in a line, once no node can start it (the controller holds its claim). */
  private endWaiting(flight: InFlight, message: string): void {
    const { spec } = flight;
    this.lines.leave(spec.id);
    this.context.remote
      .abandon(spec)
      .then((abandoned) => {
        if (abandoned) this.endUnstarted(spec, { type: 'fail', reason: 'not_started', message });
      })
      .catch((err: unknown) => this.context.logger.warn('a run whose node went away while it waited could not be ended', { run_id: spec.id, error: errorMessage(err) }));
  }

  /** Where this service has run `runId` (RemoteRuns.trackPlaces): undefined for one it does not place. */
  private placeOf(runId: string): RunPlace | undefined {
    const flight = this.inFlight.get(runId);
    if (!flight?.placement || flight.node === undefined) return undefined;
    return this.lines.has(runId) ? { waiting: true } : { waiting: false, node: flight.node };
  }

  /**
   * Where a run waits when every node that could take it is full: the node named (a follow-up's
   * parent's, or the caller's: checked as for a run it can take), else the live node with the
   * backend, every label and the repository whose line is shortest for its slots (for a resume, its own node when
   * no line is shorter: the conversation is there). Undefined when none has them.
   */
  private lineFor(needs: Needs, named: string | undefined, own: string | undefined): string | undefined {
    const able = this.context.remote
      .nodes()
      .filter((n) => (named === undefined || n.name === named) && n.clis.some((c) => c.name === needs.backend) && needs.labels.every((l) => n.labels.includes(l)) && (needs.repo === undefined || n.repos.includes(needs.repo)))
      .sort((a, b) => (a.name === own ? -1 : b.name === own ? 1 : 0));
    const load = (n: (typeof able)[number]): number => (this.occupied(n.name) + this.lines.waitingFor(n.name) + 1) / Math.max(1, n.slots.total);
    let best: (typeof able)[number] | undefined;
    for (const n of able) if (best === undefined || load(n) < load(best)) best = n;
    return best?.name;
  }

  /**
   * Takes up a node run a restart found in flight: it takes its place again (it may be running
   * on its node), and one the controller held back, never claimed by a node, is sent once its node
   * has a slot and it has a place.
   */
  takeUp(record: RunRecord): void {
    const { spec } = record;
    // One a node numbered events of, or one not queued, is on its node (or was: its end is coming); an orphan is on none.
    const onNode = record.status !== 'orphaned' && (record.status !== 'queued' || record.last_seq > 0);
    this.hold(spec, record.prompt_bytes, record.last_seq, onNode);
    const takePlace = (): void => {
      this.context.admission.request(spec.id, spec.backend, () => {
        if (record.status !== 'queued' || record.last_seq > 0) return;
        void this.context.remote
          .claimed(spec)
          .then((claimed) => {
            if (!claimed) return this.send(spec, spec.mode);
            // Its node took it before the restart.
            const flight = this.inFlight.get(spec.id);
            if (flight) flight.sent = true;
            return undefined;
          })
          .catch((err: unknown) => this.context.logger.warn('a node run taken up at start could not be checked or sent', { run_id: spec.id, error: errorMessage(err) }));
      });
    };
    if (record.status !== 'queued' || record.last_seq > 0 || spec.node === undefined) {
      takePlace();
      return;
    }
    // Not started by what the ledger says: back in its node's line at once, in ledger order, as
    // it waited before the restart (or was sent, and its node has not taken it yet). Found claimed
    // (its first events are on their way), it leaves the line and takes its place.
    const node = spec.node;
    this.lines.join(node, spec.id, spec.backend, () => {
      const flight = this.inFlight.get(spec.id);
      if (flight) flight.slotted = true;
      takePlace();
    });
    this.context.remote
      .claimed(spec)
      .then((claimed) => {
        if (!claimed || !this.lines.leave(spec.id)) return;
        const flight = this.inFlight.get(spec.id);
        if (flight) flight.sent = true;
        takePlace();
      })
      .catch((err: unknown) => this.context.logger.warn('a node run taken up at start could not be checked; it waits in its line', { run_id: spec.id, error: errorMessage(err) }))
      .finally(() => this.advanceLines());
  }

  /**
   * The node a run goes to: the one `named` (a follow-up's parent's, or the caller's), checked; else,
   * for a resume, the node that ran the run (`own`: the CLI's conversation files are there) when it
   * is live and can take it; else the least loaded node with the backend, the labels, the repository and a free slot.
   * Undefined when none can take it now.
   */
  private nodeFor(needs: Needs, named: string | undefined, own: string | undefined): string | undefined {
    const { remote } = this.context;
    if (named !== undefined) return this.named(named, needs);
    const options = { occupied: this.occupied, ...(needs.repo !== undefined ? { repo: needs.repo } : {}) };
    const atOwn = own !== undefined && remote.nodes().some((n) => n.name === own) ? remote.choose(needs.backend, needs.labels, { ...options, node: own }) : undefined;
    return atOwn ?? remote.choose(needs.backend, needs.labels, options);
  }

  /**
   * The node a resume must go to when no node is named: its run's, while that node is live and
   * can take it, when what the resume goes on from may be there only. A CLI whose conversation files are not carried
   * between hosts (OpenCode's database, Gemini CLI) has it there alone, and a repository run's
   * branch is there alone unless a run of it pushed it. Undefined when any node may take it (the
   * conversation is carried; or its node is gone, and a node that shares its HOME or finds the
   * branch on origin may still go on with it).
   */
  private resumeKeptAt(record: RunRecord, needs: Needs): string | undefined {
    if (carriesBackend(record.spec.backend) && record.spec.repo === undefined) return undefined;
    const own = this.context.remote.nodes().find((n) => n.name === record.spec.node);
    // One its run's node cannot take (the labels asked for) goes where it can, as the caller asked.
    const able = own !== undefined && own.clis.some((c) => c.name === needs.backend) && needs.labels.every((l) => own.labels.includes(l)) && (needs.repo === undefined || own.repos.includes(needs.repo));
    return able ? own.name : undefined;
  }

  /**
   * INVALID_REQUEST when the orphan a resume would end was ended meanwhile (by a cancel, or another
   * resume). Whether another run has its conversation is the service's check (checkConversationFree),
   * made in the same turn as this submit reserves it.
   */
  private checkOrphanStands(record: RunRecord): void {
    const { spec, status } = record;
    if (status === 'orphaned' && !this.context.ledger.isLive(spec.id)) throw new SwitchboardError('INVALID_REQUEST', `run ${spec.id} ended meanwhile (cancelled, or resumed by another call): resume it again to go on`, { resume: spec.id });
  }

  /** The node run, being submitted or not ended yet, that resumes the CLI's conversation `agentSession`, if any. */
  resuming(agentSession: string): string | undefined {
    for (const [runId, r] of this.reserved) if (r.agentSession === agentSession) return runId;
    for (const [runId, r] of this.inFlight) if (r.agentSession === agentSession) return runId;
    return undefined;
  }

  /**
   * A follow-up of node run `parent` goes to its node, in its folder, on its backend, once it has
   * ended with its conversation kept: INVALID_PARAMS or INVALID_REQUEST saying which is not so (the
   * node says whether the conversation is still open).
   */
  private checkFollowUp(parent: RunRecord, request: RemoteSubmitRequest): void {
    const { spec } = parent;
    if (spec.backend !== request.backend) throw new SwitchboardError('INVALID_PARAMS', `run ${spec.id} ran on ${spec.backend}: a follow-up goes to the same backend`, { parent: spec.id });
    if (!isEnded(parent.status)) throw new SwitchboardError('INVALID_REQUEST', `run ${spec.id} is still ${parent.status}: follow it up once it has ended${parent.status === 'orphaned' ? ' (orphaned: resume it instead)' : ''}`, { parent: spec.id });
    if (spec.keep_alive === false) throw new SwitchboardError('INVALID_PARAMS', `the conversation of run ${spec.id} ended with it (keep_alive false): resume it instead`, { parent: spec.id });
    if (spec.node !== undefined && !this.context.remote.nodes().some((n) => n.name === spec.node)) throw new SwitchboardError('INVALID_REQUEST', `run ${spec.id}'s node ${spec.node} is gone, and its open conversation with it: resume the run instead`, { parent: spec.id, node: spec.node });
    if (request.node !== undefined && request.node !== spec.node) throw new SwitchboardError('INVALID_PARAMS', `a follow-up of run ${spec.id} goes to its node ${spec.node ?? '?'}, where its conversation is: resume it to go on elsewhere`, { parent: spec.id, node: request.node });
    if (request.cwd !== spec.cwd) throw new SwitchboardError('INVALID_PARAMS', `a follow-up runs in its conversation's folder (${spec.cwd})`, { cwd: request.cwd });
  }

  /**
   * The node named by the caller, when it can take the run now: NODE_UNREACHABLE when no live node
   * has the name, INVALID_PARAMS when it lacks the backend, a label or the repository, undefined
   * when it has no free slot.
   */
  private named(name: string, needs: Needs): string | undefined {
    const { backend, labels, repo } = needs;
    const node = this.context.remote.nodes().find((n) => n.name === name);
    if (!node) throw new SwitchboardError('NODE_UNREACHABLE', `no live node ${name} in the cluster`, { node: name });
    if (!node.clis.some((c) => c.name === backend)) throw new SwitchboardError('INVALID_PARAMS', `node ${name} has no ${backend} (it has ${node.clis.map((c) => c.name).join(', ') || 'no backend'})`, { node: name, backend });
    const missing = labels.filter((l) => !node.labels.includes(l));
    if (missing.length > 0) throw new SwitchboardError('INVALID_PARAMS', `node ${name} does not have the labels ${missing.join(', ')}`, { node: name, labels: missing });
    if (repo !== undefined && !node.repos.includes(repo)) throw new SwitchboardError('INVALID_PARAMS', `node ${name} does not have the repository ${repo} (it has ${node.repos.join(', ') || 'none'})`, { node: name, repo });
    return this.context.remote.choose(backend, labels, { occupied: this.occupied, node: name, ...(repo !== undefined ? { repo } : {}) });
  }

  /**
   * The runs being submitted to `node`, and those sent it and not ended yet (an orphan is on no
   * node): they take its slots, whether or not its lease shows them yet.
   */
  private readonly occupied = (node: string): number => {
    let n = 0;
    for (const run of this.reserved.values()) if (run.node === node) n++;
    for (const run of this.inFlight.values()) if ((run.sent || run.slotted) && run.node === node) n++;
    return n;
  };

  /** True when `runId` is a node run waiting here for a place (not yet sent). */
  waiting(runId: string): boolean {
    return this.inFlight.has(runId) && (this.lines.has(runId) || this.context.admission.position(runId) >= 0);
  }

  /** Where node run `runId` is in its node's line, waiting for a slot there (0: next), or -1. */
  slotLinePosition(runId: string): number {
    return this.lines.position(runId);
  }

  /** The node runs waiting here for a slot or a place, for the queue caps. */
  *queued(): Iterable<{ caller: string; promptBytes: number }> {
    for (const [runId, run] of this.inFlight) if (this.lines.has(runId) || this.context.admission.position(runId) >= 0) yield run;
  }

  /**
   * Stops a node run (`interrupt`: its turn, keeping the conversation on its node): the node ends
   * it and its events say so; one no node started is ended here, and so is an orphaned one (its node
   * was lost, and its turn with it) at once, without waiting for the node: that is the person's
   * choice the status waits for (the node is still told, should it come back).
   */
  async cancel(spec: RunSpec, now: { status: RunStatus; started_at: number | null }, how: StopHow = 'cancel'): Promise<void> {
    if (now.status === 'orphaned') {
      this.cancelOrphaned(spec, now.started_at, 'cancelled by the caller while orphaned', how);
      return;
    }
    const outcome = await this.context.remote.cancel(spec, how);
    if (outcome === 'abandoned') this.endUnstarted(spec, { type: 'cancel', reason: 'cancelled_by_user', message: 'cancelled by the caller before a node started it' });
  }

  /**
   * Ends an orphaned run cancelled, as the person chose, and tells its node to stop it `how` (an
   * interrupt leaves the conversation open there, should the node come back; a resume cancels, as
   * the conversation goes on elsewhere).
   */
  private cancelOrphaned(spec: RunSpec, startedAt: number | null, why: string, how: StopHow = 'cancel'): void {
    this.endOrphaned(spec, startedAt, { type: 'cancel', reason: 'cancelled_by_user', message: `${why} (node ${spec.node ?? '?'} was lost; told to stop it should it come back)` });
    // A node only cut off may still run the agent: the mark and the request reach it if it comes
    // back (what it sends then is dropped, the run being over here). Not waited for.
    this.context.remote.cancel(spec, how).catch((err: unknown) => this.context.logger.info('the node of an orphaned run was not reached with its cancel', { run_id: spec.id, node: spec.node, error: errorMessage(err) }));
  }

  /** Stops following the node runs (they go on on their nodes; a restart takes them up again). */
  dispose(): void {
    this.watchingNodes.dispose();
    for (const run of this.inFlight.values()) run.following?.dispose();
    this.inFlight.clear();
  }

  /**
   * Keeps the run's place until its `done` is in the ledger, and judges each decision its node
   * records again by the controller's rules (policy-recheck.ts): the first it denies stops the run.
   */
  private hold(spec: RunSpec, promptBytes: number, lastSeq = 0, sent = false, placement?: Placement): void {
    const run: InFlight = { caller: spec.created_by ?? 'owner', promptBytes, following: undefined, node: spec.node, sent, slotted: false, agentSession: spec.agent_session, spec, placement };
    this.inFlight.set(spec.id, run);
    const release = (): void => {
      this.inFlight.delete(spec.id);
      this.lines.leave(spec.id);
      this.context.admission.release(spec.id);
      // Its slot is free: the next run waiting for its node may go (its lease may say so later).
      this.advanceLines();
    };
    let stopped = false;
    // Where its rules' workdir is: a repository run's folder is known once its node admitted it
    // there (its first admission; read back from the ledger for a run taken up after a restart).
    let folder = spec.cwd;
    let admitted = false;
    const admit = (event: RunEvent): void => {
      const found = spec.repo && !admitted ? admittedFolder(event) : undefined;
      if (found === undefined) return;
      folder = found;
      admitted = true;
    };
    if (spec.repo && lastSeq > 0) {
      this.context.ledger
        .events(spec.id, 0, ADMISSION_LOOKS)
        .then((events) => events.forEach(admit))
        .catch((err: unknown) => this.context.logger.warn("a repository run's folder on its node could not be read back; its calls are judged against its recorded folder", { run_id: spec.id, error: errorMessage(err) }));
    }
    const recheck = (event: RunEvent): void => {
      admit(event);
      // Its node was lost: nothing of it takes a slot there any more.
      if (event.type === 'state' && event.data.to === 'orphaned') {
        run.sent = false;
        run.slotted = false;
        this.advanceLines();
      } else if (this.lines.has(spec.id) && !endsRun(event)) {
        this.lines.leave(spec.id);
        // Put back in line at a restart, but its node had it after all (its events come): on its
        // node, it takes its place. (The end this side records of a run that waited is no node's.)
        run.sent = true;
        this.context.admission.request(spec.id, spec.backend, () => undefined);
      }
      if (stopped) return;
      const violation = recheckDecision(this.context.governor, spec, event, folder);
      if (!violation) return;
      stopped = true;
      this.context.logger.warn("a node allowed what the controller's policy denies; the run is stopped", { run_id: spec.id, node: run.node, seq: event.seq, rule: violation.rule, reason: violation.reason });
      this.context.remote.failForPolicy(run.spec, violation).catch((err: unknown) => this.context.logger.error("a run the controller's policy denies could not be stopped", { run_id: spec.id, node: run.node, error: errorMessage(err) }));
    };
    run.following = this.context.ledger.subscribe(spec.id, lastSeq, recheck, {
      onEnd: release,
      onError: (err) => {
        // Not known to end: its place is given back rather than held for ever.
        this.context.logger.warn('a node run could not be followed to its end; its place is given back', { run_id: spec.id, error: errorMessage(err) });
        release();
      },
    });
  }

  /** Sends a run that has its place; one that could not be sent is ended here, unless a node has it after all. */
  private async send(spec: RunSpec, mode: 'auto' | RunMode): Promise<void> {
    const { remote } = this.context;
    // Cancelled while it waited: nothing to send.
    if (!this.context.ledger.isLive(spec.id)) return;
    const flight = this.inFlight.get(spec.id);
    if (flight) flight.sent = true;
    try {
      // Its node as the ledger has it, before any node may start it: a run that moved is never
      // sent where a restart would not look for it (and send it again to the node it left).
      await this.context.ledger.flush();
      await remote.dispatch(spec, mode);
    } catch (err) {
      const abandoned = await remote.abandon(spec).catch(() => undefined);
      if (abandoned === false) return;
      if (abandoned === true) this.endUnstarted(spec, { type: 'fail', reason: 'spawn_failed', message: `the run could not be sent to node ${spec.node ?? ''}: ${errorMessage(err)}` });
      throw err;
    }
  }

  /** Records the end the person chose for an orphaned run. */
  private endOrphaned(spec: RunSpec, startedAt: number | null, input: RunInput): void {
    this.recordEnd(spec, { status: 'orphaned', since: this.context.now(), started_at: startedAt }, input);
  }

  /** Records the end of a run no node started (and none will): with an orphaned run's end, the only events this side writes for a node's run. */
  private endUnstarted(spec: RunSpec, input: RunInput): void {
    this.recordEnd(spec, initialState(spec.created_at), input);
  }

  private recordEnd(spec: RunSpec, from: RunState, input: RunInput): void {
    if (!this.context.ledger.isLive(spec.id)) return;
    const at = this.context.now();
    const next = step(from, input, at);
    this.context.ledger.append(spec.id, stateEvent(next.transition));
    this.context.ledger.append(spec.id, doneEvent(at, next.state.status as EndStatus, next.transition.reason ?? '', next.transition.message));
  }
}

/** How many of a run's first events are read back for its admission after a restart (it is among the first few). */
const ADMISSION_LOOKS = 20;

/** What a node must have to take a run. */
interface Needs {
  backend: string;
  labels: readonly string[];
  repo: string | undefined;
}

/**
 * The repository run `id` runs in: a follow-up's and a resume's are their run's (`inherited`: the
 * same branch, pushed as asked now or as before), and `repo` and `ref` may not name another; a new
 * run's is the one it names, on a branch of its own. INVALID_PARAMS for a ref or push without a repository.
 */
function repoOf(id: string, request: RemoteSubmitRequest, inherited: RunRepo | undefined): RunRepo | undefined {
  if (inherited) {
    if ((request.repo !== undefined && request.repo !== inherited.name) || (request.ref !== undefined && request.ref !== inherited.ref)) throw new SwitchboardError('INVALID_PARAMS', `the run it goes on from works in ${inherited.name} on ${inherited.branch}: a follow-up or a resume goes on there`, { repo: request.repo, ref: request.ref });
    return { ...inherited, push: request.push ?? inherited.push };
  }
  if (request.repo === undefined) {
    if (request.ref !== undefined || request.push !== undefined) throw new SwitchboardError('INVALID_PARAMS', 'ref and push go with repo: the repository the run works in', { ...(request.ref !== undefined ? { ref: request.ref } : {}) });
    return undefined;
  }
  return { name: request.repo, ...(request.ref !== undefined ? { ref: request.ref } : {}), branch: repoBranchOf(id), push: request.push ?? false };
}

/** True for the events that end a run: its last state and its `done`. */
function endsRun(event: RunEvent): boolean {
  return event.type === 'done' || (event.type === 'state' && RUN_STATUSES.some((status) => status === event.data.to && isEnded(status)));
}
