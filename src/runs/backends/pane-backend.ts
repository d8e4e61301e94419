/**
 * A backend in a PTY: the fallback for CLIs without a structured mode (Aider, a user's own profile),
 * through `CodingAgent.execute()` (seed 002), which drives the interactive screen to the end of the
 * task. What the screen tells becomes the same events a structured run has: each approval prompt is
 * a `tool_call` put to governance, the reply read off the screen a `token`, each file changed a
 * `patch`, and the screen's text raw `output` (recorded only where the user turned it on).
 *
 * A follow-up continues in the same conversation (the same agent in the same pane), which waits in
 * the run service's idle pool between runs (`keepIdle`); a run that cannot be followed up closes its
 * pane before it ends (or leaves it at its prompt: `task.keepPane`). Cancelling ends the pane and
 * the process tree in it.
 *
 * For a task of `agent_execute` (`task`), a face of the run service, the caller's own approval
 * policy decides on the screen as CodingAgent's chain, and each decision it made is reported for
 * the ledger; the task's whole result goes to the caller.
 */
import { errorMessage } from '../../core/errors.js';
import { silentLogger, type Logger } from '../../core/logger.js';
import { AgentCatalog, type AgentPanes, type AgentProfile, type ApprovalPrompt } from '../../agents/index.js';
import type { PaneRegistry } from '../../pane/index.js';
import { ASK_POLICY, type ApprovalPolicy } from '../../approvals/policy/index.js';
import { SCHEMA_VERSIONS } from '../../output/stream-events.js';
import { CodingAgent, type CodingAgentOptions, type ExecuteResult } from '../../drivers/pane/coding-agent.js';
import { decisionEvent, patchEvent, type NewRunEvent } from '../../ledger/run-events.js';
import { StreamingBackend, type BackendCapabilities, type BackendHealth, type DriverOutcome, type DriverRun, type DriverRunRequest } from './backend-driver.js';
import { HeadlessDriver } from '../../drivers/headless-driver.js';

export interface PaneBackendOptions {
  tool: string;
  catalog?: AgentCatalog;
  sandbox?: { home: string; modelUrl: string };
  binaryDirs?: string[];
  /** The registry panes are created in (the daemon's, so that `list` and the dashboard see them); default: one per agent. */
  registry?: PaneRegistry;
  /**
   * The registry's agent panes (the daemon's). Given, a run's pane is the one its log, the dashboard
   * and answer_approval see, and a tool call governance leaves open waits for a person's answer
   * there instead of being denied.
   */
  agentPanes?: AgentPanes;
  args?: string[];
  env?: Record<string, string>;
  logger?: Logger;
  /** A task of agent_execute: its own approvals and options (its driver serves that one run). */
  task?: PaneTask;
}

/** What an agent_execute call asks of its run's pane. */
export interface PaneTask {
  /** The caller's approval policy, CodingAgent's chain: what it decides is reported, not asked of governance. */
  policy: ApprovalPolicy;
  /** An approval the policy leaves open waits for a person (answer_approval) instead of ending the task with needs_input. */
  waitForPerson: boolean;
  /** Leave the pane at its prompt when the task ends. */
  keepPane: boolean;
  timeoutMs?: number;
  idleTimeoutMs?: number;
  /** Scopes of the token the pane's programs get. */
  scopes?: readonly string[];
  /** The task's result as CodingAgent gave it, and its pane (null when the agent never started). */
  onResult: (result: ExecuteResult, paneId: string | null) => void;
}

/** One conversation's agent in its pane, serving its runs in turn. */
interface PaneConversation {
  agent: CodingAgent;
  cwd: string;
  busy: boolean;
  /** The run the conversation serves now: what the screen shows is its events, its approvals its governance's. */
  current: DriverRunRequest;
  /** The agent's pane, once it started. */
  paneId: string | null;
}

export class PaneBackend extends StreamingBackend {
  readonly mode = 'pty' as const;
  private readonly profile: AgentProfile;
  private readonly catalog: AgentCatalog;
  private readonly conversations = new Map<string, PaneConversation>();
  private readonly logger: Logger;

  constructor(private readonly options: PaneBackendOptions) {
    super();
    this.catalog = options.catalog ?? AgentCatalog.load();
    this.profile = this.catalog.get(options.tool);
    this.logger = options.logger ?? silentLogger;
  }

  get name(): string {
    return this.profile.data.name;
  }

  capabilities(): BackendCapabilities {
    return { backend: this.name, mode: 'pty', format: 'screen', streaming: true, followUps: true, permissionRequests: true, schemaVersions: SCHEMA_VERSIONS };
  }

  async health(): Promise<BackendHealth> {
    // The program and its version are found the same way for a pane as for a headless process.
    const h = this.profile.data.headless_args
      ? await new HeadlessDriver({ tool: this.options.tool, catalog: this.catalog, ...(this.options.binaryDirs ? { binaryDirs: this.options.binaryDirs } : {}) }).health()
      : { ok: true, binary: null, version: null };
    const support = h.version === null ? null : this.profile.versionSupport(h.version).level;
    return { ok: h.ok, binary: h.binary, version: h.version, version_support: support, model_reachable: null, ...('problem' in h && h.problem !== undefined ? { problem: h.problem } : {}) };
  }

  stream(request: DriverRunRequest): DriverRun {
    const conversation = this.conversationFor(request);
    const abort = new AbortController();
    const done = this.execute(conversation, request, abort.signal).finally(async () => {
      conversation.busy = false;
      this.runs.delete(request.runId);
      // A cancelled run's conversation is closed by the cancel itself.
      if (abort.signal.aborted || this.conversations.get(request.thread) !== conversation) return;
      if (request.keepIdle) request.keepIdle(() => this.closeConversation(request.thread));
      else await this.closeConversation(request.thread);
    });
    const run: DriverRun = {
      done,
      cancel: async () => {
        abort.abort();
        await done.catch(() => undefined);
        await this.closeConversation(request.thread);
      },
    };
    this.runs.set(request.runId, run);
    return run;
  }

  async dispose(): Promise<void> {
    await Promise.all([...this.runs.values()].map((r) => r.cancel()));
    await Promise.all([...this.conversations.keys()].map((t) => this.closeConversation(t)));
  }

  private conversationFor(request: DriverRunRequest): PaneConversation {
    const existing = this.conversations.get(request.thread);
    if (request.followUp) {
      if (!existing) throw new Error(`the conversation of run ${request.thread} has ended: start a new run instead of a follow-up`);
      if (existing.busy) throw new Error(`the conversation of run ${request.thread} is busy with another run`);
      existing.busy = true;
      existing.current = request;
      return existing;
    }
    const conversation: PaneConversation = { agent: this.options.task ? this.taskAgent(request, this.options.task) : this.governedAgent(request), cwd: request.cwd, busy: true, current: request, paneId: null };
    let waiting = false;
    conversation.agent.onProgress((p) => {
      if (p.type === 'started') conversation.paneId = p.paneId;
      if (p.type !== 'state') return;
      // Waiting on a person is no silence of the agent's: the run's no-output limit pauses meanwhile.
      const now = p.change.state === 'waiting_approval' || p.change.state === 'waiting_input';
      if (now !== waiting) conversation.current.emit({ kind: 'waiting', on: (waiting = now) });
    });
    this.conversations.set(request.thread, conversation);
    return conversation;
  }

  /** What every run's agent is given: the profile, where its pane goes, its HOME, variables and arguments. */
  private agentOptions(request: DriverRunRequest): CodingAgentOptions {
    return {
      tool: this.options.tool,
      catalog: this.catalog,
      ...(this.options.sandbox ? { sandbox: this.options.sandbox } : {}),
      ...(this.options.binaryDirs ? { binaryDirs: this.options.binaryDirs } : {}),
      ...(this.options.registry ? { registry: this.options.registry } : {}),
      ...(this.options.agentPanes ? { agentPanes: this.options.agentPanes } : {}),
      env: { ...this.options.env, ...request.env },
      ...(this.options.args ? { args: this.options.args } : {}),
      logger: this.logger,
    };
  }

  /** The agent of a bridge run: every approval is asked of governance (`judge`), which decides and records it. */
  private governedAgent(request: DriverRunRequest): CodingAgent {
    let approvals = 0;
    // The agent outlives the run that started it (a follow-up continues the conversation): what it
    // reports goes to the run it serves now, never to the ended one.
    const run = (): DriverRunRequest => this.conversations.get(request.thread)?.current ?? request;
    const person = this.options.agentPanes !== undefined;
    /** The call governance left to a person: approvals come one at a time, so the next one a person answers is its. */
    let waitingForPerson: string | undefined;
    const agent = new CodingAgent({
      // Everything is asked of governance, which decides and records it; what it leaves open waits
      // for a person where one can answer (the daemon's panes), else it is denied.
      autoApprove: ASK_POLICY,
      waitForPerson: person,
      onApproval: async (approval) => {
        const id = `approval-${++approvals}`;
        run().emit({ kind: 'event', event: toolCallEvent(id, approval) });
        if (!approval) return 'deny';
        const call = { subject: subjectOf(approval), toolName: approval.toolName ?? approval.tool, input: inputOf(approval), toolCallId: id };
        if (!person) return (await run().judge(call)).decision;
        const decision = await run().judgeOrAsk(call);
        if (decision === 'ask') waitingForPerson = id;
        return decision;
      },
      onProgress: (p) => {
        if (p.type === 'output') run().emit({ kind: 'output', text: p.text });
        if (p.type === 'approval' && p.approval.decidedBy === 'person' && waitingForPerson !== undefined && (p.approval.decision === 'allow' || p.approval.decision === 'deny')) {
          run().emit({ kind: 'person', toolCallId: waitingForPerson, decision: p.approval.decision, reason: p.approval.reason });
          waitingForPerson = undefined;
        }
      },
      ...this.agentOptions(request),
    });
    return agent;
  }

  /**
   * The agent of an agent_execute task: the caller's policy decides on the screen (CodingAgent's
   * chain, a person after it where the caller waits for one), and each decision is reported as the
   * run's tool call and decision, by whoever made it.
   */
  private taskAgent(request: DriverRunRequest, task: PaneTask): CodingAgent {
    const reported = new Set<string>();
    return new CodingAgent({
      autoApprove: task.policy,
      waitForPerson: task.waitForPerson,
      onProgress: (p) => {
        if (p.type === 'output') request.emit({ kind: 'output', text: p.text });
        if (p.type !== 'approval') return;
        const a = p.approval;
        if (!reported.has(a.id)) {
          reported.add(a.id);
          request.emit({ kind: 'event', event: toolCallEvent(a.id, a.request) });
        }
        const subject = { ...(a.request ? subjectOf(a.request) : { tool: 'other' }), tool_call_id: a.id };
        request.emit({ kind: 'event', event: decisionEvent(a.at, { subject, decision: a.decision, rule: a.decidedBy === 'person' ? 'person' : 'agent_execute.policy', reason: a.reason, by: a.decidedBy }) });
      },
      ...(task.timeoutMs !== undefined ? { timeoutMs: task.timeoutMs } : {}),
      ...(task.idleTimeoutMs !== undefined ? { idleTimeoutMs: task.idleTimeoutMs } : {}),
      ...(task.scopes ? { scopes: task.scopes } : {}),
      ...this.agentOptions(request),
    });
  }

  private async execute(conversation: PaneConversation, request: DriverRunRequest, signal: AbortSignal): Promise<DriverOutcome> {
    let result: ExecuteResult;
    try {
      result = await conversation.agent.execute(request.prompt, { workdir: conversation.cwd, signal });
    } catch (err) {
      return { status: 'failed', reason: 'spawn_failed', message: errorMessage(err) };
    }
    this.options.task?.onResult(result, conversation.paneId);
    const now = Date.now();
    if (result.finalMessage) request.emit({ kind: 'entry', entry: { id: `${request.runId}-reply`, type: 'assistant_message', timestamp: now, content: result.finalMessage } });
    for (const change of result.fileChanges) {
      request.emit({ kind: 'event', event: patchEvent(now, { id: `${request.runId}-${change.path}`, path: change.path, summary: `${change.change} ${change.path}`, applied: true }) });
    }
    switch (result.status) {
      case 'completed':
        return { status: 'completed', message: result.completedBy.join(', ') };
      case 'cancelled':
        return { status: 'cancelled', message: 'cancelled' };
      case 'timeout':
        return { status: 'failed', reason: 'timeout', message: result.errorMessage ?? 'the agent took too long' };
      case 'needs_input':
        return { status: 'failed', reason: 'needs_input', message: result.question ?? 'the agent asked a question nobody answers' };
      case 'error':
        return { status: 'failed', reason: result.errorCode === 'SPAWN_FAILED' ? 'spawn_failed' : /exited|ended by/.test(result.errorMessage ?? '') ? 'crashed' : 'agent_error', message: result.errorMessage ?? 'the agent showed an error' };
    }
  }

  private async closeConversation(thread: string): Promise<void> {
    const conversation = this.conversations.get(thread);
    this.conversations.delete(thread);
    // A task kept at its prompt stays for the caller (it is the daemon's pane), unless it died.
    if (this.options.task?.keepPane === true && conversation?.agent.pane?.alive === true) conversation.agent.detach();
    else await conversation?.agent.dispose().catch(() => undefined);
  }
}

function subjectOf(a: Omit<ApprovalPrompt, 'row'>): { tool: ApprovalPrompt['tool']; command?: string; path?: string; toolName?: string } {
  return { tool: a.tool, ...(a.command !== null ? { command: a.command } : {}), ...(a.path !== null ? { path: a.path } : {}), ...(a.toolName !== null ? { toolName: a.toolName } : {}) };
}

function inputOf(a: Omit<ApprovalPrompt, 'row'>): Record<string, unknown> {
  return { ...(a.command !== null ? { command: a.command } : {}), ...(a.path !== null ? { path: a.path } : {}) };
}

function toolCallEvent(id: string, a: Omit<ApprovalPrompt, 'row'> | null): NewRunEvent {
  const name = a?.toolName ?? a?.tool ?? 'unknown';
  const text = a?.command ?? a?.path ?? 'an approval prompt that could not be read';
  return { type: 'tool_call', ts: Date.now(), data: { id, name, kind: a?.tool ?? 'other', input: a ? inputOf(a) : {}, path: a?.path ?? null }, compat: { text, status: 'running', is_error: false } };
}
