/**
 * A pane's session log. Every pane logs its output (`stdout`). A pane that runs an agent also gets
 * a state tracker and yields entries read from its screen, so an interactive session has the same
 * structured view as a headless one: the prompt it was given (`user_message`), each approval it
 * asks for (a pending `command_run` / `file_edit` / … entry), the reply once the turn settles
 * (`assistant_message`, without the input box or the echoed prompt), errors and questions on
 * screen, and its exit.
 */
import type { Disposable } from '../core/disposable.js';
import { SwitchboardError } from '../core/errors.js';
import { Emitter, type Event } from '../core/emitter.js';
import { AgentStateTracker, optionFor, parseApproval, pressUntilTaken, promptSettled, type AgentProfile, type ApprovalRequest, type Screens, type StateChange } from '../agents/index.js';
import { EntryFactory, type EntryMetadata, type NormalizedEntry, type NormalizedEntryType } from '../output/entry.js';
import type { Pane } from '../pane/index.js';
import { extractFinalMessage } from '../runs/final-message.js';
import type { SessionLog } from './session-logs.js';

/** The entry type an approval prompt's tool kind stands for. */
function entryTypeForApproval(request: ApprovalRequest): NormalizedEntryType {
  switch (request.tool) {
    case 'shell':
      return 'command_run';
    case 'file_edit':
    case 'file_write':
      return 'file_edit';
    case 'file_read':
      return 'file_read';
    default:
      return 'tool_use';
  }
}

export class PaneLog implements Disposable {
  readonly tracker: AgentStateTracker | undefined;
  private readonly entries: EntryFactory;
  private readonly disposables: Disposable[] = [];
  private readonly screens: Screens | undefined;
  private lastPrompt = '';
  private lastReply: string | null = null;
  private busySinceIdle = false;
  private approvals = 0;
  private pendingApproval: ApprovalRequest | null = null;
  /** The pending entry logged for the approval on screen, until its answer is logged. */
  private openApproval: { toolCallId: string; toolName: string } | null = null;
  private answering = false;
  private readonly stateEmitter = new Emitter<StateChange>();
  /** The agent's state changed (agent panes only). */
  readonly onState: Event<StateChange> = this.stateEmitter.event;

  constructor(
    readonly pane: Pane,
    readonly log: SessionLog,
    private readonly profile: AgentProfile | undefined,
  ) {
    this.entries = new EntryFactory(`${pane.id}-e`);
    this.disposables.push(
      pane.onOutput((out) => {
        if (!log.store.finished) log.store.push({ type: 'stdout', content: out.text });
      }),
    );
    if (profile && pane.agent) {
      this.screens = profile.screensFor(pane.agent.version ?? undefined);
      this.tracker = new AgentStateTracker(pane, this.screens);
      this.disposables.push(this.tracker.onChange((change) => this.onChange(change)));
    }
    this.disposables.push(
      pane.onExit((exit) => {
        this.push('system_message', `process exited (${exit.signal ? `signal ${exit.signal}` : `code ${String(exit.exitCode)}`})`, { ...(exit.exitCode !== null ? { exitCode: exit.exitCode } : {}) });
        log.store.finish();
      }),
    );
  }

  /** The approval the agent waits on, as read from its screen; null when it waits on none. */
  get approval(): ApprovalRequest | null {
    return this.tracker?.state.state === 'waiting_approval' ? this.pendingApproval : null;
  }

  /**
   * Answers the approval on screen the way the policy path does (the option that means allow-once
   * or deny, else the profile's keys), re-reading the prompt first: what a person approved must be
   * what is on screen now. Throws INVALID_PARAMS when none is pending.
   */
  async answerApproval(decision: 'allow' | 'deny', by: string, approvalId?: string): Promise<{ label: string | null; keys: string[] }> {
    if (!this.profile || !this.screens || this.tracker?.state.state !== 'waiting_approval') {
      throw new SwitchboardError('CONFLICT', `no approval is pending in pane ${this.pane.id}`, { pane_id: this.pane.id });
    }
    // Two answers to one prompt (two tabs, a tab and the CLI) would send the second's keys to whatever
    // comes next, perhaps the next approval: one answer at a time, and only to the prompt meant.
    if (this.answering) throw new SwitchboardError('CONFLICT', `the approval in pane ${this.pane.id} is being answered already`, { pane_id: this.pane.id });
    if (approvalId !== undefined && approvalId !== this.openApproval?.toolCallId) {
      throw new SwitchboardError('CONFLICT', `approval ${approvalId} is no longer the one on screen in pane ${this.pane.id}`, { pane_id: this.pane.id, approval_id: approvalId });
    }
    this.answering = true;
    try {
      return await this.pressAnswer(decision, by);
    } finally {
      this.answering = false;
    }
  }

  /** The id of the approval on screen (its entry's toolCallId), or null. */
  get approvalId(): string | null {
    return this.approval ? (this.openApproval?.toolCallId ?? null) : null;
  }

  private async pressAnswer(decision: 'allow' | 'deny', by: string): Promise<{ label: string | null; keys: string[] }> {
    if (!this.profile || !this.screens || !this.tracker) throw new SwitchboardError('NOT_AN_AGENT', `pane ${this.pane.id} does not run an agent`, { pane_id: this.pane.id });
    // Keys sent while a prompt is still being drawn are lost (Claude Code ignores them for a moment).
    await promptSettled(this.pane);
    const request = parseApproval(this.screens, { lines: this.pane.screenLines(), ansiLines: this.pane.snapshot({ ansi: true }).lines });
    const option = request ? optionFor(request, decision === 'allow' ? 'allow_once' : 'deny') : null;
    const keys = option?.keys ?? (decision === 'allow' ? this.profile.data.approval_keys.allow_once : this.profile.data.approval_keys.deny);
    // Logged before the keys go: the prompt closing under them must not read as a terminal answer.
    this.closeApproval(`${decision === 'allow' ? 'approved' : 'denied'} by ${by}${option ? ` ("${option.label}")` : ''}`, decision === 'allow' ? 'success' : 'failed');
    await pressUntilTaken(this.pane, keys);
    this.tracker.refresh();
    return { label: option?.label ?? null, keys };
  }

  /** A prompt was given through Switchboard: log it and start a turn (errors already on screen are old). */
  notePrompt(text: string): void {
    // A prompt sent before the last turn's prompt held still for the tracker: its reply is on
    // screen now, before the new prompt is typed.
    if (this.busySinceIdle) this.noteReply();
    this.busySinceIdle = false;
    this.lastPrompt = text;
    this.push('user_message', text);
    this.tracker?.beginTurn();
  }

  dispose(): void {
    for (const d of this.disposables.splice(0)) d.dispose();
    this.tracker?.dispose();
    this.stateEmitter.dispose();
  }

  private onChange(change: StateChange): void {
    // The prompt went away without an answer through Switchboard: someone answered at the terminal.
    if (change.state !== 'waiting_approval' && this.openApproval) this.closeApproval('answered at the terminal');
    switch (change.state) {
      case 'thinking':
      case 'executing':
        this.busySinceIdle = true;
        break;
      case 'waiting_approval':
        this.busySinceIdle = true;
        this.noteApproval();
        break;
      case 'waiting_input':
        if (change.question) this.push('system_message', `waiting for input: ${change.question}`);
        break;
      case 'error':
        this.push('error', change.error ?? change.evidence?.line ?? 'error on screen');
        break;
      case 'idle':
        if (this.busySinceIdle) this.noteReply();
        this.busySinceIdle = false;
        break;
      default:
        break;
    }
    this.stateEmitter.fire(change);
  }

  private noteApproval(): void {
    if (!this.screens) return;
    const request = parseApproval(this.screens, { lines: this.pane.screenLines(), ansiLines: this.pane.snapshot({ ansi: true }).lines });
    this.pendingApproval = request;
    const toolCallId = `${this.pane.id}-approval-${++this.approvals}`;
    if (!request) {
      this.push('tool_use', 'approval asked (the prompt could not be read)', { status: 'pending', toolCallId });
      this.openApproval = { toolCallId, toolName: 'unknown' };
      return;
    }
    const input: Record<string, unknown> = {};
    if (request.command !== null) input.command = request.command;
    if (request.path !== null) input.file_path = request.path;
    const content = request.command ?? request.path ?? request.toolName ?? request.tool;
    const toolName = request.toolName ?? request.tool;
    this.push(entryTypeForApproval(request), content, {
      toolName,
      toolInput: input,
      ...(request.path !== null ? { filePath: request.path } : {}),
      status: 'pending',
      toolCallId,
    });
    this.openApproval = { toolCallId, toolName };
  }

  /** Logs how the open approval was answered, paired with its request by toolCallId. */
  private closeApproval(how: string, status?: 'success' | 'failed'): void {
    const open = this.openApproval;
    this.openApproval = null;
    if (!open) return;
    this.push('tool_result', how, { toolName: open.toolName, toolCallId: open.toolCallId, ...(status ? { status } : {}) });
  }

  private noteReply(): void {
    if (!this.profile) return;
    const reply = extractFinalMessage(this.profile, this.pane.screenLines(), this.lastPrompt, this.pane.agent?.version ?? undefined);
    // The same reply still on screen after a turn that drew none (a slash command, say) is not new.
    if (reply === null || reply === this.lastReply) return;
    this.lastReply = reply;
    this.push('assistant_message', reply);
  }

  private push(type: NormalizedEntryType, content: string, metadata?: EntryMetadata): NormalizedEntry {
    const entry = this.entries.make(type, content, metadata);
    if (!this.log.store.finished) this.log.store.push({ type: 'normalized', entry });
    return entry;
  }
}
