/**
 * A team run (seed 003's Run, issue 24 item 2): one goal, a preset's team of agent CLIs in panes,
 * a planner that drives the workers through the tools, and a report at the end. The run opens the
 * planner and the preset's first workers in parallel, gives the planner its brief once it is idle,
 * reads its calls (marker lines), runs them one at a time in order through the tool table, and
 * types each result back into the planner only when it is idle, each once. Text the risk gate holds
 * waits here for a person (`answerConfirmation`); pausing holds the planner's calls until resumed.
 *
 * Calls also come over MCP (`callTool`, from the agents' own panes), answered there and then.
 * A result no screen confirmed waits for a person's `resend`; a stuck worker is nudged (StuckWatch)
 * and restarted with a person's consent (`restartWorker`). Every moment goes to `onRecord`, which
 * the recorder (team-record.ts) keeps sealed in the ledger.
 *
 * Not yet (issue 24): reading the planner's replies from its transcript rather than its output
 * (see marker-lines.ts: its output shows typed text too), worktrees and checks.
 */
import { realpathSync } from 'node:fs';
import path from 'node:path';
import { Emitter, type Event } from '../core/emitter.js';
import { DisposableStore, type Disposable } from '../core/disposable.js';
import { SwitchboardError } from '../core/errors.js';
import { anyEvent, untilEvent } from '../core/until-event.js';
import { AUTO_APPROVE_POLICY, ASK_POLICY, parsePolicy, type ApprovalPolicy } from '../approvals/index.js';
import type { AgentPane, AgentState } from '../agents/index.js';
import { MarkerReader, newRunNonce, resultLine, TOOL_PREFIX, withoutMarkerLines } from './marker-lines.js';
import { plannerBrief } from './planner-brief.js';
import { plannerOf, type TeamPreset, type TeamRole } from './presets/preset.js';
import { renderReport } from './report.js';
import { plannerPolicy, RoleApprovals, type RoleDecision } from './role-approvals.js';
import { judgeRisk, type RiskContext, type RiskJudgement } from './risk.js';
import { StuckWatch } from './stuck-watch.js';
import { runCheck, type CheckResult } from './check-command.js';
import { addWorktree, removeUnchangedWorktree, repositoryOf, worktreeChanges, type Worktree, type WorktreeChanges } from '../git/index.js';
import { TaskList, type Task } from './task-list.js';
import { stepTeam, teamEnded, type TeamEvent, type TeamState } from './team-state.js';
import { callTeamTool, type ToolOutcome } from './tools/team-tools.js';
import type { GateAnswer, TeamPort, WaitUntil, WorkerView } from './tools/team-port.js';

/** Who an agent of the run is: its planner, or one of its workers (by id). */
export type TeamMember = { kind: 'planner' } | { kind: 'worker'; workerId: string };

/** How a team run starts and ends its agents: the daemon's panes, or a test's. */
export interface TeamHost {
  /**
   * Starts `agent` in `folder` in a new pane titled `title`; resolves once it is at its idle
   * prompt. `member` says who it is in run `runId`, for the tools its MCP server lists.
   */
  startAgent(spec: { agent: string; folder: string; title: string; runId: string; member: TeamMember }, signal: AbortSignal): Promise<AgentPane>;
  /**
   * How `agent` calls the team's tools: `mcp` when it runs with Switchboard's MCP server in its
   * configuration, else marker lines (any program can print a line).
   */
  callsVia(agent: string): 'mcp' | 'markers';
  /** Ends an agent's pane (when the run ends and the person chose to close its agents, the planner too). */
  closeAgent(agent: AgentPane): Promise<void>;
  /**
   * A prompt for `agent` marked so that the reply to it can be read from the agent's own
   * transcript, and the reader of that reply (begun: call before typing the text); undefined
   * where the CLI writes no transcript Switchboard reads. A TUI renders a planner's marker line
   * as markdown (Claude Code, Codex and OpenCode draw `__MPS_TOOL__` as a bold `MPS_TOOL`) and
   * wraps it: the transcript has it as the model wrote it.
   */
  transcriptTurn?(agent: AgentPane, text: string): { text: string; reader: TurnReader } | undefined;
}

/** A text typed into the planner whose reply is read from its transcript. */
interface PlannerTurn {
  reader: TurnReader;
  /** The call whose result the text was (none for the brief). */
  record: CallRecord | undefined;
  /** When its typing began, and whether it has ended. */
  typedAt: number;
  typed: boolean;
  found: boolean;
  done: boolean;
}

/** One prompt's reply as the planner's transcript has it so far. */
interface TurnReader {
  /** `idle`: the planner's screen shows it idle (a reader that queries slowly waits for it). */
  read(context: { idle: boolean }): Promise<{ found: boolean; reply: string; done: boolean }>;
}

export interface TeamRunOptions {
  id: string;
  preset: TeamPreset;
  goal: string;
  /** The run's folder: a role's relative folder is inside it. */
  folder: string;
  /** The user's home, for the risk gate's judgement of paths. */
  home: string;
  /** Where workers' git worktrees go (`<this>/<run>/<worker>`): the Switchboard home's `worktrees`. Without it a worktree role's workers cannot start. */
  worktrees?: string;
  host: TeamHost;
  /** The longest typing a result into the planner may take before it counts as undelivered (60 s). */
  deliveryTimeoutMs?: number;
  /** Who started the run (a caller as the bridge names callers): only it, or the owner, steers it. */
  startedBy?: string;
  /**
   * Resolves true once the MCP server in pane `paneId` has its client (the agent CLI has the
   * tools), false after `timeoutMs`: a planner briefed before would find no tools to call.
   */
  mcpReady?: (paneId: string, timeoutMs: number, signal: AbortSignal) => Promise<boolean>;
}

/** How long a planner's MCP server may take to have its client before the brief goes by marker lines instead. */
const MCP_READY_TIMEOUT_MS = 60_000;

/** A text the risk gate holds for a person. */
export interface PendingConfirmation {
  id: string;
  workerId: string;
  text: string;
  judgement: RiskJudgement;
}

/** A tool call and how it went, for the board and the record. */
export interface CallRecord {
  id: string;
  method: string;
  /** Who called: `planner`, or a worker's id (workers may use the task tools). */
  by: string;
  /** How it came: a marker line on the planner's screen, or the caller's MCP server. */
  via: 'markers' | 'mcp';
  /** `ok`, or the error's code. */
  outcome: string;
  /**
   * Whether its result reached the planner: `unconfirmed` when it was typed in but nothing on the
   * screen showed the planner took it; `undelivered` when it could not be typed (or the caller of
   * an MCP call went away). A person may resend a result typed by marker lines that is either.
   */
  delivered: 'pending' | 'delivered' | 'unconfirmed' | 'undelivered';
}

interface Worker {
  id: string;
  role: TeamRole;
  agent: string;
  folder: string;
  pane: AgentPane | undefined;
  /** Why it could not start, if it could not. */
  failed?: string;
  /** What a person marked it (done, blocked, needing input), over what its screen says. */
  mark?: 'completed' | 'stuck' | 'needs_input';
  /** Times a person had it restarted. */
  restarts: number;
  /**
   * When text last began to go to it (ms since the epoch). Its agent's state from before then
   * says nothing of that text: an idle screen the tracker has not yet seen change is no finish.
   */
  sentAt?: number;
  /** Its own git worktree, for a role with `worktree: true`. */
  worktree?: Worktree;
  /** Its worktree held nothing of its own and was removed at the end. */
  worktreeRemoved?: boolean;
  /** What it changed in its worktree, as last read (refreshChanges). */
  changes?: WorktreeChanges;
  /** Its role's check, each time it ran (the last MAX_CHECKS). */
  checks: CheckResult[];
}

/**
 * What the run's record keeps of one moment of it (issue 24 item 2), in order: every change of
 * state, worker opened, tool call, delivery, approval decision, held text and its answer, and
 * what a person sent or marked. The recorder (team-record.ts) keeps it sealed in the ledger.
 */
export type TeamRecordEntry =
  | { kind: 'state'; from: TeamState; to: TeamState; why: string }
  | { kind: 'worker'; worker: string; role: string; agent: string; folder: string; paneId: string | null; failed?: string }
  | { kind: 'call'; id: string; method: string; by: string; via: CallRecord['via']; params: unknown; outcome: string; message?: string }
  | { kind: 'delivery'; call: string; delivered: Exclude<CallRecord['delivered'], 'pending'> }
  | { kind: 'resend'; call: string; by: string }
  | ({ kind: 'decision'; member: string } & RoleDecision)
  | { kind: 'held'; confirmation: string; worker: string; text: string; level: RiskJudgement['level'] }
  | { kind: 'answer'; confirmation: string; decision: GateAnswer['decision']; by: string }
  | { kind: 'send'; by: string; workers: string[]; text: string; level: RiskJudgement['level']; held: boolean }
  | { kind: 'mark'; worker: string; mark: Worker['mark'] | null; by: string }
  | { kind: 'stuck'; worker: string; why: string }
  | { kind: 'moving'; worker: string }
  | { kind: 'nudge'; worker: string; text: string }
  | { kind: 'restart'; worker: string; by: string }
  | { kind: 'check'; worker: string; task: string; command: string; passed: boolean; exitCode: number | null; ms: number; output: string }
  /** At the end, with the workers closed: an unchanged worktree removed, or one with changes kept. */
  | { kind: 'worktree'; worker: string; branch: string; path: string; removed: boolean; branchRemoved: boolean };

/** Everything the board shows of a run, at one moment (`version` counts the changes). */
export interface TeamBoard {
  id: string;
  goal: string;
  preset: string;
  state: TeamState;
  /** Why the run is in its state (the last change's reason). */
  why: string;
  version: number;
  startedAt: string;
  endedAt?: string;
  planner: { role: string; agent: string; paneId: string | null; state: WorkerView['state'] };
  /** Each worker; `changes` and `checks` where it has a worktree or a check (the report's what-changed). */
  workers: (WorkerView & { paneId: string | null; changes?: WorktreeChanges; checks?: CheckResult[] })[];
  tasks: Task[];
  /** The next step as the plan has it: the first task someone could take now, if any. */
  nextStep: string | null;
  confirmations: PendingConfirmation[];
  calls: CallRecord[];
  /** The approvals the agents asked for, each with its role policy's decision (the last MAX_DECISIONS). */
  approvals: (RoleDecision & { member: string })[];
  draft: string;
  summary: string | null;
  /** Who started it (not shown on the wire: who may read its record is decided by it). */
  startedBy?: string;
}

/** A run's report as markdown, from its board: the live one or the last one the ledger kept. */
export function reportOf(board: TeamBoard): string {
  return renderReport({
    goal: board.goal,
    preset: board.preset,
    state: board.state,
    startedAt: board.startedAt,
    ...(board.endedAt !== undefined ? { endedAt: board.endedAt } : {}),
    ...(board.summary !== null ? { summary: board.summary } : {}),
    draft: board.draft,
    tasks: board.tasks,
    workers: board.workers,
  });
}

/** Tool calls the board keeps (the oldest dropped first): a worker may call the task tools in a loop. */
const MAX_CALLS = 1_000;
/** Approval decisions the board keeps (the oldest dropped first). */
const MAX_DECISIONS = 200;
/** Lines of output a worker's view carries. */
const LAST_LINES = 12;
/** Lines of the planner's output read again on each render for new calls. */
const CALL_SCAN_LINES = 200;
/** Distinct lines remembered as read (a call is run once anyway; this spares re-parsing). */
const MAX_SEEN_LINES = 5_000;
/** Between two reads of the planner's transcript asked for back to back, at least this long. */
const TURN_READ_GAP_MS = 200;
/** A turn its transcript never showed done is no longer read once the planner has sat idle this long since it was typed. */
const TURN_IDLE_PATIENCE_MS = 30_000;
/** A turn its transcript never showed at all is no longer read this long after it was typed. */
const TURN_FIND_PATIENCE_MS = 120_000;
/** Turns read at once at most (the oldest open ones go first). */
const MAX_PLANNER_TURNS = 8;
/** How long the risk gate holds a text for a person before it counts as denied. */
const GATE_TIMEOUT_MS = 15 * 60_000;
/** The longest a result may take to be typed in once the planner is idle. */
const DELIVERY_TIMEOUT_MS = 60_000;
/** How long a worker that was just sent text may show its old idle screen before `tabs.wait` takes it as idle. */
const SEND_SETTLE_MS = 2_000;
/** Check results kept per worker for the board and the report. */
const MAX_CHECKS = 5;
/** Variables a check does not get: the daemon's own (its token among them). */
const DAEMON_VARIABLE = /^(SWITCHBOARD|ENSO_RPC)_/;

/** The daemon's environment, without its own variables: what a check runs with. */
function checkEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([name]) => !DAEMON_VARIABLE.test(name)));
}

/** What a worker is told when its check failed on a task it said was done. */
function checkFailedPrompt(taskId: string, result: CheckResult): string {
  return `The check for ${taskId} failed (\`${result.command}\`, exit ${result.exitCode ?? 'none'}); the task stays open. Its output ends:\n${result.output.trimEnd()}\nFix it, then complete ${taskId} again.`;
}
/** Results not confirmed as delivered kept for a person to resend (the oldest dropped first). */
const MAX_UNSENT_RESULTS = 200;

export class TeamRun implements TeamPort, Disposable {
  readonly id: string;
  readonly goal: string;
  readonly preset: TeamPreset;
  readonly startedAt = new Date().toISOString();
  readonly startedBy: string | undefined;
  private endedAt: string | undefined;
  private current: TeamState = 'starting';
  private why = 'opening the planner and the first workers';
  private changes = 0;
  private readonly tasks = new TaskList();
  private readonly nonce = newRunNonce();
  private readonly reader: MarkerReader;
  private readonly workersById = new Map<string, Worker>();
  private readonly counts = new Map<string, number>();
  private planner: AgentPane | undefined;
  /** How the planner was told to call the tools (set when it is briefed). */
  private callsVia: CallRecord['via'] | undefined;
  private draftText = '';
  private summary: string | undefined;
  private readonly calls: CallRecord[] = [];
  private readonly decisions: (RoleDecision & { member: string })[] = [];
  private readonly confirmations = new Map<string, PendingConfirmation & { answer: (a: GateAnswer) => void }>();
  private confirmationSeq = 0;
  private readonly unsent = new Map<string, string>();
  /** Tasks whose check is running. */
  private readonly checking = new Set<string>();
  /** The worktrees' changes being read (refreshChanges): reads follow one another. */
  private changesRead: Promise<void> = Promise.resolve();
  private readonly seenLines = new Set<string>();
  /** The planner's turns still read from its transcript (transcriptTurn), oldest first. */
  private turns: PlannerTurn[] = [];
  /** Results the planner's transcript shows it took: delivered, whatever the screen said. */
  private readonly takenByPlanner = new WeakSet<CallRecord>();
  private readingTurns = false;
  private turnReadAgain = false;
  /** Calls read and not yet run, in order; results not yet typed into the planner, in order. */
  private readonly callQueue: { id: string; method: string; params: Record<string, unknown> }[] = [];
  private readonly deliveries: { text: string; record?: CallRecord }[] = [];
  /** The result lines that may not have reached the planner, by call id, for `resend`. */
  private readonly unsentResults = new Map<string, string>();
  private runningCall = false;
  private mcpCalls = 0;
  private delivering = false;
  private readonly abort = new AbortController();
  private readonly store = new DisposableStore();
  /** What acts on the agents for the run (their role's approval policies): ended with the run, not kept for a person taking over. */
  private readonly acting = new DisposableStore();
  private readonly changeEmitter = this.store.add(new Emitter<void>());
  private readonly confirmEmitter = this.store.add(new Emitter<PendingConfirmation>());
  private readonly recordEmitter = this.store.add(new Emitter<TeamRecordEntry>());
  /** Something on the board changed (state, a worker, a call, the draft). */
  readonly onChange: Event<void> = this.changeEmitter.event;
  /** The risk gate holds a text for a person. */
  readonly onConfirmation: Event<PendingConfirmation> = this.confirmEmitter.event;
  private readonly stuck = this.store.add(
    new StuckWatch({
      onStuck: (workerId, why) => {
        this.record({ kind: 'stuck', worker: workerId, why });
        this.changed();
      },
      onMoving: (workerId) => {
        this.record({ kind: 'moving', worker: workerId });
        this.changed();
      },
      nudge: (workerId, text) => this.nudge(workerId, text),
    }),
  );
  /** A moment for the run's record (fired before the board's change it comes with). */
  readonly onRecord: Event<TeamRecordEntry> = this.recordEmitter.event;

  constructor(private readonly options: TeamRunOptions) {
    this.id = options.id;
    this.goal = options.goal;
    this.preset = options.preset;
    this.reader = new MarkerReader(this.nonce);
    this.startedBy = options.startedBy;
  }

  get state(): TeamState {
    return this.current;
  }

  /** Counts the board's changes (what a watch waits past), without building the board. */
  get version(): number {
    return this.changes;
  }

  /**
   * Opens the planner and the preset's first workers in parallel, then briefs the planner. Never
   * throws: what goes wrong ends the run as failed, with the reason on the board.
   */
  async start(): Promise<void> {
    try {
      await this.open();
    } catch (err) {
      if (!teamEnded(this.current)) this.step({ kind: 'fail', reason: `the run could not start: ${err instanceof Error ? err.message : String(err)}` });
    }
  }

  private async open(): Promise<void> {
    const plannerRole = plannerOf(this.preset);
    const opening = this.preset.roles.filter((r) => r.name !== plannerRole.name).flatMap((role) => Array.from({ length: role.count }, () => this.openWorker(role, {})));
    const [planner] = await Promise.allSettled([
      this.options.host.startAgent({ agent: plannerRole.agent, folder: this.folderOf(plannerRole.folder), title: `${plannerRole.name} (planner)`, runId: this.id, member: { kind: 'planner' } }, this.abort.signal),
      ...opening,
    ]);
    if (planner.status === 'rejected') {
      const reason = planner.reason instanceof Error ? planner.reason.message : String(planner.reason);
      this.step({ kind: 'start_failed', reason: `the planner could not start: ${reason}` });
      await this.closeWorkers();
      return;
    }
    this.planner = planner.value;
    this.followApprovals(planner.value, plannerRole, 'planner', plannerPolicy(policyOf(plannerRole)));
    this.store.add(planner.value.pane.onRender(() => this.readCalls()));
    this.store.add(
      planner.value.onState(() => {
        // Read first: a turn the planner just ended is read before the next text goes in.
        this.readTurns();
        this.pumpDeliveries();
      }),
    );
    this.store.add(planner.value.pane.onExit(() => this.planner && !teamEnded(this.current) && this.step({ kind: 'fail', reason: 'the planner’s CLI exited' })));
    if (teamEnded(this.current)) return;
    // Over MCP only once the planner's CLI has the tools; without them in time, by marker lines.
    const mcp = this.options.host.callsVia(plannerRole.agent) === 'mcp' && (await this.options.mcpReady?.(planner.value.pane.id, MCP_READY_TIMEOUT_MS, this.abort.signal)) === true;
    if (teamEnded(this.current)) return;
    this.step({ kind: 'started' });
    this.callsVia = mcp ? 'mcp' : 'markers';
    const brief = plannerBrief({
      goal: this.goal,
      workers: this.workers().map((w) => ({ id: w.id, role: w.role, agent: w.agent, brief: this.preset.roles.find((r) => r.name === w.role)?.brief ?? '' })),
      roles: this.preset.roles.filter((r) => r.name !== plannerRole.name).map((r) => ({ name: r.name, agent: r.agent, brief: r.brief })),
      plannerBrief: plannerRole.brief,
      calls: mcp ? { via: 'mcp' } : { via: 'markers', nonce: this.nonce },
    });
    this.deliver({ text: brief });
  }

  // ---- TeamPort: what the tools act on ----

  workers(): WorkerView[] {
    return [...this.workersById.values()].map((w) => this.viewOf(w));
  }

  async createWorker(roleName: string, options: { agent?: string; folder?: string }): Promise<WorkerView> {
    const role = this.preset.roles.find((r) => r.name === roleName);
    if (!role || role.name === this.preset.planner) {
      throw new SwitchboardError('INVALID_PARAMS', `the team has no worker role '${roleName}' (roles: ${this.preset.roles.filter((r) => r.name !== this.preset.planner).map((r) => r.name).join(', ')})`);
    }
    const agents = [...new Set(this.preset.roles.map((r) => r.agent))];
    if (options.agent !== undefined && !agents.includes(options.agent)) throw new SwitchboardError('INVALID_PARAMS', `templateId '${options.agent}' is not one of the team's agents (${agents.join(', ')})`);
    const worker = await this.openWorker(role, options);
    if (worker.failed) throw new SwitchboardError('SPAWN_FAILED', `${worker.id} could not start: ${worker.failed}`);
    return this.viewOf(worker);
  }

  async send(workerId: string, text: string, options: { enter: boolean }, signal: AbortSignal): Promise<void> {
    const agent = this.paneOf(workerId);
    this.typingInto(workerId);
    if (options.enter) await agent.prompt(text, signal);
    else agent.pane.sendText(text);
    this.changed();
  }

  read(workerId: string, lines: number): string[] {
    return this.linesOf(this.paneOf(workerId), lines);
  }

  async wait(workerId: string, until: readonly WaitUntil[], timeoutMs: number, signal: AbortSignal): Promise<{ worker: WorkerView; reached: boolean }> {
    const worker = this.workerNamed(workerId);
    // Idle from before the last text went in is not reached, until the agent's state moves or
    // SEND_SETTLE_MS passes without a move (a program too quick for the tracker to see it busy).
    const settling = (): number => {
      const sentAt = worker.sentAt;
      if (sentAt === undefined || (worker.pane?.state.at ?? 0) >= sentAt) return 0;
      return Math.max(0, sentAt + SEND_SETTLE_MS - Date.now());
    };
    const reached = (): boolean => {
      const state = this.viewOf(worker).state;
      return (until as readonly string[]).includes(state) && !(state === 'idle' && settling() > 0);
    };
    const deadline = Date.now() + timeoutMs;
    // Across a restart too: while the worker is between two panes, the board's changes say when the new one is there.
    const restarting = (): boolean => worker.pane === undefined && worker.failed === undefined;
    while (!reached() && !signal.aborted && Date.now() < deadline && (restarting() || worker.pane?.pane.alive === true)) {
      const pane = worker.pane;
      // The board's changes too: a worker becomes stuck without a change of its agent's state.
      const events = pane ? anyEvent(pane.onState, pane.pane.onExit, this.onChange) : this.onChange;
      const wake = settling() > 0 ? Math.min(settling(), deadline - Date.now()) : deadline - Date.now();
      await untilEvent(events, () => reached() || worker.pane !== pane || (pane !== undefined && !pane.pane.alive), { timeoutMs: wake, signal });
    }
    return { worker: this.viewOf(worker), reached: reached() };
  }

  confirm(request: { workerId: string; text: string; judgement: RiskJudgement }, signal: AbortSignal): Promise<GateAnswer> {
    if (signal.aborted) return Promise.resolve({ decision: 'deny', by: 'nobody: the call ended before a person could answer', unanswered: true });
    const id = `confirm-${++this.confirmationSeq}`;
    return new Promise<GateAnswer>((resolve) => {
      const done = (answer: GateAnswer): void => {
        if (!this.confirmations.delete(id)) return;
        clearTimeout(deadline);
        signal.removeEventListener('abort', ended);
        this.record({ kind: 'answer', confirmation: id, decision: answer.decision, by: answer.by });
        this.changed();
        resolve(answer);
      };
      const ended = (): void => done({ decision: 'deny', by: 'the run’s end', unanswered: true });
      // A text nobody answers is not held for ever: the planner hears it was denied and goes on.
      const deadline = setTimeout(() => done({ decision: 'deny', by: `nobody: no answer within ${GATE_TIMEOUT_MS / 60_000} minutes`, unanswered: true }), GATE_TIMEOUT_MS);
      const pending = { id, ...request, answer: done };
      this.confirmations.set(id, pending);
      this.record({ kind: 'held', confirmation: id, worker: request.workerId, text: request.text, level: request.judgement.level });
      signal.addEventListener('abort', ended, { once: true });
      this.confirmEmitter.fire({ id, ...request });
      this.changed();
    });
  }

  draft(text: string, mode: 'replace' | 'append'): { chars: number } {
    this.draftText = mode === 'append' ? this.draftText + text : text;
    this.changed();
    return { chars: this.draftText.length };
  }

  complete(summary: string): void {
    this.summary = summary;
    this.step({ kind: 'complete', by: 'the planner' });
  }

  // ---- what a person does ----

  /** Who the agent in pane `paneId` is in this run, if it is one of its agents. */
  memberOf(paneId: string): TeamMember | undefined {
    if (this.planner?.pane.id === paneId) return { kind: 'planner' };
    const worker = [...this.workersById.values()].find((w) => w.pane?.pane.id === paneId);
    return worker ? { kind: 'worker', workerId: worker.id } : undefined;
  }

  /**
   * A tool called over MCP by one of the run's agents: the same tools and results as a marker
   * line's, answered to the caller at once. While the run is paused the call waits; once it has
   * ended, the call is refused.
   */
  async callTool(member: TeamMember, name: string, params: unknown, signal: AbortSignal): Promise<ToolOutcome> {
    await this.untilRunning(signal);
    if (signal.aborted) return { ok: false, error: { code: 'SHUTTING_DOWN', message: 'the caller went away before the call ran' } };
    if (this.current !== 'running') return { ok: false, error: { code: 'CONFLICT', message: teamEnded(this.current) ? `the team run has ended (${this.current})` : `the team run is ${this.current}` } };
    const record: CallRecord = { id: `mcp-${++this.mcpCalls}`, method: name, by: member.kind === 'planner' ? 'planner' : member.workerId, via: 'mcp', outcome: 'ok', delivered: 'pending' };
    this.keepCall(record);
    this.changed();
    const outcome = await callTeamTool(name, params, member.kind === 'planner' ? { kind: 'planner' } : { kind: 'worker', workerId: member.workerId }, this.toolDeps(signal));
    record.outcome = outcome.ok ? 'ok' : outcome.error.code;
    // Answered over MCP there and then: it reached its caller unless the caller went away (an
    // aborted signal has a reason; `aborted` itself reads as narrowed by the check above).
    this.recordCall(record, params, outcome);
    // (Answered over MCP: never kept for a resend, there is nobody to type it to.)
    this.record({ kind: 'delivery', call: record.id, delivered: (record.delivered = signal.reason === undefined ? 'delivered' : 'undelivered') });
    this.changed();
    return outcome;
  }

  /** The texts the risk gate holds now. */
  pendingConfirmations(): PendingConfirmation[] {
    return [...this.confirmations.values()].map(({ answer: _answer, ...pending }) => pending);
  }

  /** A person's answer to a held text; CONFLICT when it is no longer held. */
  answerConfirmation(id: string, decision: GateAnswer['decision'], by: string): void {
    const pending = this.confirmations.get(id);
    if (!pending) throw new SwitchboardError('CONFLICT', `no text waits for confirmation as ${id} (answered already, or the run ended)`, { confirmation_id: id });
    pending.answer({ decision, by });
  }

  /**
   * A person's text to one worker, or to every running worker (`workerId` undefined), as a prompt.
   * Judged first as the planner's texts are, for each worker it goes to: a high or medium text
   * goes only once the person saw the judgement (`confirmed`), else it is held and nothing is sent.
   */
  async sendFromPerson(workerId: string | undefined, text: string, confirmed: boolean, by: string, signal: AbortSignal): Promise<{ sent: string[]; judgement: RiskJudgement; held: boolean }> {
    const targets = workerId !== undefined ? [this.workerNamed(workerId)] : [...this.workersById.values()].filter((w) => w.pane?.pane.alive === true);
    if (targets.length === 0) throw new SwitchboardError('CONFLICT', 'no worker of this run is running to send to');
    const judgements = targets.map((w) => judgeRisk(text, this.riskContextOf(w.id)));
    const rank = { low: 0, medium: 1, high: 2 } as const;
    const judgement = judgements.reduce((worst, j) => (rank[j.level] > rank[worst.level] ? j : worst));
    if (judgement.level !== 'low' && !confirmed) {
      // Held: `workers` are the ones it was for, and it went to none.
      this.record({ kind: 'send', by, workers: targets.map((w) => w.id), text, level: judgement.level, held: true });
      return { sent: [], judgement, held: true };
    }
    const sent: string[] = [];
    try {
      for (const worker of targets) {
        const agent = this.paneOf(worker.id);
        this.typingInto(worker.id);
        await agent.prompt(text, signal);
        sent.push(worker.id);
      }
    } finally {
      // What went, as far as it went.
      this.record({ kind: 'send', by, workers: sent, text, level: judgement.level, held: false });
      this.changed();
    }
    return { sent, judgement, held: false };
  }

  /**
   * Types a call's result into the planner again, once it is idle: for a result that could not be
   * typed, or that no screen confirmed (a person saw the planner did not get it). CONFLICT for any
   * other call, one answered over MCP, or once the run has ended.
   */
  resend(callId: string, by: string): void {
    const record = this.calls.find((c) => c.id === callId);
    if (!record) throw new SwitchboardError('INVALID_PARAMS', `no call ${callId} in this run`, { call_id: callId });
    if (teamEnded(this.current)) throw new SwitchboardError('CONFLICT', `the team run has ended (${this.current}): there is no planner to type to`, { call_id: callId });
    const text = this.unsentResults.get(callId);
    if (record.delivered === 'pending' || record.delivered === 'delivered' || text === undefined) {
      const why = record.via === 'mcp' ? 'it was answered over MCP' : `it is ${record.delivered}`;
      throw new SwitchboardError('CONFLICT', `call ${callId}'s result cannot be sent again: ${why}`, { call_id: callId, delivered: record.delivered });
    }
    this.unsentResults.delete(callId);
    record.delivered = 'pending';
    this.record({ kind: 'resend', call: callId, by });
    this.changed();
    this.deliver({ text, record });
  }

  /**
   * Restarts a stuck worker, or one whose CLI ended, with a person's consent (this call): its pane
   * closed, a new one opened for it (same role, agent and folder), at most the preset's
   * `stuck.max_restarts` times (LIMIT_EXCEEDED past that). CONFLICT for a worker that is neither,
   * or once the run has ended.
   */
  async restartWorker(workerId: string, by: string): Promise<WorkerView> {
    const worker = this.workerNamed(workerId);
    if (teamEnded(this.current)) throw new SwitchboardError('CONFLICT', `the team run has ended (${this.current})`, { tab_id: workerId });
    const state = this.viewOf(worker).state;
    const exited = worker.pane !== undefined && !worker.pane.pane.alive;
    if (state !== 'stuck' && !exited && worker.failed === undefined) throw new SwitchboardError('CONFLICT', `${workerId} is ${state}: only a stuck worker, or one whose CLI ended, is restarted`, { tab_id: workerId, state });
    const cap = this.preset.stuck.max_restarts;
    if (worker.restarts >= cap) throw new SwitchboardError('LIMIT_EXCEEDED', `${workerId} was restarted ${worker.restarts} time(s) already, the preset's most (stuck.max_restarts: ${cap})`, { tab_id: workerId, max: cap });
    worker.restarts++;
    this.record({ kind: 'restart', worker: workerId, by });
    const old = worker.pane;
    worker.pane = undefined;
    delete worker.failed;
    if (worker.mark === 'stuck') delete worker.mark;
    this.changed();
    if (old) await this.options.host.closeAgent(old).catch(() => undefined);
    await this.startWorker(worker);
    return this.viewOf(worker);
  }

  pause(by: string): void {
    this.step({ kind: 'pause', by });
  }

  resume(by: string): void {
    this.step({ kind: 'resume', by });
    this.runCalls();
  }

  /** Marks a worker done, blocked (stuck) or needing input, over what its screen says; `undefined` clears the mark. */
  markWorker(workerId: string, mark: Worker['mark'], by: string): void {
    const worker = this.workerNamed(workerId);
    if (mark === undefined) delete worker.mark;
    else worker.mark = mark;
    this.record({ kind: 'mark', worker: workerId, mark: mark ?? null, by });
    this.changed();
  }

  /** Ends the run (cancelled, unless it ended already), closing the agents' panes when `closeAgents`. */
  async end(by: string, closeAgents: boolean): Promise<void> {
    if (!teamEnded(this.current)) this.step({ kind: 'cancel', by });
    if (!closeAgents) return;
    await this.closeWorkers(true);
    await this.removeUnchangedWorktrees();
  }

  /**
   * Once its workers are closed, each worktree that holds nothing of its worker's goes, with its
   * branch; one with any change stays for the person (the report says where). Read first, so the
   * record's last board has what each held.
   */
  private async removeUnchangedWorktrees(): Promise<void> {
    await this.refreshChanges();
    for (const worker of this.workersById.values()) {
      const worktree = worker.worktree;
      if (!worktree || worker.worktreeRemoved === true || worker.pane?.pane.alive === true) continue;
      let outcome: { removed: boolean; branchRemoved: boolean };
      try {
        outcome = await removeUnchangedWorktree(worktree);
      } catch {
        // Gone already, or git refused (a file written at the last moment): it stays.
        outcome = { removed: false, branchRemoved: false };
      }
      if (outcome.removed) worker.worktreeRemoved = true;
      this.record({ kind: 'worktree', worker: worker.id, branch: worktree.branch, path: worktree.path, ...outcome });
    }
    this.changed();
  }

  /** The run's report as markdown. */
  report(): string {
    return reportOf(this.board());
  }

  /** The board as it is now. */
  board(): TeamBoard {
    const plannerRole = plannerOf(this.preset);
    const tasks = this.tasks.list();
    const next = this.tasks.ready()[0];
    return {
      id: this.id,
      goal: this.goal,
      preset: this.preset.name,
      state: this.current,
      why: this.why,
      version: this.version,
      startedAt: this.startedAt,
      ...(this.endedAt ? { endedAt: this.endedAt } : {}),
      planner: { role: plannerRole.name, agent: plannerRole.agent, paneId: this.planner?.pane.id ?? null, state: this.planner ? stateOf(this.planner.state.state) : 'starting' },
      workers: [...this.workersById.values()].map((w) => ({
        ...this.viewOf(w),
        paneId: w.pane?.pane.id ?? null,
        ...(w.changes ? { changes: w.changes } : {}),
        ...(w.checks.length > 0 ? { checks: w.checks.map((c) => ({ ...c })) } : {}),
      })),
      tasks,
      nextStep: next ? `${next.id}: ${next.title}` : null,
      confirmations: this.pendingConfirmations(),
      calls: this.callLog(),
      approvals: this.decisions.map((d) => ({ ...d })),
      draft: this.draftText,
      summary: this.summary ?? null,
      ...(this.startedBy !== undefined ? { startedBy: this.startedBy } : {}),
    };
  }

  /** The tool calls so far (the planner's, and workers' task tools over MCP), each with how it went and whether its answer arrived. */
  callLog(): CallRecord[] {
    return this.calls.map((c) => ({ ...c }));
  }

  dispose(): void {
    this.abort.abort();
    this.acting.dispose();
    this.store.dispose();
  }

  // ---- inside ----

  private async openWorker(role: TeamRole, options: { agent?: string; folder?: string }): Promise<Worker> {
    const n = (this.counts.get(role.name) ?? 0) + 1;
    this.counts.set(role.name, n);
    const worker: Worker = { id: `${role.name}-${n}`, role, agent: options.agent ?? role.agent, folder: this.folderOf(options.folder ?? role.folder), pane: undefined, restarts: 0, checks: [] };
    this.workersById.set(worker.id, worker);
    this.changed();
    await this.startWorker(worker);
    return worker;
  }

  /** Its worktree first, for a role that has them (never the shared folder instead), then its agent. */
  private async startWorker(worker: Worker): Promise<void> {
    if (worker.role.worktree && !worker.worktree) {
      try {
        await this.giveWorktree(worker);
      } catch (err) {
        worker.failed = `no worktree: ${err instanceof Error ? err.message : String(err)}`;
        this.record({ kind: 'worker', worker: worker.id, role: worker.role.name, agent: worker.agent, folder: worker.folder, paneId: null, failed: worker.failed });
        this.changed();
        return;
      }
    }
    await this.launch(worker);
  }

  /** Starts the worker's agent in a new pane, and follows it (its state, its approvals, whether it is stuck). */
  private async launch(worker: Worker): Promise<void> {
    const role = worker.role;
    try {
      const agent = await this.options.host.startAgent({ agent: worker.agent, folder: worker.folder, title: `${worker.id} (${worker.agent})`, runId: this.id, member: { kind: 'worker', workerId: worker.id } }, this.abort.signal);
      worker.pane = agent;
      this.store.add(agent.onState(() => worker.pane === agent && this.changed()));
      this.followApprovals(agent, role, worker.id, policyOf(role));
      if (!teamEnded(this.current)) this.stuck.watch(worker.id, agent, { afterMs: role.stuck_after_s * 1000, nudge: this.preset.stuck.nudge, maxNudges: this.preset.stuck.max_nudges });
    } catch (err) {
      worker.failed = err instanceof Error ? err.message : String(err);
    }
    this.record({ kind: 'worker', worker: worker.id, role: role.name, agent: worker.agent, folder: worker.folder, paneId: worker.pane?.pane.id ?? null, ...(worker.failed !== undefined ? { failed: worker.failed } : {}) });
    this.changed();
  }

  private viewOf(worker: Worker): WorkerView {
    const pane = worker.pane;
    const shown = pane ? stateOf(pane.state.state) : 'starting';
    // Stuck shows over running only: a worker waiting on a person still needs input (it is recorded as stuck).
    const state = worker.failed ? 'error' : (worker.mark ?? (shown === 'running' && this.stuck.isStuck(worker.id) ? 'stuck' : shown));
    return { id: worker.id, role: worker.role.name, agent: worker.agent, state, folder: worker.folder, lastLines: pane ? this.linesOf(pane, LAST_LINES) : worker.failed ? [worker.failed] : [] };
  }

  private linesOf(agent: AgentPane, lines: number): string[] {
    const shown = withoutMarkerLines(agent.pane.readText(lines, { joinWrapped: true }).lines);
    while (shown.length > 0 && (shown[shown.length - 1] ?? '').trim() === '') shown.pop();
    return shown;
  }

  private workerNamed(workerId: string): Worker {
    const worker = this.workersById.get(workerId);
    if (!worker) throw new SwitchboardError('INVALID_PARAMS', `no worker ${workerId} (there are: ${[...this.workersById.keys()].join(', ') || 'none'})`, { tab_id: workerId });
    return worker;
  }

  private paneOf(workerId: string): AgentPane {
    const worker = this.workerNamed(workerId);
    if (!worker.pane || !worker.pane.pane.alive) throw new SwitchboardError('PANE_EXITED', `${workerId} is not running${worker.failed ? `: ${worker.failed}` : ''}`, { tab_id: workerId });
    return worker.pane;
  }

  private folderOf(folder: string): string {
    // A role's folder is relative to the run's; an absolute one stands (the preset's import review named it).
    return path.resolve(this.options.folder, folder);
  }

  /**
   * A worktree of the repository the worker's folder is in, under the home's `worktrees/<run>/`,
   * on branch `switchboard/<run>/<worker>`; the worker works in the same place inside it.
   */
  private async giveWorktree(worker: Worker): Promise<void> {
    const root = this.options.worktrees;
    if (root === undefined) throw new SwitchboardError('CONFLICT', 'this daemon has no folder for worktrees', { role: worker.role.name });
    const repository = await repositoryOf(worker.folder);
    if (repository === undefined) throw new SwitchboardError('INVALID_PARAMS', `role ${worker.role.name} asks for a git worktree, and ${worker.folder} is in no git repository`, { role: worker.role.name });
    // git answers the real path (symlinks resolved): compared with the folder's real path, or the
    // worker could land outside its worktree.
    const inside = path.relative(repository, realpathSync(worker.folder));
    if (inside.startsWith('..') || path.isAbsolute(inside)) throw new SwitchboardError('CONFLICT', `${worker.folder} is not inside its repository ${repository} as git sees it`, { role: worker.role.name });
    worker.worktree = await addWorktree(repository, path.join(root, this.id, worker.id), `switchboard/${this.id}/${worker.id}`);
    worker.folder = path.join(worker.worktree.path, inside);
  }

  /** Reads again what each worker with a worktree changed (for the board's record and the report), one read at a time. */
  refreshChanges(): Promise<void> {
    // A read that failed does not stop the next one.
    this.changesRead = this.changesRead.then(() => this.readChanges()).catch(() => undefined);
    return this.changesRead;
  }

  private async readChanges(): Promise<void> {
    let changed = false;
    for (const worker of this.workersById.values()) {
      if (!worker.worktree) continue;
      try {
        worker.changes = await worktreeChanges(worker.worktree);
        changed = true;
      } catch {
        // The worktree went (a person removed it): the last changes read stand.
      }
    }
    if (changed) this.changed();
  }

  /**
   * Runs `workerId`'s role check, if it has one, in its folder: the result goes on the board and
   * in the record, and a failing one's output back to the worker, as a prompt. Undefined: no check.
   */
  async check(workerId: string, taskId: string, options: { tell: boolean }, signal: AbortSignal): Promise<CheckResult | undefined> {
    const worker = this.workerNamed(workerId);
    const command = worker.role.check;
    if (command === undefined) return undefined;
    // One check of a task at a time: two in one folder would race, and the later answer would stand.
    if (this.checking.has(taskId)) throw new SwitchboardError('CONFLICT', `the check of ${taskId} is running already`, { task: taskId });
    this.checking.add(taskId);
    const stop = new AbortController();
    const onRunEnd = (): void => stop.abort('the run ended while it ran');
    const onCallEnd = (): void => stop.abort('the call that ran it ended');
    this.abort.signal.addEventListener('abort', onRunEnd, { once: true });
    signal.addEventListener('abort', onCallEnd, { once: true });
    if (this.abort.signal.aborted) onRunEnd();
    if (signal.aborted) onCallEnd();
    let result: CheckResult;
    try {
      result = await runCheck(command, worker.folder, checkEnv(), stop.signal);
    } finally {
      this.checking.delete(taskId);
      this.abort.signal.removeEventListener('abort', onRunEnd);
      signal.removeEventListener('abort', onCallEnd);
    }
    worker.checks.push(result);
    if (worker.checks.length > MAX_CHECKS) worker.checks.shift();
    this.record({ kind: 'check', worker: workerId, task: taskId, command, passed: result.passed, exitCode: result.exitCode, ms: result.ms, output: result.output });
    if (options.tell && !result.passed && !stop.signal.aborted && worker.pane?.pane.alive === true && !teamEnded(this.current)) {
      this.typingInto(workerId);
      void worker.pane.prompt(checkFailedPrompt(taskId, result), this.abort.signal).catch(() => undefined);
    }
    this.changed();
    return result;
  }

  /** The new calls on the planner's screen and history, queued in order. */
  private readCalls(): void {
    // Only a planner told the nonce can write a valid line: an MCP planner's screen is not read for calls.
    if (!this.planner || this.callsVia !== 'markers' || teamEnded(this.current)) return;
    this.takeCallLines(this.planner.pane.readText(CALL_SCAN_LINES, { joinWrapped: true }).lines);
  }

  /**
   * Reads the planner's replies from its transcript, where the host can: the lines as the model
   * wrote them. One read at a time; a read asked for meanwhile follows it. A turn is read until the
   * transcript shows it done; one it never shows is given up (TURN_FIND_PATIENCE_MS, or its planner
   * idle TURN_IDLE_PATIENCE_MS since), so a slow reader (OpenCode's database, a query a look) is
   * not run for ever.
   */
  private readTurns(): void {
    const planner = this.planner;
    if (!planner || this.turns.length === 0 || this.abort.signal.aborted) return;
    if (this.readingTurns) {
      this.turnReadAgain = true;
      return;
    }
    this.readingTurns = true;
    this.turnReadAgain = false;
    const idleSince = planner.state.state === 'idle' ? planner.state.at : undefined;
    const readAll = async (): Promise<void> => {
      for (const turn of [...this.turns]) {
        // Idle, and done with this text (idle again since it went in, or its typing over): a reader
        // that looks only at an idle planner never runs while the text is being typed.
        const idle = idleSince !== undefined && (idleSince >= turn.typedAt || turn.typed);
        const read = await turn.reader.read({ idle }).catch(() => undefined);
        if (!read?.found) continue;
        if (!turn.found) {
          turn.found = true;
          if (turn.record) this.seenByPlanner(turn.record);
        }
        if (!this.abort.signal.aborted) this.takeCallLines(read.reply.split(/\r?\n/));
        if (read.done) turn.done = true;
      }
    };
    void readAll()
      .catch(() => undefined)
      .finally(() => {
        this.readingTurns = false;
        const now = Date.now();
        const idleFor = (turn: PlannerTurn): number => (idleSince === undefined ? 0 : now - Math.max(idleSince, turn.typedAt));
        const givenUp = (turn: PlannerTurn): boolean => (!turn.found && now - turn.typedAt > TURN_FIND_PATIENCE_MS) || idleFor(turn) > TURN_IDLE_PATIENCE_MS;
        this.turns = this.turns.filter((turn) => !turn.done && !givenUp(turn)).slice(-MAX_PLANNER_TURNS);
        // The transcript may be written after the screen went still: read again while a turn is open.
        if ((this.turnReadAgain || this.turns.length > 0) && !this.abort.signal.aborted) {
          this.turnReadAgain = false;
          setTimeout(() => this.readTurns(), TURN_READ_GAP_MS).unref();
        }
      });
  }

  /** Marker lines not seen before, from the screen or the transcript, to the reader and on to be run. */
  private takeCallLines(lines: readonly string[]): void {
    const fresh = lines.filter((line) => line.includes(TOOL_PREFIX) && !this.seenLines.has(line));
    if (fresh.length === 0) return;
    for (const line of fresh) {
      if (this.seenLines.size >= MAX_SEEN_LINES) this.seenLines.clear();
      this.seenLines.add(line);
    }
    this.callQueue.push(...this.reader.read(fresh.join('\n')));
    this.runCalls();
  }

  /** Runs the queued calls one at a time, in order, unless the run is paused or over. */
  private runCalls(): void {
    if (this.runningCall || this.current !== 'running') return;
    const next = this.callQueue.shift();
    if (!next) return;
    this.runningCall = true;
    const record: CallRecord = { id: next.id, method: next.method, by: 'planner', via: 'markers', outcome: 'ok', delivered: 'pending' };
    this.keepCall(record);
    void callTeamTool(next.method, next.params, { kind: 'planner' }, this.toolDeps(this.abort.signal))
      .then((outcome: ToolOutcome) => {
        record.outcome = outcome.ok ? 'ok' : outcome.error.code;
        this.recordCall(record, next.params, outcome);
        const item = { text: resultLine(next.id, outcome), record };
        // The run ended (this call may have ended it): nothing more is typed into the planner.
        if (teamEnded(this.current)) this.delivered(item, 'undelivered');
        else this.deliver(item);
      })
      .finally(() => {
        this.runningCall = false;
        this.changed();
        this.runCalls();
      });
  }

  /** A call's end, for the record: what it was called with, and how it went. */
  private recordCall(record: CallRecord, params: unknown, outcome: ToolOutcome): void {
    this.record({ kind: 'call', id: record.id, method: record.method, by: record.by, via: record.via, params, outcome: record.outcome, ...(outcome.ok ? {} : { message: outcome.error.message }) });
  }

  /**
   * The planner's transcript recorded this result: it was delivered, whatever the screen said (a
   * typing still going on counts as delivered when it ends, even if the run ended meanwhile).
   */
  private seenByPlanner(record: CallRecord): void {
    this.takenByPlanner.add(record);
    if (record.delivered !== 'unconfirmed' && record.delivered !== 'undelivered') return;
    record.delivered = 'delivered';
    this.unsentResults.delete(record.id);
    this.record({ kind: 'delivery', call: record.id, delivered: 'delivered' });
    this.changed();
  }

  private delivered(item: { text: string; record?: CallRecord }, delivered: Exclude<CallRecord['delivered'], 'pending'>): void {
    const record = item.record;
    if (!record) return;
    if (this.takenByPlanner.has(record)) delivered = 'delivered';
    record.delivered = delivered;
    if (delivered !== 'delivered') {
      const oldest = this.unsentResults.keys().next();
      if (this.unsentResults.size >= MAX_UNSENT_RESULTS && oldest.done !== true) this.unsentResults.delete(oldest.value);
      this.unsentResults.set(record.id, item.text);
    }
    this.record({ kind: 'delivery', call: record.id, delivered });
  }

  private record(entry: TeamRecordEntry): void {
    try {
      this.recordEmitter.fire(entry);
    } catch {
      // The recorder's own failure (it logs it): never the run's.
    }
  }

  /** Text begins to go to `workerId`: its state from before says nothing of it (see `wait`). */
  private typingInto(workerId: string): void {
    const worker = this.workersById.get(workerId);
    if (worker) worker.sentAt = Date.now();
  }

  /** Types the preset's nudge into a stuck worker (it may be busy: the CLI takes it as its next input). */
  private nudge(workerId: string, text: string): void {
    const agent = this.workersById.get(workerId)?.pane;
    if (!agent?.pane.alive || teamEnded(this.current)) return;
    this.record({ kind: 'nudge', worker: workerId, text });
    this.typingInto(workerId);
    void agent.prompt(text, this.abort.signal).catch(() => undefined);
  }

  private keepCall(record: CallRecord): void {
    this.calls.push(record);
    if (this.calls.length > MAX_CALLS) this.calls.shift();
  }

  /** Resolves once the run is running or has ended (not starting, not paused), or when `signal` aborts. */
  private async untilRunning(signal: AbortSignal): Promise<void> {
    const waiting = (): boolean => this.current === 'paused' || this.current === 'starting';
    if (waiting()) await untilEvent(this.onChange, () => !waiting(), { signal });
  }

  private toolDeps(signal: AbortSignal): Parameters<typeof callTeamTool>[3] {
    return {
      port: this,
      tasks: this.tasks,
      riskContext: (workerId) => this.riskContextOf(workerId),
      medium: this.preset.risk.medium,
      unsent: this.unsent,
      signal: AbortSignal.any([this.abort.signal, signal]),
    };
  }

  /** Answers `agent`'s approval prompts by its role's policy, in its folder, each decision on the board. */
  private followApprovals(agent: AgentPane, role: TeamRole, member: string, policy: ApprovalPolicy): void {
    const context = { workdir: agent.pane.cwd, home: this.options.home };
    if (teamEnded(this.current)) return;
    this.acting.add(
      new RoleApprovals(agent, role.name, policy, context, (decision) => {
        this.decisions.push({ ...decision, member });
        this.record({ kind: 'decision', member, ...decision });
        if (this.decisions.length > MAX_DECISIONS) this.decisions.shift();
        this.changed();
      }),
    );
  }

  /** How a text for `workerId` is judged: its role's approval policy, in its folder. */
  private riskContextOf(workerId: string): RiskContext {
    const worker = this.workersById.get(workerId);
    return { policy: policyOf(worker?.role), workdir: worker?.folder ?? this.options.folder, home: this.options.home };
  }

  /** Queues text for the planner, typed once it is idle. */
  private deliver(item: { text: string; record?: CallRecord }): void {
    this.deliveries.push(item);
    this.pumpDeliveries();
  }

  private pumpDeliveries(): void {
    const planner = this.planner;
    if (this.delivering || !planner || teamEnded(this.current) || planner.state.state !== 'idle') return;
    const next = this.deliveries.shift();
    if (!next) return;
    this.delivering = true;
    const signal = AbortSignal.any([this.abort.signal, AbortSignal.timeout(this.options.deliveryTimeoutMs ?? DELIVERY_TIMEOUT_MS)]);
    // A planner that calls by marker lines has its reply to this text read from its transcript
    // too, where its CLI writes one, until the transcript shows that turn done (readTurns).
    const marked = this.callsVia === 'markers' ? this.options.host.transcriptTurn?.(planner, next.text) : undefined;
    const turn: PlannerTurn | undefined = marked ? { reader: marked.reader, record: next.record, typedAt: Date.now(), typed: false, found: false, done: false } : undefined;
    if (turn) {
      this.turns.push(turn);
      // Not on each frame the planner draws: readTurns polls itself while a turn is open.
      this.readTurns();
    }
    void planner
      .prompt(marked?.text ?? next.text, signal)
      .finally(() => {
        if (turn) turn.typed = true;
      })
      .then(
        (submission) => this.delivered(next, submission.confirmedBy === 'exited' ? 'undelivered' : submission.confirmedBy === 'unconfirmed' ? 'unconfirmed' : 'delivered'),
        // Never typed again by itself: what did not arrive is shown as undelivered, for a person to resend.
        () => this.delivered(next, 'undelivered'),
      )
      .finally(() => {
        this.delivering = false;
        this.changed();
        this.pumpDeliveries();
      });
  }

  private step(event: TeamEvent): void {
    const change = stepTeam(this.current, event);
    this.current = change.to;
    this.why = change.why;
    this.record({ kind: 'state', from: change.from, to: change.to, why: change.why });
    if (teamEnded(this.current)) {
      this.endedAt = new Date().toISOString();
      // Results still waiting to be typed never will be: they show as undelivered, not pending.
      for (const item of this.deliveries.splice(0)) this.delivered(item, 'undelivered');
      // What the worktrees hold at the end, for the record's last board and the report.
      void this.refreshChanges();
      this.abort.abort();
      this.acting.dispose();
      this.stuck.dispose();
    }
    this.changed();
  }

  private async closeWorkers(planner = false): Promise<void> {
    const agents = [...this.workersById.values()].flatMap((w) => (w.pane ? [w.pane] : []));
    if (planner && this.planner) agents.push(this.planner);
    await Promise.allSettled(agents.map((a) => this.options.host.closeAgent(a)));
  }

  private changed(): void {
    this.changes++;
    this.changeEmitter.fire();
  }
}

/** A worker's state as the board names it, from its agent's. */
function stateOf(state: AgentState): WorkerView['state'] {
  switch (state) {
    case 'thinking':
    case 'executing':
      return 'running';
    case 'waiting_approval':
    case 'waiting_input':
      return 'needs_input';
    case 'exited':
      return 'error';
    default:
      return state;
  }
}

/** The approval policy a role's worker runs under, for the risk gate's judgement. */
function policyOf(role: TeamRole | undefined): ApprovalPolicy {
  if (!role || role.approvals === 'auto') return AUTO_APPROVE_POLICY;
  if (role.approvals === 'ask') return ASK_POLICY;
  return parsePolicy(role.approvals);
}
