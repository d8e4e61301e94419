/**
 * CodingAgent: drives an interactive agent CLI through a task to the end (seed 002). It starts the
 * real CLI in a pane, types the task, follows the agent's state from its screen, answers approval
 * prompts through the approval broker (the policy, the caller's onApproval, a person), pauses on
 * questions it cannot answer, and reports what happened: status, files changed, the approvals and
 * why, the final message. One agent session serves several tasks in turn.
 *
 * The agent in its pane is an AgentPane (src/agents/live/agent-pane.ts); each turn is the state machine
 * of turn.ts, run by run-turn.ts. The registry, the catalog and the agent panes can be injected (the
 * daemon's: `agent_execute` runs a task in a pane that `list`, the dashboard and `answer_approval`
 * see); without them the agent makes its own when it first needs them. Nothing is read or started
 * in the constructor.
 */
import { homedir } from 'node:os';
import { DisposableStore } from '../../core/disposable.js';
import { Emitter, type Event } from '../../core/emitter.js';
import { SwitchboardError, type ErrorCode } from '../../core/errors.js';
import { silentLogger, type Logger } from '../../core/logger.js';
import { AgentCatalog, AgentPane, RETRYING_RULE, startAgent, type AgentPanes, type AgentProfile, type ApprovalPrompt, type StateChange } from '../../agents/index.js';
import { PaneRegistry, type Pane } from '../../pane/index.js';
import { diffSnapshots, snapshotWorkdir, type FileChange, type WorkdirSnapshot } from './files-changed.js';
import { ASK_POLICY, AUTO_APPROVE_POLICY, type ApprovalPolicy, type PolicyVerdict } from '../../approvals/index.js';
import { extractFinalMessage } from '../../agents/index.js';
import { outcomeOfError, runTurn, type TurnHooks } from './run-turn.js';
import type { ApprovalRecord, ExecuteStatus, TurnOutcome } from './turn.js';

export type { ApprovalRecord } from './turn.js';

export interface ExecuteResult {
  status: ExecuteStatus;
  filesChanged: string[];
  fileChanges: FileChange[];
  /** The agent's screen text for this task: what scrolled by and what is on screen at the end. */
  outputLog: string;
  /** The agent's last reply, as shown on screen (null when none could be read). */
  finalMessage: string | null;
  durationMs: number;
  approvals: ApprovalRecord[];
  errorMessage: string | null;
  /**
   * For error and timeout: the stable code (SPAWN_FAILED when the CLI could not start, TIMEOUT,
   * AGENT_ERROR when the agent showed an error or exited, …), so a caller can branch without
   * reading the message.
   */
  errorCode: ErrorCode | null;
  /** For needs_input: the question or approval the agent is waiting on. */
  question: string | null;
  /** Every state change of the task, with its evidence. */
  states: StateChange[];
  /** For completed: the signals that together ended the turn ("idle prompt", "quiet 700 ms", "status file: idle", …). */
  completedBy: string[];
}

export type ProgressEvent =
  | { type: 'state'; change: StateChange }
  | { type: 'approval'; approval: ApprovalRecord }
  | { type: 'output'; text: string }
  | { type: 'started'; paneId: string; version: string | undefined };

export interface CodingAgentOptions {
  /** The agent profile: claude, codex, gemini, opencode, aider, or a user-defined one. */
  tool: string;
  /** true: the built-in auto-approve policy; false (default): everything is asked; or a policy. */
  autoApprove?: boolean | ApprovalPolicy;
  /** Longest a task may take (default 30 minutes). */
  timeoutMs?: number;
  /** Longest the agent may go without any change on screen while it works (default 5 minutes). */
  idleTimeoutMs?: number;
  onProgress?: (event: ProgressEvent) => void;
  /**
   * Asked when the policy says 'ask'; without it, or when it answers 'ask' itself, the task waits
   * for a person (with waitForPerson) or returns needs_input.
   */
  onApproval?: (request: ApprovalPrompt | null, verdict: PolicyVerdict) => Promise<'allow' | 'deny' | 'ask'> | 'allow' | 'deny' | 'ask';
  /**
   * An approval neither the policy nor onApproval decides waits for a person's answer through the
   * pane's AgentPane (the daemon's answer_approval, the dashboard) instead of returning needs_input.
   */
  waitForPerson?: boolean;
  /** Asked when the agent asks something; an answer is typed in, null returns needs_input. */
  onQuestion?: (question: string) => Promise<string | null> | string | null;
  /** Run the CLI from this isolated HOME against a model server (tests, demos). */
  sandbox?: { home: string; modelUrl: string };
  /** Profiles to choose from (default: built-ins plus the user's agents.yaml, read at the first start). */
  catalog?: AgentCatalog;
  /**
   * The registry the agent's pane is created in (default: one of its own, made at the first start).
   * Given, it is the caller's: its pane defaults (size, base environment) apply and dispose() leaves it open.
   */
  registry?: PaneRegistry;
  /** The registry's agent panes (the daemon's), so the task's pane is the one its logs and answer_approval see. */
  agentPanes?: AgentPanes;
  /** Where else to look for the CLI. */
  binaryDirs?: string[];
  env?: Record<string, string>;
  args?: string[];
  /** Scopes of the token the pane's programs get (see CreatePaneOptions.scopes). */
  scopes?: readonly string[];
  logger?: Logger;
}

/** Questions in a row that onQuestion may answer within one task before it is handed back. */
const MAX_QUESTION_ROUNDS = 5;

/** The agent's session: the agent in its pane, and the folder it works in. */
interface Session {
  agent: AgentPane;
  /** What the session listens to (the pane's output, for progress). */
  subscriptions: DisposableStore;
  /** Disposed with the session when the agent pane is this CodingAgent's own (not the daemon's). */
  owned: boolean;
  workdir: string;
  version: string | undefined;
}

function toPolicy(autoApprove: CodingAgentOptions['autoApprove']): ApprovalPolicy {
  if (autoApprove === true) return AUTO_APPROVE_POLICY;
  if (autoApprove === undefined || autoApprove === false) return ASK_POLICY;
  return autoApprove;
}

export class CodingAgent {
  private registryInUse: PaneRegistry | undefined;
  private catalogInUse: AgentCatalog | undefined;
  private profileInUse: AgentProfile | undefined;
  private readonly policy: ApprovalPolicy;
  private readonly logger: Logger;
  private session: Session | undefined;
  private running = false;
  private readonly progress = new Emitter<ProgressEvent>();
  /** Progress of every task: state changes, approvals, output. */
  readonly onProgress: Event<ProgressEvent> = this.progress.event;

  constructor(private readonly options: CodingAgentOptions) {
    this.logger = options.logger ?? silentLogger;
    this.policy = toPolicy(options.autoApprove);
    // A catalog given is loaded already: an unknown tool fails here, as it always has.
    if (options.catalog) this.profileInUse = options.catalog.get(options.tool);
    if (options.onProgress) this.progress.event(options.onProgress);
  }

  /** The pane the agent runs in, while a session is open. */
  get pane(): Pane | undefined {
    return this.session?.agent.pane;
  }

  /** The agent in its pane, while a session is open (its pending approval, how to answer it). */
  get agentPane(): AgentPane | undefined {
    return this.session?.agent;
  }

  /**
   * Runs one task to its end. Never throws for what the agent does (errors, timeouts, questions
   * and cancellation are statuses); throws only when called while another task runs, with an empty
   * task, or for a tool the catalog does not have.
   */
  async execute(task: string, options: { workdir: string; signal?: AbortSignal }): Promise<ExecuteResult> {
    if (this.running) throw new SwitchboardError('CONFLICT', 'this agent is already running a task; run tasks one after another');
    if (task.trim() === '') throw new SwitchboardError('INVALID_PARAMS', 'the task is empty');
    const profile = this.profile();
    this.running = true;
    const started = performance.now();
    const states: StateChange[] = [];
    const approvals: ApprovalRecord[] = [];
    let before: WorkdirSnapshot | undefined;
    let outcome: TurnOutcome;
    let startLines = 0;
    /** The last thing typed in: the task, or an answer to the model's question. */
    let lastPrompt = task;
    try {
      before = await snapshotWorkdir(options.workdir);
      const session = await this.ensureSession(options.workdir, options.signal);
      startLines = session.agent.pane.readText(0).totalLines;
      outcome = await this.turn(session, task, options.signal, states, approvals);
      // A reply that ends in a question is the model asking, not done: the caller's onQuestion
      // answers it and the task goes on (a few rounds at most), or the task hands it back.
      for (let round = 0; outcome.status === 'completed' && round < MAX_QUESTION_ROUNDS; round++) {
        const reply = replyOnScreen(profile, session.agent.pane, lastPrompt);
        if (!reply?.trimEnd().endsWith('?')) break;
        const answer = this.options.onQuestion ? await this.options.onQuestion(reply) : null;
        if (answer === null || answer.trim() === '') {
          outcome = { status: 'needs_input', errorMessage: null, question: reply };
          break;
        }
        lastPrompt = answer;
        outcome = await this.turn(session, answer, options.signal, states, approvals);
      }
    } catch (err) {
      outcome = outcomeOfError(err, options.signal);
    }
    // What the screen showed is read before a cancelled or timed-out CLI is ended with its pane:
    // the log of a task that timed out is what its caller most needs.
    const session = this.session;
    const outputLog = session ? outputSince(session.agent.pane, startLines) : '';
    const finalMessage = session ? replyOnScreen(profile, session.agent.pane, lastPrompt) : null;
    // Cancellation and timeouts end the CLI: whatever it was doing is abandoned with it. So does an
    // error the CLI keeps retrying: left running, it would go on failing into the next task.
    const retrying = session?.agent.tracker.state.evidence?.rule === RETRYING_RULE;
    if (outcome.status === 'cancelled' || outcome.status === 'timeout' || retrying || !session?.agent.pane.alive) await this.close();
    // Still a question after the rounds allowed: hand it back.
    if (outcome.status === 'completed' && finalMessage?.trimEnd().endsWith('?')) {
      outcome = { status: 'needs_input', errorMessage: null, question: finalMessage };
    }
    const after = before ? await snapshotWorkdir(options.workdir) : undefined;
    const fileChanges = before && after ? diffSnapshots(before, after) : [];
    this.running = false;
    return {
      status: outcome.status,
      filesChanged: fileChanges.map((c) => c.path),
      fileChanges,
      outputLog,
      finalMessage,
      durationMs: Math.round(performance.now() - started),
      approvals,
      errorMessage: outcome.errorMessage,
      errorCode: outcome.status === 'error' || outcome.status === 'timeout' ? (outcome.errorCode ?? (outcome.status === 'timeout' ? 'TIMEOUT' : 'AGENT_ERROR')) : null,
      question: outcome.question,
      states,
      completedBy: outcome.status === 'completed' ? (outcome.completedBy ?? []) : [],
    };
  }

  /**
   * Starts the CLI in `workdir` and waits for its idle prompt, so the first task does not pay for
   * the start (execute() starts it when needed). Throws SPAWN_FAILED, TIMEOUT or INVALID_PARAMS.
   */
  async start(options: { workdir: string; signal?: AbortSignal }): Promise<{ paneId: string; version: string | undefined }> {
    if (this.running) throw new SwitchboardError('CONFLICT', 'this agent is running a task');
    const session = await this.ensureSession(options.workdir, options.signal);
    return { paneId: session.agent.pane.id, version: session.version };
  }

  /** Ends the agent session: the CLI and everything it started. */
  async close(): Promise<void> {
    const session = this.release();
    if (session) await this.registry().remove(session.agent.pane.id, { graceMs: 2_000 }).catch(() => undefined);
  }

  /**
   * Lets go of the agent without ending it: its pane stays the registry's (the daemon's, listed and
   * promptable), and this CodingAgent cannot be used afterwards.
   */
  detach(): void {
    this.release();
    this.progress.dispose();
  }

  /** Closes the session and releases everything (the agent cannot be used afterwards). */
  async dispose(): Promise<void> {
    await this.close();
    // Only a registry this agent made is its to close (and only if it ever made one).
    if (this.options.registry === undefined && this.registryInUse) await this.registryInUse.close({ graceMs: 2_000 });
    this.progress.dispose();
  }

  /** Forgets the session (its own AgentPane disposed); returns it. */
  private release(): Session | undefined {
    const session = this.session;
    this.session = undefined;
    if (!session) return undefined;
    session.subscriptions.dispose();
    if (session.owned) session.agent.dispose();
    return session;
  }

  /** The profile, from the catalog given or (at the first need) the built-ins and the user's file. */
  private profile(): AgentProfile {
    this.profileInUse ??= this.catalog().get(this.options.tool);
    return this.profileInUse;
  }

  private catalog(): AgentCatalog {
    this.catalogInUse ??= this.options.catalog ?? AgentCatalog.load();
    return this.catalogInUse;
  }

  private registry(): PaneRegistry {
    this.registryInUse ??= this.options.registry ?? new PaneRegistry({ logger: this.logger });
    return this.registryInUse;
  }

  private async ensureSession(workdir: string, signal: AbortSignal | undefined): Promise<Session> {
    if (this.session && this.session.workdir === workdir && this.session.agent.pane.alive) return this.session;
    await this.close();
    const profile = this.profile();
    const o = this.options;
    const started = await startAgent(this.registry(), profile, {
      cwd: workdir,
      ...(o.sandbox ? { sandbox: o.sandbox } : {}),
      ...(o.env ? { env: o.env } : {}),
      ...(o.args ? { args: o.args } : {}),
      ...(o.binaryDirs ? { binaryDirs: o.binaryDirs } : {}),
      ...(o.scopes ? { scopes: o.scopes } : {}),
      ...(signal ? { signal } : {}),
      tempRoot: this.catalog().tempRoot,
    });
    // The daemon's agent pane when there is one, so its log, its dashboard and answer_approval see this task.
    const shared = o.agentPanes?.get(started.pane.id);
    const agent = shared ?? new AgentPane(started.pane, profile);
    const subscriptions = new DisposableStore();
    subscriptions.add(started.pane.onOutput((out) => this.progress.fire({ type: 'output', text: out.text })));
    this.session = { agent, subscriptions, owned: shared === undefined, workdir, version: started.version };
    this.progress.fire({ type: 'started', paneId: started.pane.id, version: started.version });
    return this.session;
  }

  private turn(session: Session, text: string, signal: AbortSignal | undefined, states: StateChange[], approvals: ApprovalRecord[]): Promise<TurnOutcome> {
    const o = this.options;
    const home = o.sandbox?.home ?? homedir();
    const onApproval = o.onApproval;
    const hooks: TurnHooks = {
      chain: {
        policy: this.policy,
        context: { workdir: session.workdir, home },
        // The caller's callback sees the prompt as read off the screen.
        ...(onApproval ? { callback: { name: 'onApproval', decide: (_request, verdict) => onApproval(session.agent.approval?.prompt ?? null, verdict), onError: 'throw' as const } } : {}),
        otherwise: 'open',
      },
      waitForPerson: o.waitForPerson === true,
      ...(o.onQuestion ? { onQuestion: o.onQuestion } : {}),
      home,
      onState: (change) => {
        states.push(change);
        this.progress.fire({ type: 'state', change });
      },
      onApproval: (record) => {
        approvals.push(record);
        this.progress.fire({ type: 'approval', approval: record });
      },
    };
    const config = { timeoutMs: o.timeoutMs ?? 30 * 60_000, idleTimeoutMs: o.idleTimeoutMs ?? 5 * 60_000, answersQuestions: o.onQuestion !== undefined };
    return runTurn(session.agent, text, config, hooks, signal);
  }
}

/** The screen text of this task: scrollback from where it began, and the screen at the end. */
function outputSince(pane: Pane, startLines: number): string {
  const total = pane.readText(0).totalLines;
  return pane.readText(Math.max(pane.rows, total - startLines + pane.rows)).lines.join('\n').replace(/\s+$/, '');
}

/** The last reply on the pane's screen, with the model's own line breaks (rows wrapped at the width joined again). */
function replyOnScreen(profile: AgentProfile, pane: Pane, prompt: string): string | null {
  return extractFinalMessage(profile, pane.screenLines({ joinWrapped: true }), prompt, undefined, pane.cols);
}
