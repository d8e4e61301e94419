/**
 * What an ACP (Agent Client Protocol) agent says during a turn, as entries: its `session/update`
 * notifications (Gemini CLI `--acp`, `opencode acp`), the tool calls it asks permission for, and
 * how each turn ends. Message and thought chunks are joined into one entry per message (split
 * where the agent's messageId changes). ACP names no tools, only their kind (execute, edit,
 * read, …), so the kind decides the entry type and stands as the tool's name.
 *
 * A tool call is held back until its input is known, because the CLIs announce calls unevenly:
 * OpenCode 1.18 sends `tool_call` as "bash" with only a cwd and the command in the next
 * `tool_call_update`; Gemini CLI 0.61 sends no `tool_call` at all, only the permission request
 * with the whole call (its command in the title). A held call is given out when an update says it
 * runs or ended, when permission is asked for it, or when anything else arrives (so the order of
 * entries is the order of events). Results pair with their call by toolCallId.
 */
import { asRecord, asString, EntryFactory, entryTypeForTool, filePathOf, parseObjectLine, type EntryStatus, type NormalizedEntry, type NormalizedEntryType, type Normalizer } from './entry.js';

type ToolEntryType = 'command_run' | 'file_edit' | 'file_read' | 'tool_use';

/** What a tool call is by its ACP kind; `other` (or none) falls back to reading its title as a tool name. */
export function entryTypeForAcpKind(kind: string | undefined, title?: string): ToolEntryType {
  switch (kind) {
    case 'execute':
      return 'command_run';
    case 'edit':
    case 'delete':
    case 'move':
      return 'file_edit';
    case 'read':
      return 'file_read';
    case undefined:
    case 'other':
      return title === undefined ? 'tool_use' : entryTypeForTool(title);
    default:
      return 'tool_use';
  }
}

/** The command of a tool call's input, where it has one (a string, or argv words). */
export function commandOfInput(input: Record<string, unknown> | undefined): string | undefined {
  const command = input?.command;
  if (typeof command === 'string' && command !== '') return command;
  if (Array.isArray(command) && command.length > 0) return command.map(String).join(' ');
  return undefined;
}

/** The file a tool call acts on: its input's path (OpenCode also writes `filepath`), else its first location. */
export function filePathOfCall(input: Record<string, unknown> | undefined, locations: readonly string[]): string | undefined {
  return filePathOf(input) ?? asString(input?.filepath) ?? locations[0];
}

/** The locations of a tool call as paths. */
export function locationsOf(value: unknown): string[] {
  if (!Array.isArray(value)) return [];
  return value.flatMap((location) => {
    const path = asString(asRecord(location)?.path);
    return path ? [path] : [];
  });
}

/** The readable text of an ACP error object: Gemini puts the model API's JSON error in `message`. */
export function describeAcpError(error: Record<string, unknown>): string {
  const message = asString(error.message) ?? 'the agent reported an error';
  const inner = asRecord(asRecord(parseObjectLine(message))?.error);
  const innerMessage = asString(inner?.message);
  const code = typeof error.code === 'number' ? ` (code ${String(error.code)})` : '';
  return `${innerMessage ?? message}${code}`;
}

/** Updates that say nothing about the conversation: the agent's commands, modes, options, usage. */
const QUIET_UPDATES = new Set(['available_commands_update', 'current_mode_update', 'config_option_update', 'session_info_update', 'usage_update']);

interface HeldText {
  type: Extract<NormalizedEntryType, 'assistant_message' | 'user_message' | 'system_message'>;
  text: string;
  messageId: string | undefined;
  timestamp: number;
}

interface ToolCall {
  id: string;
  title: string | undefined;
  kind: string | undefined;
  status: string | undefined;
  rawInput: Record<string, unknown> | undefined;
  locations: string[];
  timestamp: number;
  /** Its result has been given out. */
  done: boolean;
}

export class AcpUpdateNormalizer implements Normalizer {
  readonly format = 'acp';
  private readonly entries: EntryFactory;
  private text: HeldText | undefined;
  /** Pieces of the agent's reply since takePieces() was last called, as they came. */
  private pieces: string[] = [];
  private held: ToolCall | undefined;
  /** Calls given out, by id: a result names its call, and a call is never given out twice. */
  private readonly calls = new Map<string, ToolCall>();

  /** `pieces`: keep the reply's pieces for takePieces() (only a reader that takes them should ask, or they pile up). */
  constructor(
    private readonly now: () => number = Date.now,
    private readonly options: { pieces?: boolean } = {},
  ) {
    this.entries = new EntryFactory('acp', now);
  }

  get unparsed(): number {
    return this.entries.unparsed;
  }

  /**
   * One JSON-RPC message the agent sent (a recorded transcript replays through here as the driver
   * goes): updates, permission requests, and the answer that ends a turn. Anything else yields nothing.
   */
  line(text: string): NormalizedEntry[] {
    if (text.trim() === '') return [];
    const message = parseObjectLine(text);
    if (!message) return [...this.flush(), this.entries.raw(text)];
    const method = asString(message.method);
    if (method === 'session/update') return this.update(message.params);
    if (method === 'session/request_permission') return this.permissionAsked(asRecord(message.params)?.toolCall);
    if (method === undefined && 'id' in message) {
      if (typeof asRecord(message.result)?.stopReason === 'string') return this.turnEnded();
      const error = asRecord(message.error);
      if (error) return this.turnFailed(describeAcpError(error));
    }
    return [];
  }

  /** The params of one `session/update` notification. */
  update(params: unknown): NormalizedEntry[] {
    const update = asRecord(asRecord(params)?.update);
    const kind = asString(update?.sessionUpdate);
    if (!update || !kind) return [...this.flush(), this.entries.raw(JSON.stringify(params ?? null))];
    switch (kind) {
      case 'agent_message_chunk':
        return this.chunk('assistant_message', update);
      case 'agent_thought_chunk':
        return this.chunk('system_message', update);
      case 'user_message_chunk':
        return this.chunk('user_message', update);
      case 'tool_call':
        return this.toolCall(update);
      case 'tool_call_update':
        return this.toolCallUpdate(update);
      case 'plan':
        return [...this.flush(), this.entries.make('system_message', planText(update.entries))];
      default:
        if (QUIET_UPDATES.has(kind)) return [];
        // An update kind newer than this reader: kept, as a system message naming it.
        return [...this.flush(), this.entries.make('system_message', `session update: ${kind}`)];
    }
  }

  /** The tool call of a `session/request_permission`: given out now if it was not yet. */
  permissionAsked(toolCall: unknown): NormalizedEntry[] {
    const fields = asRecord(toolCall);
    const id = asString(fields?.toolCallId);
    if (!fields || !id) return [];
    if (this.held?.id === id) {
      merge(this.held, fields);
      return this.flush();
    }
    if (this.calls.has(id)) return [];
    return [...this.flush(), this.giveOut(this.newCall(id, fields))];
  }

  /** The user's prompt, as the turn's first entry (ACP agents do not echo it). */
  userPrompt(text: string): NormalizedEntry[] {
    return [...this.flush(), this.entries.make('user_message', text)];
  }

  /**
   * A note from the client's side (how a permission request was answered), as a system message
   * with this reader's ids. Nothing held is given out: a note must not split a message.
   */
  note(text: string, toolCallId?: string): NormalizedEntry {
    return this.entries.make('system_message', text, { toolCallId });
  }

  /** The agent answered the prompt: whatever is held is complete. */
  turnEnded(): NormalizedEntry[] {
    return this.flush();
  }

  /** The turn failed (an error answer, the agent gone): what is held, then the error. */
  turnFailed(message: string): NormalizedEntry[] {
    return [...this.flush(), this.entries.make('error', message, { status: 'failed' })];
  }

  end(): NormalizedEntry[] {
    return this.flush();
  }

  /**
   * The pieces of the agent's reply the updates so far carried, each once: to stream them while the
   * message is still being joined (the whole message is still given at its end, as an entry). Taken
   * after the entries of the same update were recorded, so that they come after those.
   */
  takePieces(): string[] {
    const taken = this.pieces;
    this.pieces = [];
    return taken;
  }

  private chunk(type: HeldText['type'], update: Record<string, unknown>): NormalizedEntry[] {
    const piece = contentText(update.content);
    if (this.options.pieces === true && type === 'assistant_message' && piece !== '') this.pieces.push(piece);
    const messageId = asString(update.messageId);
    if (this.text?.type === type && this.text.messageId === messageId) {
      this.text.text += piece;
      return [];
    }
    const out = this.flush();
    this.text = { type, text: piece, messageId, timestamp: this.now() };
    return out;
  }

  private toolCall(update: Record<string, unknown>): NormalizedEntry[] {
    const id = asString(update.toolCallId);
    if (!id) return [...this.flush(), this.entries.raw(JSON.stringify(update))];
    // The same call announced again is news about it, as an update would be.
    if (this.calls.has(id) || this.held?.id === id) return this.toolCallUpdate(update);
    const out = this.flush();
    const call = this.newCall(id, update);
    if (isUnderway(call.status)) {
      out.push(this.giveOut(call));
      if (isDone(call.status)) out.push(this.result(call, update));
    } else this.held = call;
    return out;
  }

  private toolCallUpdate(update: Record<string, unknown>): NormalizedEntry[] {
    const id = asString(update.toolCallId);
    if (!id) return [...this.flush(), this.entries.raw(JSON.stringify(update))];
    const status = asString(update.status);
    const held = this.held?.id === id ? this.held : undefined;
    if (held) {
      merge(held, update);
      if (!isUnderway(status)) return [];
    }
    const out = this.flush();
    let call = this.calls.get(id);
    if (!call) {
      // An update for a call never announced: the call is made from what the update says.
      call = this.newCall(id, update);
      out.push(this.giveOut(call));
    } else if (!held) merge(call, update);
    if (isDone(status) && !call.done) out.push(this.result(call, update));
    return out;
  }

  private newCall(id: string, fields: Record<string, unknown>): ToolCall {
    const call: ToolCall = { id, title: undefined, kind: undefined, status: undefined, rawInput: undefined, locations: [], timestamp: this.now(), done: false };
    merge(call, fields);
    return call;
  }

  private giveOut(call: ToolCall): NormalizedEntry {
    this.calls.set(call.id, call);
    const type = entryTypeForAcpKind(call.kind, call.title);
    const input = call.rawInput;
    const toolName = toolNameOf(call);
    const filePath = type === 'command_run' || type === 'tool_use' ? undefined : filePathOfCall(input, call.locations);
    // Gemini sends no input for a shell call: its title is the command.
    const command = type === 'command_run' ? (commandOfInput(input) ?? call.title) : undefined;
    const content = command ?? filePath ?? call.title ?? toolName;
    return this.entries.make(type, content, { toolName, toolInput: input, toolCallId: call.id, status: entryStatus(call.status), filePath }, call.timestamp);
  }

  private result(call: ToolCall, update: Record<string, unknown>): NormalizedEntry {
    call.done = true;
    const failed = update.status === 'failed';
    const output = toolOutputOf(update.content, update.rawOutput);
    const exitCode = exitCodeOf(update.rawOutput);
    return this.entries.make('tool_result', output !== '' || !failed ? output : 'failed', { toolCallId: call.id, toolName: toolNameOf(call), toolOutput: output, status: failed ? 'failed' : 'success', exitCode });
  }

  /** Gives out what is held back: a message being joined, or a call waiting for its input (never both). */
  private flush(): NormalizedEntry[] {
    const out: NormalizedEntry[] = [];
    const text = this.text;
    this.text = undefined;
    if (text && text.text !== '') out.push(this.entries.make(text.type, text.type === 'system_message' ? `thought: ${text.text}` : text.text, undefined, text.timestamp));
    const held = this.held;
    this.held = undefined;
    if (held) out.push(this.giveOut(held));
    return out;
  }
}

/** What an update says about a call, on top of what was known (a field left out is unchanged). */
function merge(call: ToolCall, fields: Record<string, unknown>): void {
  call.title = asString(fields.title) ?? call.title;
  call.kind = asString(fields.kind) ?? call.kind;
  call.status = asString(fields.status) ?? call.status;
  const input = asRecord(fields.rawInput);
  if (input && Object.keys(input).length > 0) call.rawInput = input;
  const locations = locationsOf(fields.locations);
  if (locations.length > 0) call.locations = locations;
}

function toolNameOf(call: ToolCall): string {
  return call.kind !== undefined && call.kind !== 'other' ? call.kind : (call.title ?? 'tool');
}

const isUnderway = (status: string | undefined): boolean => status === 'in_progress' || isDone(status);
const isDone = (status: string | undefined): boolean => status === 'completed' || status === 'failed';

function entryStatus(status: string | undefined): EntryStatus {
  switch (status) {
    case 'in_progress':
      return 'running';
    case 'completed':
      return 'success';
    case 'failed':
      return 'failed';
    default:
      return 'pending';
  }
}

/** One content block as text: text as it is, anything else named in brackets. */
function contentText(block: unknown): string {
  const b = asRecord(block);
  switch (asString(b?.type)) {
    case 'text':
      return asString(b?.text) ?? '';
    case 'resource_link':
      return `[${asString(b?.name) ?? 'link'}: ${asString(b?.uri) ?? ''}]`;
    case 'resource': {
      const resource = asRecord(b?.resource);
      return asString(resource?.text) ?? `[resource ${asString(resource?.uri) ?? ''}]`;
    }
    case undefined:
      return '';
    default:
      return `[${String(b?.type)}]`;
  }
}

/** A tool call's output: its content blocks as text, else what its raw output says. */
function toolOutputOf(content: unknown, rawOutput: unknown): string {
  const parts = (Array.isArray(content) ? content : []).flatMap((item) => {
    const c = asRecord(item);
    switch (asString(c?.type)) {
      case 'content':
        return [contentText(c?.content)];
      case 'diff':
        return [`diff of ${asString(c?.path) ?? 'a file'}`];
      case 'terminal':
        return [`[terminal ${asString(c?.terminalId) ?? ''}]`];
      default:
        return [];
    }
  });
  if (parts.length > 0) return parts.join('\n');
  if (typeof rawOutput === 'string') return rawOutput;
  const raw = asRecord(rawOutput);
  return asString(raw?.output) ?? asString(raw?.error) ?? '';
}

/** The exit code in a tool's raw output, where the agent reports one (OpenCode: metadata.exit). */
function exitCodeOf(rawOutput: unknown): number | undefined {
  const raw = asRecord(rawOutput);
  for (const value of [raw?.exitCode, raw?.exit_code, asRecord(raw?.metadata)?.exit]) if (typeof value === 'number') return value;
  return undefined;
}

function planText(entries: unknown): string {
  const steps = (Array.isArray(entries) ? entries : []).map((entry) => {
    const e = asRecord(entry);
    return `- [${asString(e?.status) ?? 'pending'}] ${asString(e?.content) ?? ''}`;
  });
  return ['plan:', ...steps].join('\n');
}
