/**
 * A pane's session log. Every pane logs its output (`stdout`). A pane that runs an agent also logs
 * entries read from its screen (through its AgentPane, src/agents/live/agent-pane.ts), so an interactive
 * session has the same structured view as a headless one: the prompt it was given
 * (`user_message`), each approval it asks for (a pending `command_run` / `file_edit` / … entry) and
 * how it was answered, the reply once the turn settles (`assistant_message`, without the input box
 * or the echoed prompt), errors and questions on screen, and its exit.
 */
import { DisposableStore, type Disposable } from '../core/disposable.js';
import { SwitchboardError } from '../core/errors.js';
import { Emitter, type Event } from '../core/emitter.js';
import type { AgentPane, AgentStateTracker, ApprovalPrompt, PendingApproval, ScreenAnswer, StateChange } from '../agents/index.js';
import { EntryFactory, type EntryMetadata, type NormalizedEntry, type NormalizedEntryType } from '../output/entry.js';
import type { Pane } from '../pane/index.js';
import { extractFinalMessage } from '../agents/index.js';
import type { SessionLog } from './session-logs.js';

/** The entry type an approval prompt's tool kind stands for. */
function entryTypeForApproval(prompt: ApprovalPrompt): NormalizedEntryType {
  switch (prompt.tool) {
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
  private readonly entries: EntryFactory;
  private readonly store = new DisposableStore();
  private lastPrompt = '';
  private lastReply: string | null = null;
  private busySinceIdle = false;
  /** The pending entry logged for the approval on screen, until its answer is logged. */
  private openApproval: { toolCallId: string; toolName: string } | null = null;
  private readonly stateEmitter = this.store.add(new Emitter<StateChange>());
  /** The agent's state changed (agent panes only). */
  readonly onState: Event<StateChange> = this.stateEmitter.event;

  constructor(
    readonly pane: Pane,
    readonly log: SessionLog,
    /** The agent the pane runs, if any (the daemon's AgentPanes made it). */
    readonly agent: AgentPane | undefined,
  ) {
    this.entries = new EntryFactory(`${pane.id}-e`);
    this.store.add(
      pane.onOutput((out) => {
        if (!log.store.finished) log.store.push({ type: 'stdout', content: out.text });
      }),
    );
    if (agent) {
      this.store.add(agent.onPrompt((text) => this.logPrompt(text)));
      this.store.add(agent.onWithdrawn(() => this.closeApproval('answered at the terminal')));
      this.store.add(agent.onAnswering((answer) => this.logAnswer(answer)));
      this.store.add(agent.onState((change) => this.onChange(change)));
    }
    this.store.add(
      pane.onExit((exit) => {
        this.push('system_message', `process exited (${exit.signal ? `signal ${exit.signal}` : `code ${String(exit.exitCode)}`})`, { ...(exit.exitCode !== null ? { exitCode: exit.exitCode } : {}) });
        log.store.finish();
      }),
    );
  }

  /** The agent's state tracker (agent panes only). */
  get tracker(): AgentStateTracker | undefined {
    return this.agent?.tracker;
  }

  /** The approval the agent waits on, as read from its screen; null when it waits on none. */
  get approval(): ApprovalPrompt | null {
    return this.agent?.approval?.prompt ?? null;
  }

  /** The id of the approval on screen (its entry's toolCallId), or null. */
  get approvalId(): string | null {
    return this.agent?.approval?.request.id ?? null;
  }

  /**
   * A person's answer to the approval on screen (answer_approval, the dashboard), through the one
   * route every answer takes (AgentPane.answer). Throws CONFLICT when none is pending.
   */
  async answerApproval(decision: 'allow' | 'deny', by: string, approvalId?: string): Promise<{ label: string | null; keys: string[] }> {
    if (!this.agent) throw new SwitchboardError('CONFLICT', `no approval is pending in pane ${this.pane.id}`, { pane_id: this.pane.id });
    const answered = await this.agent.answer(decision, { decidedBy: 'person', by, ...(approvalId !== undefined ? { approvalId } : {}) });
    return { label: answered.option?.label ?? null, keys: answered.keys };
  }

  /** A prompt was given through Switchboard: log it and start a turn (errors already on screen are old). */
  notePrompt(text: string): void {
    if (this.agent) this.agent.notePrompt(text);
    else this.logPrompt(text);
  }

  dispose(): void {
    this.store.dispose();
  }

  private logPrompt(text: string): void {
    // A prompt sent before the last turn's prompt held still for the tracker: its reply is on
    // screen now, before the new prompt is typed.
    if (this.busySinceIdle) this.noteReply();
    this.busySinceIdle = false;
    this.lastPrompt = text;
    this.push('user_message', text);
  }

  private onChange(change: StateChange): void {
    switch (change.state) {
      case 'thinking':
      case 'executing':
        this.busySinceIdle = true;
        break;
      case 'waiting_approval':
        this.busySinceIdle = true;
        this.noteApproval(this.agent?.approval ?? null);
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

  /** Logs the approval asked for as a pending entry, from the prompt its state change carried. */
  private noteApproval(approval: PendingApproval | null): void {
    if (!approval) return;
    const toolCallId = approval.request.id;
    const prompt = approval.prompt;
    if (!prompt) {
      this.push('tool_use', 'approval asked (the prompt could not be read)', { status: 'pending', toolCallId });
      this.openApproval = { toolCallId, toolName: 'unknown' };
      return;
    }
    const input: Record<string, unknown> = {};
    if (prompt.command !== null) input.command = prompt.command;
    if (prompt.path !== null) input.file_path = prompt.path;
    const content = prompt.command ?? prompt.path ?? prompt.toolName ?? prompt.tool;
    const toolName = prompt.toolName ?? prompt.tool;
    this.push(entryTypeForApproval(prompt), content, {
      toolName,
      toolInput: input,
      ...(prompt.path !== null ? { filePath: prompt.path } : {}),
      status: 'pending',
      toolCallId,
    });
    this.openApproval = { toolCallId, toolName };
  }

  /** Logged before the keys go: the prompt closing under them must not read as a terminal answer. */
  private logAnswer(answer: ScreenAnswer): void {
    const how = `${answer.decision === 'allow' ? 'approved' : 'denied'} by ${answer.by}${answer.option ? ` ("${answer.option.label}")` : ''}`;
    this.closeApproval(how, answer.decision === 'allow' ? 'success' : 'failed');
  }

  /** Logs how the open approval was answered, paired with its request by toolCallId. */
  private closeApproval(how: string, status?: 'success' | 'failed'): void {
    const open = this.openApproval;
    this.openApproval = null;
    if (!open) return;
    this.push('tool_result', how, { toolName: open.toolName, toolCallId: open.toolCallId, ...(status ? { status } : {}) });
  }

  private noteReply(): void {
    if (!this.agent) return;
    const reply = extractFinalMessage(this.agent.profile, this.pane.screenLines({ joinWrapped: true }), this.lastPrompt, this.pane.agent?.version ?? undefined, this.pane.cols);
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
