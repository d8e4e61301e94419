/**
 * CodingAgent: drives an interactive agent CLI through a task to the end (seed 002). It starts the
 * real CLI in a pane, types the task, follows the agent's state from its screen, answers approval
 * prompts by policy, pauses on questions it cannot answer, and reports what happened: status, files
 * changed, the approvals and why, the final message. One agent session serves several tasks in turn.
 */
import { Emitter, type Event } from '../core/emitter.js';
import { SwitchboardError, type ErrorCode } from '../core/errors.js';
import { silentLogger, type Logger } from '../core/logger.js';
import { homedir } from 'node:os';
import { AgentCatalog, AgentStateTracker, DEFAULT_FIRST_RUN_POLICY, classifyScreen, dialogResponderOf, firstRunPolicyOf, lowestMatchOf, optionFor, parseApproval, pressUntilTaken, promptSettled, readStatusFile, sendPrompt, startAgent, type AgentProfile, type SelfReport, type Screens, type ApprovalRequest, type StateChange } from '../agents/index.js';
import { PaneRegistry, type Pane } from '../pane/index.js';
import { collectProcessTree } from '../platform/index.js';
import { diffSnapshots, snapshotWorkdir, type FileChange, type WorkdirSnapshot } from './files-changed.js';
import { ASK_POLICY, AUTO_APPROVE_POLICY, evaluatePolicy, type ApprovalPolicy, type Decision, type PolicyVerdict } from '../approvals/policy/index.js';
import { extractFinalMessage } from './final-message.js';

export type ExecuteStatus = 'completed' | 'error' | 'timeout' | 'cancelled' | 'needs_input';

/** One approval prompt the agent showed, and how it was answered. */
export interface ApprovalRecord {
  at: number;
  /** What the prompt asked for, as parsed from the screen (null when it could not be parsed). */
  request: Omit<ApprovalRequest, 'row'> | null;
  decision: Decision;
  reason: string;
  /** Who decided: the policy, or the onApproval callback for a policy 'ask'. */
  decidedBy: 'policy' | 'callback' | 'none';
  /** The option chosen and the keys pressed (null when nothing was pressed). */
  answered: { label: string; keys: string[] } | null;
  /** How many times the keys were pressed: more than once when the CLI ignored them (Claude Code drops keys for a moment after drawing a prompt). */
  presses: number;
}

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
  /** Asked when the policy says 'ask'; without it, the task returns needs_input. */
  onApproval?: (request: ApprovalRequest | null, verdict: PolicyVerdict) => Promise<'allow' | 'deny'> | 'allow' | 'deny';
  /** Asked when the agent asks something; an answer is typed in, null returns needs_input. */
  onQuestion?: (question: string) => Promise<string | null> | string | null;
  /** Run the CLI from this isolated HOME against a model server (tests, demos). */
  sandbox?: { home: string; modelUrl: string };
  /** Profiles to choose from (default: built-ins plus the user's agents.yaml). */
  catalog?: AgentCatalog;
  /**
   * The registry the agent's pane is created in (default: one of its own). Given, it is the
   * caller's: its pane defaults (size, base environment) apply and dispose() leaves it open.
   */
  registry?: PaneRegistry;
  /** Where else to look for the CLI. */
  binaryDirs?: string[];
  env?: Record<string, string>;
  args?: string[];
  logger?: Logger;
}

/** How often the turn is checked for completion and stalls, besides on every state change. */
const CHECK_INTERVAL_MS = 100;
/** The idle prompt must hold this long, with no output at all, before a turn counts as done. */
const COMPLETION_QUIET_MS = 700;
/** A turn in which no work was ever seen is done only after this much quiet (a reply drawn at once). */
const NO_WORK_QUIET_MS = 2_500;
/** After keys answer an approval, the same prompt still on screen this long is answered again. */
const APPROVAL_RETRY_MS = 3_000;
/** A question (or a menu no pattern knows) is handed on only once the screen has held still this long: a dialog half drawn looks like one. */
const QUESTION_SETTLE_MS = 500;
/** Questions in a row that onQuestion may answer within one task before it is handed back. */
const MAX_QUESTION_ROUNDS = 5;
/** How long a finished screen waits for a status file that still says "busy" before the screen wins. */
const STATUS_FILE_PATIENCE_MS = 15_000;

interface AgentInPane {
  pane: Pane;
  tracker: AgentStateTracker;
  workdir: string;
  version: string | undefined;
  /** The process whose status file the CLI writes, once found. */
  statusPid?: number;
}

interface TurnOutcome {
  status: ExecuteStatus;
  errorMessage: string | null;
  errorCode?: ErrorCode;
  question: string | null;
  completedBy?: string[];
}

function toPolicy(autoApprove: CodingAgentOptions['autoApprove']): ApprovalPolicy {
  if (autoApprove === true) return AUTO_APPROVE_POLICY;
  if (autoApprove === undefined || autoApprove === false) return ASK_POLICY;
  return autoApprove;
}

/** The subject the policy judges, from what the approval prompt showed. */
function subjectOf(request: ApprovalRequest | null): Parameters<typeof evaluatePolicy>[1] | null {
  if (!request) return null;
  return {
    tool: request.tool,
    ...(request.command !== null ? { command: request.command } : {}),
    ...(request.path !== null ? { path: request.path } : {}),
    ...(request.toolName !== null ? { toolName: request.toolName } : {}),
  };
}

/**
 * The policy's verdict on a prompt read off the screen. A prompt that could not be read, or not with
 * certainty, is asked about whatever the policy would say: approving text that may not be what the
 * CLI runs is how a blocklisted command once ran.
 */
function verdictOnScreen(policy: ApprovalPolicy, request: ApprovalRequest | null, context: { workdir: string; home: string }): PolicyVerdict {
  const subject = subjectOf(request);
  if (!request || !subject) return { decision: 'ask', reason: 'asked: the approval prompt could not be parsed', rule: null, parts: [] };
  const verdict = evaluatePolicy(policy, subject, context);
  if (request.certain || verdict.decision !== 'allow') return verdict;
  return { decision: 'ask', reason: `asked: the prompt could not be read with certainty (${request.doubts.join('; ')})`, rule: null, parts: [] };
}

export class CodingAgent {
  private readonly registry: PaneRegistry;
  private readonly ownsRegistry: boolean;
  private readonly catalog: AgentCatalog;
  private readonly profile: AgentProfile;
  private readonly policy: ApprovalPolicy;
  private readonly logger: Logger;
  private session: AgentInPane | undefined;
  private running = false;
  private readonly progress = new Emitter<ProgressEvent>();
  /** Progress of every task: state changes, approvals, output. */
  readonly onProgress: Event<ProgressEvent> = this.progress.event;

  constructor(private readonly options: CodingAgentOptions) {
    this.logger = options.logger ?? silentLogger;
    this.catalog = options.catalog ?? AgentCatalog.load();
    this.profile = this.catalog.get(options.tool);
    this.policy = toPolicy(options.autoApprove);
    this.ownsRegistry = options.registry === undefined;
    this.registry = options.registry ?? new PaneRegistry({ logger: this.logger });
    if (options.onProgress) this.progress.event(options.onProgress);
  }

  /** The pane the agent runs in, while a session is open. */
  get pane(): Pane | undefined {
    return this.session?.pane;
  }

  /**
   * Runs one task to its end. Never throws for what the agent does (errors, timeouts, questions
   * and cancellation are statuses); throws only when called while another task runs.
   */
  async execute(task: string, options: { workdir: string; signal?: AbortSignal }): Promise<ExecuteResult> {
    if (this.running) throw new SwitchboardError('CONFLICT', 'this agent is already running a task; run tasks one after another');
    if (task.trim() === '') throw new SwitchboardError('INVALID_PARAMS', 'the task is empty');
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
      startLines = session.pane.readText(0).totalLines;
      outcome = await this.runTurn(session, task, options.signal, states, approvals);
      // A reply that ends in a question is the model asking, not done: the caller's onQuestion
      // answers it and the task goes on (a few rounds at most), or the task hands it back.
      for (let round = 0; outcome.status === 'completed' && round < MAX_QUESTION_ROUNDS; round++) {
        const reply = extractFinalMessage(this.profile, session.pane.screenLines(), lastPrompt);
        if (!reply?.trimEnd().endsWith('?')) break;
        const answer = this.options.onQuestion ? await this.options.onQuestion(reply) : null;
        if (answer === null || answer.trim() === '') {
          outcome = { status: 'needs_input', errorMessage: null, question: reply };
          break;
        }
        lastPrompt = answer;
        outcome = await this.runTurn(session, answer, options.signal, states, approvals);
      }
    } catch (err) {
      outcome = this.outcomeOfError(err, options.signal);
    }
    // Cancellation and timeouts end the CLI: whatever it was doing is abandoned with it.
    if (outcome.status === 'cancelled' || outcome.status === 'timeout' || !this.session?.pane.alive) await this.close();
    const session = this.session;
    const outputLog = session ? this.outputSince(session.pane, startLines) : '';
    const finalMessage = session ? extractFinalMessage(this.profile, session.pane.screenLines(), lastPrompt) : null;
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
    return { paneId: session.pane.id, version: session.version };
  }

  /** Ends the agent session: the CLI and everything it started. */
  async close(): Promise<void> {
    const session = this.session;
    this.session = undefined;
    if (!session) return;
    session.tracker.dispose();
    await this.registry.remove(session.pane.id, { graceMs: 2_000 }).catch(() => undefined);
  }

  /** Closes the session and releases everything (the agent cannot be used afterwards). */
  async dispose(): Promise<void> {
    await this.close();
    if (this.ownsRegistry) await this.registry.close({ graceMs: 2_000 });
    this.progress.dispose();
  }

  /**
   * What the CLI's status file says, if its profile names one. The file is named by the CLI's pid,
   * which is the pane's process unless a wrapper script started it: then it is looked up once
   * among the pane's process tree.
   */
  private readSelfReport(session: AgentInPane): SelfReport | undefined {
    const spec = this.profile.data.status_file;
    if (!spec) return undefined;
    const home = this.options.sandbox?.home ?? homedir();
    if (session.statusPid !== undefined) return readStatusFile(spec, home, session.statusPid);
    const direct = readStatusFile(spec, home, session.pane.pid);
    if (direct) {
      session.statusPid = session.pane.pid;
      return direct;
    }
    for (const pid of collectProcessTree(session.pane.pid)) {
      const report = readStatusFile(spec, home, pid);
      if (report) {
        session.statusPid = pid;
        return report;
      }
    }
    return undefined;
  }

  private outcomeOfError(err: unknown, signal: AbortSignal | undefined): TurnOutcome {
    if (signal?.aborted) return { status: 'cancelled', errorMessage: 'cancelled', question: null };
    const message = err instanceof Error ? err.message : String(err);
    if (err instanceof SwitchboardError && err.code === 'TIMEOUT') return { status: 'timeout', errorMessage: message, question: null };
    return { status: 'error', errorMessage: message, question: null, errorCode: err instanceof SwitchboardError ? err.code : 'INTERNAL_ERROR' };
  }

  private async ensureSession(workdir: string, signal: AbortSignal | undefined): Promise<AgentInPane> {
    if (this.session && this.session.workdir === workdir && this.session.pane.alive) return this.session;
    await this.close();
    const started = await startAgent(this.registry, this.profile, {
      cwd: workdir,
      ...(this.options.sandbox ? { sandbox: this.options.sandbox } : {}),
      ...(this.options.env ? { env: this.options.env } : {}),
      ...(this.options.args ? { args: this.options.args } : {}),
      ...(this.options.binaryDirs ? { binaryDirs: this.options.binaryDirs } : {}),
      ...(signal ? { signal } : {}),
    });
    const screens = this.profile.screensFor(started.version);
    const tracker = new AgentStateTracker(started.pane, screens);
    this.session = { pane: started.pane, tracker, workdir, version: started.version };
    started.pane.onOutput((out) => this.progress.fire({ type: 'output', text: out.text }));
    this.progress.fire({ type: 'started', paneId: started.pane.id, version: started.version });
    return this.session;
  }

  /** The screen text of this task: scrollback from where it began, and the screen at the end. */
  private outputSince(pane: Pane, startLines: number): string {
    const total = pane.readText(0).totalLines;
    return pane.readText(Math.max(pane.rows, total - startLines + pane.rows)).lines.join('\n').replace(/\s+$/, '');
  }

  private runTurn(session: AgentInPane, task: string, signal: AbortSignal | undefined, states: StateChange[], approvals: ApprovalRecord[]): Promise<TurnOutcome> {
    const { pane, tracker } = session;
    const timeoutMs = this.options.timeoutMs ?? 30 * 60_000;
    const idleTimeoutMs = this.options.idleTimeoutMs ?? 5 * 60_000;
    const screens = this.profile.screensFor(session.version);
    // Dialogs that open after start-up are answered as the ones before it were.
    const dialogPolicy = firstRunPolicyOf(pane) ?? DEFAULT_FIRST_RUN_POLICY;
    const promptTarget = { input: this.profile.data.input, screens, policy: dialogPolicy };
    const selfReport = (): SelfReport | undefined => this.readSelfReport(session);
    return new Promise<TurnOutcome>((resolve) => {
      const started = performance.now();
      let submitted = false;
      let workSeen = false;
      let busyWithCallback = false;
      let answeringApproval = false;
      /** Where the turn's output begins, and how many reply marks were in view when the prompt went in. */
      let linesAtSubmit = 0;
      let repliesAtSubmit = 0;
      /** Since when the screen has said "done" while the CLI's status file said it still works. */
      let screenDoneSince: number | undefined;
      /** When the prompt went in (ms since the epoch): a status file older than this says nothing about the turn. */
      let submittedAt = Number.POSITIVE_INFINITY;
      let lastScreen = '';
      let lastChange = performance.now();
      let answeredAt = 0;
      /** The last prompt answered (its row and what it asked), so a prompt still drawn is not answered and counted twice. */
      let answeredPrompt = '';
      let done = false;
      const responder = dialogResponderOf(pane);
      /** Reply marks in everything drawn since the prompt went in (the screen then, and all after it). */
      const repliesSince = (): number => countReplies(screens, pane.readText(Math.max(0, pane.readText(0).totalLines - linesAtSubmit) + pane.rows).lines);
      const finish = (outcome: TurnOutcome): void => {
        if (done) return;
        done = true;
        clearInterval(ticker);
        sub.dispose();
        signal?.removeEventListener('abort', onAbort);
        resolve(outcome);
      };
      const onAbort = (): void => finish({ status: 'cancelled', errorMessage: 'cancelled', question: null });

      const answerApproval = async (): Promise<void> => {
        if (answeringApproval) return;
        answeringApproval = true;
        try {
          // A prompt is drawn in steps, and a CLI may ignore keys while it draws: read and answer it
          // once the screen has held still a moment, or the policy judges half a prompt.
          await promptSettled(pane, signal);
          if (done || tracker.state.state !== 'waiting_approval') return;
          await decideApproval();
        } finally {
          answeringApproval = false;
        }
      };

      const decideApproval = async (): Promise<void> => {
        const request = parseApproval(screens, { lines: pane.screenLines(), ansiLines: pane.snapshot({ ansi: true }).lines });
        const identity = JSON.stringify([request?.row, request?.command, request?.path, request?.options.map((o) => o.label)]);
        const now = performance.now();
        // The prompt answered a moment ago may still be on screen while the CLI reacts to the keys.
        if (identity === answeredPrompt && now - answeredAt < APPROVAL_RETRY_MS) return;
        let verdict = verdictOnScreen(this.policy, request, { workdir: session.workdir, home: this.options.sandbox?.home ?? homedir() });
        let decidedBy: ApprovalRecord['decidedBy'] = 'policy';
        if (verdict.decision === 'ask') {
          if (!this.options.onApproval) {
            const record: ApprovalRecord = { at: Date.now(), request: request ? stripRow(request) : null, decision: 'ask', reason: verdict.reason, decidedBy: 'none', answered: null, presses: 0 };
            approvals.push(record);
            this.progress.fire({ type: 'approval', approval: record });
            const what = request?.command ?? request?.path ?? request?.toolName ?? 'a tool call';
            finish({ status: 'needs_input', errorMessage: null, question: `approve ${request?.tool ?? 'tool'}: ${what}? (${verdict.reason})` });
            return;
          }
          busyWithCallback = true;
          const answer = await this.options.onApproval(request, verdict);
          busyWithCallback = false;
          verdict = { ...verdict, decision: answer, reason: `${answer === 'allow' ? 'allowed' : 'denied'} by the onApproval callback (policy: ${verdict.reason})` };
          decidedBy = 'callback';
        }
        if (done) return;
        const option = request ? optionFor(request, verdict.decision === 'allow' ? 'allow_once' : 'deny') : null;
        const keys = option?.keys ?? (verdict.decision === 'allow' ? this.profile.data.approval_keys.allow_once : this.profile.data.approval_keys.deny);
        const record: ApprovalRecord = {
          at: Date.now(),
          request: request ? stripRow(request) : null,
          decision: verdict.decision,
          reason: verdict.reason,
          decidedBy,
          answered: { label: option?.label ?? (verdict.decision === 'allow' ? 'allow once' : 'deny'), keys },
          presses: 0,
        };
        approvals.push(record);
        this.progress.fire({ type: 'approval', approval: record });
        answeredPrompt = identity;
        // Pressed until the prompt reacts: a CLI that drops keys right after drawing a prompt gets
        // them again, as the same answer (one record), not as a second approval.
        answeredAt = performance.now();
        record.presses = (await pressUntilTaken(pane, keys, signal)).presses;
        answeredAt = performance.now();
        tracker.refresh();
      };

      const answerQuestion = async (question: string): Promise<void> => {
        if (!this.options.onQuestion) {
          finish({ status: 'needs_input', errorMessage: null, question });
          return;
        }
        busyWithCallback = true;
        const answer = await this.options.onQuestion(question);
        busyWithCallback = false;
        if (done) return;
        if (answer === null) {
          finish({ status: 'needs_input', errorMessage: null, question });
          return;
        }
        tracker.beginTurn();
        const sent = await sendPrompt(pane, promptTarget, answer, signal);
        if (sent.confirmedBy === 'work') workSeen = true;
      };

      const onState = (change: StateChange): void => {
        states.push(change);
        this.progress.fire({ type: 'state', change });
        react(change);
      };

      const react = (change: StateChange): void => {
        if (done) return;
        // Work seen while the prompt was still being confirmed counts too.
        if (change.state === 'thinking' || change.state === 'executing' || change.state === 'waiting_approval') workSeen = true;
        if (!submitted) return;
        switch (change.state) {
          case 'thinking':
          case 'executing':
            return;
          case 'waiting_approval':
            if (!busyWithCallback) answerApproval().catch((err: unknown) => finish(this.outcomeOfError(err, signal)));
            return;
          case 'waiting_input':
            // A dialog the launch policy answers (Codex's late model nudge) is the pane's responder's
            // to answer; a question, or a menu nothing knows, is handed on once it holds still (check()).
            return;
          case 'error': {
            const line = errorText(screens, pane, change.evidence?.row, change.error ?? change.evidence?.line ?? 'the agent reported an error');
            // A refusal stops some CLIs' turn with a notice that looks like an error: the agent now
            // waits for what to do instead.
            if (lowestMatchOf(screens.interrupted, { lines: [line] })) finish({ status: 'needs_input', errorMessage: null, question: line });
            else finish({ status: 'error', errorMessage: line, question: null });
            return;
          }
          case 'exited':
            finish({ status: 'error', errorMessage: `the agent exited (${change.exit?.signal ?? `code ${change.exit?.exitCode ?? '?'}`})`, question: null });
            return;
          default:
            return;
        }
      };

      /** Completion needs every signal at once: the idle prompt, held still, no output, and work done. */
      const check = (): void => {
        if (done || !submitted) return;
        const now = performance.now();
        const text = pane.screenLines().join('\n');
        if (text !== lastScreen) {
          lastScreen = text;
          lastChange = now;
        }
        if (now - started > timeoutMs) {
          finish({ status: 'timeout', errorMessage: `the task did not finish within ${Math.round(timeoutMs / 1000)} s (state: ${tracker.state.state})`, question: null });
          return;
        }
        const state = tracker.state.state;
        const waiting = state === 'waiting_approval' || state === 'waiting_input' || busyWithCallback;
        if (!waiting && state !== 'idle' && now - lastChange > idleTimeoutMs) {
          finish({ status: 'timeout', errorMessage: `no progress on screen for ${Math.round(idleTimeoutMs / 1000)} s (state: ${state})`, question: null });
          return;
        }
        if (state === 'waiting_approval' && !busyWithCallback && now - answeredAt > APPROVAL_RETRY_MS) {
          answerApproval().catch((err: unknown) => finish(this.outcomeOfError(err, signal)));
          return;
        }
        if (state === 'waiting_input') {
          const stuck = responder?.stuck;
          if (stuck) {
            finish({ status: 'needs_input', errorMessage: null, question: `the agent's ${stuck.id} dialog stays on screen after ${stuck.answers} answers: ${tracker.state.evidence?.line ?? ''}` });
            return;
          }
          const known = tracker.lastDetection.dialog !== undefined || responder?.clear === false;
          // Asked only once the screen has held still: a dialog half drawn can look like a question.
          if (known || busyWithCallback || now - lastChange < QUESTION_SETTLE_MS) return;
          // The tracker keeps its last state over screens it cannot read: the question must be on
          // the screen now (a dialog answered a moment ago leaves waiting_input behind it).
          const current = classifyScreen(screens, { lines: pane.screenLines() });
          if (current.state !== 'waiting_input' || current.detection.dialog) return;
          const asked = current.question ?? current.evidence?.line ?? 'the agent is asking something';
          answerQuestion(asked).catch((err: unknown) => finish(this.outcomeOfError(err, signal)));
          return;
        }
        if (state !== 'idle') return;
        const quiet = Math.min(now - lastChange, Date.now() - pane.lastOutputTime);
        // A turn ends only once it was seen to start: work on screen, or a reply drawn since the
        // prompt went in (the input box redrawing is neither).
        const replied = !workSeen && repliesSince() > repliesAtSubmit;
        const needQuiet = workSeen ? COMPLETION_QUIET_MS : NO_WORK_QUIET_MS;
        if (!(workSeen || replied) || quiet < needQuiet) {
          screenDoneSince = undefined;
          return;
        }
        const completedBy = ['idle prompt', `quiet ${needQuiet} ms`, workSeen ? 'work seen' : 'reply drawn'];
        // The CLI's own word, where it keeps one and wrote it this turn: while it says it works, the
        // turn goes on. Not forever: a CLI that stopped updating the file must not hang the task.
        const report = selfReport();
        const heard = report && report.writtenAt >= submittedAt ? report : undefined;
        if (heard && (heard.state === 'busy' || heard.state === 'waiting')) {
          screenDoneSince ??= now;
          if (now - screenDoneSince < STATUS_FILE_PATIENCE_MS) return;
          completedBy.push(`status file still said ${heard.value} after ${STATUS_FILE_PATIENCE_MS / 1000} s of a finished screen`);
        } else if (heard) completedBy.push(`status file: ${heard.value}`);
        finish({ status: 'completed', errorMessage: null, question: null, completedBy });
      };

      const sub = tracker.onChange(onState);
      const ticker = setInterval(check, CHECK_INTERVAL_MS);
      if (signal?.aborted) {
        onAbort();
        return;
      }
      signal?.addEventListener('abort', onAbort);
      // The agent still waits on an approval or a question from before: typing now would answer
      // it with the task's text. The caller has to deal with it first.
      const pending = tracker.state;
      const dialogKnown = tracker.lastDetection.dialog !== undefined || responder?.clear === false;
      if (pending.state === 'waiting_approval' || (pending.state === 'waiting_input' && !dialogKnown)) {
        finish({ status: 'needs_input', errorMessage: null, question: `the agent is still waiting on: ${pending.question ?? pending.evidence?.line ?? pending.state}` });
        return;
      }
      tracker.beginTurn();
      submittedAt = Date.now();
      linesAtSubmit = pane.readText(0).totalLines;
      repliesAtSubmit = countReplies(screens, pane.screenLines());
      sendPrompt(pane, promptTarget, task, signal).then(
        (sent) => {
          submitted = true;
          if (sent.confirmedBy === 'work') workSeen = true;
          lastChange = performance.now();
          // A state reached while the prompt was typed counts too.
          react(tracker.state);
        },
        (err: unknown) => finish(this.outcomeOfError(err, signal)),
      );
    });
  }
}

/** Rows that mark a reply (its first row, or the row after it), by the profile's patterns. */
function countReplies(screens: Screens, lines: readonly string[]): number {
  const patterns = [...screens.reply, ...screens.reply_end];
  if (patterns.length === 0) return 0;
  let n = 0;
  for (const line of lines) if (lowestMatchOf(patterns, { lines: [line] })) n++;
  return n;
}

function stripRow(request: ApprovalRequest): Omit<ApprovalRequest, 'row'> {
  const { row: _row, ...rest } = request;
  return rest;
}

/** Box sides and bars a CLI draws around a message. */
const FRAME = /^[\s┃│▌▐|]+|[\s┃│▌▐|]+$/g;

/**
 * The whole error message around `row`, where the error pattern matched: CLIs that mark an error
 * by colour (OpenCode's red bar) mark every row of it, so the run of marked rows is the message;
 * otherwise the matched line and the lines right below it, up to a blank one.
 */
function errorText(screens: Screens, pane: Pane, row: number | undefined, fallback: string): string {
  if (row === undefined) return fallback;
  const lines = pane.screenLines();
  const ansiLines = pane.snapshot({ ansi: true }).lines;
  const marked = (i: number): boolean => i >= 0 && i < lines.length && lowestMatchOf(screens.error, { lines: [lines[i] ?? ''], ansiLines: [ansiLines[i] ?? ''] }) !== undefined;
  let top = row;
  let bottom = row;
  while (row - top < 8 && marked(top - 1)) top -= 1;
  while (bottom - row < 8 && marked(bottom + 1)) bottom += 1;
  if (top === bottom) while (bottom - row < 5 && (lines[bottom + 1] ?? '').replace(FRAME, '') !== '') bottom += 1;
  const text = lines
    .slice(top, bottom + 1)
    .map((l) => l.replace(FRAME, ''))
    .filter((l) => l !== '')
    .join(' ');
  return text === '' ? fallback : text;
}
