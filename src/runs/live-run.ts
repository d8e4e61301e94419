/**
 * One run while it lives in the run service: its state (moved only by the step function of
 * run-model.ts, each move recorded), its driver run, its limits (wall clock, silence, bytes and
 * events of output) and its governance (every tool call judged, every decision recorded with its
 * rule). Whatever ends it first (the driver, a timeout, a limit, a cancel) decides how it ends;
 * the rest find it ending and change nothing. The driver's processes are gone before the end is
 * recorded, so a run recorded as ended has nothing left running.
 */
import type { Disposable } from '../core/disposable.js';
import { errorMessage } from '../core/errors.js';
import { setLongTimeout } from '../core/long-timer.js';
import type { Logger } from '../core/logger.js';
import type { RunLedger } from '../ledger/run-ledger.js';
import type { RunGovernance } from '../governance/governor.js';
import { initialState, isEnded, step, type RunInput, type RunLimits, type RunSpec, type RunState } from '../ledger/run-model.js';
import { decisionEvent, doneEvent, EntryEventMapper, errorEvent, inputEvent, noticeEvent, OUTPUT_EVENT_TYPES, outputEvent, stateEvent, type DecisionRecord, type NewRunEvent } from '../ledger/run-events.js';
import { decideApproval, type ApprovalSubject } from '../approvals/index.js';
import type { BackendDriver, DriverEmission, DriverOutcome, DriverRun, ToolCallAnswer, ToolCallRequest } from './backends/backend-driver.js';
import { TokenStream } from './token-stream.js';

export interface LiveRunContext {
  ledger: RunLedger;
  /** The policy file's governor, or a face's caller's own governance. */
  governor: RunGovernance;
  /** Each thing the driver reports, before it is recorded (a face's session log). */
  observe?: (emission: DriverEmission) => void;
  /**
   * How the run ends when a limit or governance ends it: `interrupt` for a run whose conversation
   * its face keeps (an agent session loses one turn to a slow CLI, not its whole context), else
   * `cancel`. An explicit cancel always closes the conversation.
   */
  stopBy?: 'cancel' | 'interrupt';
  /**
   * Called once the agent is done (its driver ended), before the run's end is recorded, with how
   * the agent ended: the events it gives are the run's last before its end (a cluster node's
   * report of what a repository run changed). `stopped` aborts when the run is stopped meanwhile
   * (a cancel, a policy's failure, a shutdown), which then decides its end. A failure is logged
   * and the run ends as it would have.
   */
  beforeEnd?: BeforeEnd;
  logger: Logger;
  now: () => number;
}

/** What a service records last for a run whose agent is done (LiveRunContext.beforeEnd). */
export type BeforeEnd = (spec: RunSpec, outcome: RunInput, stopped: AbortSignal) => Promise<NewRunEvent[]>;

/** How a run that is ending will be recorded, once its processes are gone. */
type Ending = Extract<RunInput, { type: 'fail' | 'cancel' }>;

export class LiveRun {
  state: RunState;
  private ending: Ending | undefined;
  /** How the driver was asked to stop: a cancel that follows an interrupt still closes everything. */
  private stopping: 'cancel' | 'interrupt' | undefined;
  private driverRun: DriverRun | undefined;
  private readonly mapper: EntryEventMapper;
  private outputBytes = 0;
  private outputEvents = 0;
  private sawError = false;
  /** Its agent is done and what comes before its end is being made (beforeEnd); aborted by a stop meanwhile. */
  private wrappingUp: AbortController | undefined;
  private promptSize: number | undefined;
  /** Tool calls governance decided (by their call id), and those it was not asked about, waiting for their outcome. */
  private readonly judged = new Set<string>();
  private readonly unjudged = new Map<string, ApprovalSubject>();
  /** Tool calls governance left to a person, by call id: what was judged and by which rule. */
  private readonly asked = new Map<string, { subject: Record<string, unknown>; rule: string }>();
  // Long timers: a policy's limit may pass Node's longest delay (24.8 days), which setTimeout turns into 1 ms.
  private wallTimer: Disposable | undefined;
  private quietTimer: Disposable | undefined;
  /** The agent waits on a person: the no-output limit does not run meanwhile. */
  private waitingOnPerson = false;
  private settle: () => void = () => undefined;
  private lastTs = 0;
  /** The reply's pieces as they stream, coalesced into token events. */
  private readonly tokens = new TokenStream({ emit: (text) => this.recordPieces(text) });
  /** Resolves once the run's end is recorded. */
  readonly ended: Promise<void>;

  constructor(
    readonly spec: RunSpec,
    private readonly ctx: LiveRunContext,
    private readonly onEnded: (run: LiveRun) => void,
  ) {
    this.state = initialState(spec.created_at);
    this.mapper = new EntryEventMapper(spec.id);
    this.ended = new Promise((resolve) => {
      this.settle = resolve;
    });
  }

  /** The prompt's size in UTF-8 bytes (what a waiting run holds in memory). */
  get promptBytes(): number {
    return (this.promptSize ??= Buffer.byteLength(this.spec.prompt));
  }

  /** Where the run works: the real path admitted, never what the path given leads to later. */
  get folder(): string {
    return this.spec.real_cwd ?? this.spec.cwd;
  }

  get limits(): RunLimits {
    return this.spec.limits;
  }

  /** Records the run, its prompt and the decision that let it in. */
  open(admission: DecisionRecord): void {
    this.ctx.ledger.createRun(this.spec);
    this.record(inputEvent(this.spec.created_at, 'prompt', this.spec.prompt));
    this.record(decisionEvent(this.ctx.now(), admission));
  }

  record(event: NewRunEvent): void {
    // Time runs with the numbering: a CLI's own timestamp (or a message held back while it was
    // joined) never puts an event before the one recorded ahead of it.
    const ts = Math.max(event.ts, this.lastTs);
    this.lastTs = ts;
    this.ctx.ledger.append(this.spec.id, ts === event.ts ? event : { ...event, ts });
  }

  /**
   * Starts the run on `driver` (it has its place under the concurrency limits); `keepIdle` when its
   * conversation may be kept for a follow-up. True when the driver took the run (and with it the
   * conversation of a follow-up); false when it ended before reaching the driver.
   */
  start(driver: BackendDriver, thread: string, followUp: boolean, env: Record<string, string>, keepIdle?: (close: () => Promise<void>) => void): boolean {
    if (this.over()) return false;
    // A queued run's folder may have changed since admission (swapped for a symlink): checked again.
    const folder = this.ctx.governor.admitAtStart(this.spec.backend, this.spec.cwd, this.spec.real_cwd);
    if (folder.decision !== 'allow') {
      this.record(decisionEvent(this.ctx.now(), { subject: { run: 'start', backend: this.spec.backend, cwd: this.spec.cwd }, decision: 'deny', rule: folder.rule, reason: folder.reason, by: 'policy' }));
      this.finish({ type: 'fail', reason: 'policy', message: `refused by the policy at start: ${folder.reason}` });
      return false;
    }
    this.move({ type: 'start' });
    const { wall_clock_ms: wall, no_output_ms: quiet } = this.limits;
    if (wall !== undefined) this.wallTimer = setLongTimeout(() => void this.end({ type: 'fail', reason: 'timeout', message: `the run took longer than its wall-clock limit (${wall} ms)` }), wall);
    this.armQuiet(quiet);
    try {
      this.driverRun = driver.stream({
        runId: this.spec.id,
        prompt: this.spec.prompt,
        cwd: this.folder,
        thread,
        followUp,
        ...(this.spec.agent_session !== undefined ? { resume: this.spec.agent_session } : {}),
        env,
        ...(keepIdle ? { keepIdle } : {}),
        judge: async (request) => {
          const answer = await this.judge(request, false);
          return { ...answer, decision: answer.decision === 'allow' ? 'allow' : 'deny' };
        },
        judgeOrAsk: async (request) => (await this.judge(request, true)).decision,
        emit: (emission) => this.onEmission(emission),
      });
    } catch (err) {
      this.finish({ type: 'fail', reason: 'spawn_failed', message: errorMessage(err) });
      return false;
    }
    this.driverRun.done.then(
      (outcome) => this.wrapUp(this.ending ?? this.inputFor(outcome)),
      (err: unknown) => this.wrapUp(this.ending ?? { type: 'fail', reason: 'crashed', message: errorMessage(err) }),
    );
    return true;
  }

  /** True once the run is ending or has ended: what comes then changes nothing. */
  private over(): boolean {
    return this.wrappingUp !== undefined || this.ending !== undefined || isEnded(this.state.status);
  }

  /**
   * The agent is done: what the service adds (beforeEnd) is recorded after everything the agent
   * said, then the end. Its limits no longer run meanwhile; a stop meanwhile (end()) aborts it and
   * decides the end, an interrupt changes nothing (the turn is over).
   */
  private wrapUp(agentEnded: RunInput): void {
    const beforeEnd = this.ctx.beforeEnd;
    // What streamed last is recorded before anything else, while the run still takes it (it may pass the run's output limit, which then decides the end).
    this.tokens.close();
    const input = this.ending ?? agentEnded;
    if (!beforeEnd) return this.finish(input);
    this.clearTimers();
    const wrapping = new AbortController();
    this.wrappingUp = wrapping;
    Promise.resolve()
      .then(() => beforeEnd(this.spec, input, wrapping.signal))
      .then(
        (events) => {
          for (const event of events) this.record(event);
        },
        (err: unknown) => this.ctx.logger.warn('what a run records before its end could not be made', { run_id: this.spec.id, error: errorMessage(err) }),
      )
      .finally(() => {
        this.wrappingUp = undefined;
        this.finish(this.ending ?? input);
      });
  }

  /**
   * Ends the run: a queued one at once, a running one once its driver has ended its processes.
   * A second request while it ends changes nothing (the first reason stands).
   */
  end(input: Ending, how: 'cancel' | 'interrupt' = this.ctx.stopBy ?? 'cancel'): Promise<void> {
    if (this.wrappingUp && how === 'cancel') {
      // Its agent is done; what comes before its end is being made: the first stop decides the end, and the rest is given up.
      this.ending ??= input;
      this.wrappingUp.abort();
      return this.ended;
    }
    if (this.over()) {
      // Interrupting, and now told to cancel (a close, a shutdown): the first reason stands for the
      // record, but the processes go now rather than after the CLI's own grace for an interrupt.
      if (how === 'cancel' && this.stopping === 'interrupt' && this.driverRun && !isEnded(this.state.status)) this.stop('cancel');
      return this.ended;
    }
    this.ending = input;
    this.clearTimers();
    if (!this.driverRun) this.finish(input);
    else this.stop(how);
    return this.ended;
  }

  private stop(how: 'cancel' | 'interrupt'): void {
    const run = this.driverRun;
    if (!run) return;
    const interrupt = how === 'interrupt' && run.interrupt !== undefined;
    this.stopping = interrupt ? 'interrupt' : 'cancel';
    (interrupt ? (run.interrupt?.() ?? Promise.resolve()) : run.cancel()).catch((err: unknown) => {
      this.ctx.logger.warn('a run did not stop cleanly', { run_id: this.spec.id, how, error: errorMessage(err) });
    });
  }

  private inputFor(outcome: DriverOutcome): RunInput {
    if (outcome.status === 'completed') return { type: 'complete', message: outcome.message };
    if (outcome.status === 'cancelled') return { type: 'cancel', reason: 'cancelled_by_user', message: outcome.message };
    return { type: 'fail', reason: outcome.reason ?? 'agent_error', message: outcome.message };
  }

  private finish(input: RunInput): void {
    if (isEnded(this.state.status)) return;
    this.clearTimers();
    const now = this.ctx.now();
    // What streamed before the end is kept, ahead of it.
    this.tokens.close();
    if (input.type === 'fail' && !this.sawError) this.record(errorEvent(now, input.message, input.reason));
    this.move(input);
    const s = this.state;
    if (isEnded(s.status) && 'reason' in s) this.record(doneEvent(now, s.status, s.reason, s.message));
    this.settle();
    this.onEnded(this);
  }

  private move(input: RunInput): void {
    const next = step(this.state, input, this.ctx.now());
    this.state = next.state;
    this.record(stateEvent(next.transition));
  }

  /**
   * Governance's answer to a tool call, through the approval broker with governance as its first
   * step, recorded with its rule and the broker's decider. What governance leaves open ("ask") is
   * denied by the chain's end when nobody can answer; where a person can (`personMayAnswer`), the
   * chain leaves it open: it is recorded as asked and handed back, and the person's answer is
   * recorded when it comes (a `person` emission).
   */
  private async judge(request: ToolCallRequest, personMayAnswer: boolean): Promise<Omit<ToolCallAnswer, 'decision'> & { decision: 'allow' | 'deny' | 'ask' }> {
    const subject = { ...request.subject, tool_name: request.toolName, ...(request.toolCallId !== undefined ? { tool_call_id: request.toolCallId } : {}) };
    const ended = { decision: 'deny', reason: 'denied: the run has ended', decidedBy: 'default' } as const;
    if (this.over()) return ended;
    if (request.toolCallId !== undefined) {
      this.judged.add(request.toolCallId);
      this.unjudged.delete(request.toolCallId);
    }
    const mayAsk = personMayAnswer && request.toolCallId !== undefined;
    const outcome = await decideApproval(
      { id: request.toolCallId ?? `${this.spec.id}-call`, source: { kind: 'structured', toolCallId: request.toolCallId ?? null }, subject: request.subject, certain: true, doubts: [] },
      {
        policy: this.ctx.governor.ruleStep(this.spec.backend, this.folder, request.input),
        context: { workdir: this.folder, home: this.ctx.governor.home },
        otherwise: mayAsk ? 'open' : 'deny',
        missing: 'nobody answers for this run',
      },
    );
    // Ended while the chain decided: nothing more is recorded for it, and the CLI hears no.
    if (this.over()) return ended;
    const rule = outcome.verdict.ruleName ?? 'approvals';
    if (outcome.decision === 'ask' && request.toolCallId !== undefined) {
      this.asked.set(request.toolCallId, { subject, rule });
      const reason = `${outcome.reason}; waiting for a person (answer_approval, the dashboard)`;
      this.record(decisionEvent(this.ctx.now(), { subject, decision: 'ask', rule, reason, by: outcome.decidedBy }));
      return { decision: 'ask', reason, decidedBy: outcome.decidedBy };
    }
    const decision = outcome.decision === 'allow' ? 'allow' : 'deny';
    this.record(decisionEvent(this.ctx.now(), { subject, decision, rule, reason: outcome.reason, by: outcome.decidedBy }));
    // The CLI hears "no" first, so the act never happens; then the run ends as the policy says
    // (`on_deny: fail`, the default), never `completed` as if nothing had been refused.
    if (decision === 'deny' && this.ctx.governor.onDeny(this.spec.backend) === 'fail') {
      setImmediate(() => void this.end({ type: 'fail', reason: 'policy', message: `the policy denied ${describeCall(request.subject)} (${rule}): ${outcome.reason}` }));
    }
    return { decision, reason: outcome.reason, decidedBy: outcome.decidedBy };
  }

  private onEmission(emission: DriverEmission): void {
    // The face sees all the driver reports, even what comes while the run ends (its log keeps it).
    this.ctx.observe?.(emission);
    if (this.over()) return;
    const now = this.ctx.now();
    if (emission.kind === 'person') {
      const asked = this.asked.get(emission.toolCallId);
      this.asked.delete(emission.toolCallId);
      if (asked) this.record(decisionEvent(now, { subject: asked.subject, decision: emission.decision, rule: asked.rule, reason: emission.reason, by: 'person' }));
      return;
    }
    if (emission.kind === 'waiting') {
      this.waitingOnPerson = emission.on;
      if (emission.on) this.quietTimer?.dispose();
      else this.armQuiet(this.limits.no_output_ms);
      return;
    }
    if (emission.kind === 'delta') {
      // Silence is broken now, even though the token is recorded up to COALESCE_MS later.
      this.armQuiet(this.limits.no_output_ms);
      this.tokens.piece(emission.text);
      return;
    }
    let events: NewRunEvent[];
    if (emission.kind === 'entry' && emission.entry.type === 'assistant_message') {
      // The whole message after its pieces: only what they did not carry.
      const rest = this.tokens.whole(emission.entry.content);
      events = rest === '' ? [] : this.mapper.map({ ...emission.entry, content: rest });
    } else {
      this.tokens.flush();
      events = emission.kind === 'entry' ? this.mapper.map(emission.entry) : emission.kind === 'output' ? [outputEvent(now, emission.text)] : emission.kind === 'notice' ? [noticeEvent(now, emission.text)] : [emission.event];
    }
    for (const event of events) if (!this.accept(event)) return;
  }

  /** Pieces of the reply, coalesced: under the limits while the run goes, kept as they are while it ends. */
  private recordPieces(text: string): void {
    if (isEnded(this.state.status)) return;
    for (const event of this.mapper.map({ id: `${this.spec.id}-pieces`, type: 'assistant_message', timestamp: this.ctx.now(), content: text })) {
      if (this.ending) this.record(event);
      else if (!this.accept(event)) return;
    }
  }

  /** Records one event of the agent's, under the run's limits and audit; false when that ended the run. */
  private accept(event: NewRunEvent): boolean {
    if (this.over()) return false;
    if (OUTPUT_EVENT_TYPES.has(event.type)) {
      this.armQuiet(this.limits.no_output_ms);
      const recorded = event.type !== 'output' || this.ctx.ledger.recordsRawOutput;
      if (recorded && this.overLimit(event)) return false;
      if (this.state.status === 'running') this.move({ type: 'first_output' });
      if (event.type === 'error') this.sawError = true;
    }
    this.record(event);
    if ((event.type === 'tool_call' || event.type === 'tool_result' || event.type === 'patch') && this.audit(event)) return false;
    return true;
  }

  /**
   * A tool call governance was not asked about (Codex decides every call by its own sandbox; other
   * CLIs refuse some on their own, such as Gemini CLI a path outside its workspace) is judged once
   * its outcome is known, and the decision recorded as the CLI's: refused by the CLI, or carried out
   * and what governance says of it. One governance would deny that was carried out stops the run as
   * `failed (policy)`. True when it stopped the run.
   */
  private audit(event: NewRunEvent): boolean {
    const d = event.data;
    const id = typeof d.id === 'string' ? d.id : undefined;
    if (event.type === 'tool_call') {
      if (id === undefined || this.judged.has(id)) return false;
      const input = (typeof d.input === 'object' && d.input !== null ? d.input : {}) as Record<string, unknown>;
      const path = typeof d.path === 'string' ? d.path : undefined;
      if (d.kind === 'file_edit') this.unjudged.set(id, { tool: 'file_write', ...(path !== undefined ? { path } : {}) });
      else if (d.kind === 'command_run') this.unjudged.set(id, { tool: 'shell', command: typeof input.command === 'string' ? input.command : event.compat.text });
      return false;
    }
    // A patch with no call before it is a change the CLI reports done (Codex's file changes).
    const path = typeof d.path === 'string' ? d.path : undefined;
    const subject = id !== undefined ? (this.unjudged.get(id) ?? (event.type === 'patch' && !this.judged.has(id) ? { tool: 'file_write' as const, ...(path !== undefined ? { path } : {}) } : undefined)) : undefined;
    if (!subject || id === undefined) return false;
    this.unjudged.delete(id);
    this.judged.add(id);
    const carriedOut = event.type === 'patch' ? d.applied === true : d.is_error !== true;
    const verdict = this.ctx.governor.judgeToolCall(this.spec.backend, this.folder, subject);
    // "ask" is a denial for a run nobody answers for, exactly as when asked beforehand.
    const denied = verdict.decision !== 'allow';
    const who = this.spec.backend;
    let reason: string;
    if (!carriedOut) reason = `${who} refused it itself (${event.compat.text.slice(0, 200)}); governance: ${verdict.reason}`;
    else if (denied) reason = `${verdict.reason}; ${who} carried it out on its own authority, so the run is stopped`;
    else reason = `${who} carried it out on its own authority; governance: ${verdict.reason}`;
    this.record(decisionEvent(this.ctx.now(), { subject: { ...subject, tool_call_id: id }, decision: carriedOut && !denied ? 'allow' : 'deny', rule: denied ? verdict.rule : carriedOut ? verdict.rule : 'cli', reason, by: 'cli' }));
    if (carriedOut && denied) {
      void this.end({ type: 'fail', reason: 'policy', message: verdict.reason });
      return true;
    }
    return false;
  }

  /** True (and the run ending) when `event` would take the run past its output limits: it is not recorded. */
  private overLimit(event: NewRunEvent): boolean {
    const bytes = JSON.stringify(event.data).length + JSON.stringify(event.compat).length;
    const { max_output_bytes: maxBytes, max_events: maxEvents } = this.limits;
    if (maxEvents !== undefined && this.outputEvents + 1 > maxEvents) {
      void this.end({ type: 'fail', reason: 'output_limit', message: `the run passed its limit of ${maxEvents} events` });
      return true;
    }
    if (maxBytes !== undefined && this.outputBytes + bytes > maxBytes) {
      void this.end({ type: 'fail', reason: 'output_limit', message: `the run passed its limit of ${maxBytes} bytes of output` });
      return true;
    }
    this.outputEvents++;
    this.outputBytes += bytes;
    return false;
  }

  private armQuiet(ms: number | undefined): void {
    if (ms === undefined) return;
    this.quietTimer?.dispose();
    if (this.waitingOnPerson) return;
    this.quietTimer = setLongTimeout(() => void this.end({ type: 'fail', reason: 'no_output_timeout', message: `the run produced no output for ${ms} ms` }), ms);
  }

  private clearTimers(): void {
    this.wallTimer?.dispose();
    this.quietTimer?.dispose();
  }
}

/** A tool call in a few words, for a run's end message. */
function describeCall(subject: ToolCallRequest['subject']): string {
  const what = 'command' in subject && typeof subject.command === 'string' ? subject.command : 'path' in subject && typeof subject.path === 'string' ? subject.path : undefined;
  return what === undefined ? `a ${subject.tool} call` : `${subject.tool} ${JSON.stringify(what.length > 200 ? `${what.slice(0, 200)}…` : what)}`;
}
