/**
 * Claude Code's `--output-format stream-json` (and `--verbose`) lines as entries. Assistant
 * messages carry text and tool_use blocks; the tool's result comes back in a user message's
 * tool_result block with the same id, which pairs it with its call. Partial-message stream events
 * (`--include-partial-messages`) are the same text again in pieces: the complete message follows,
 * so they yield nothing here.
 */
import { asRecord, asString, entryTypeForTool, filePathOf, JsonLinesNormalizer, type NormalizedEntry } from './entry.js';

export class ClaudeStreamJsonNormalizer extends JsonLinesNormalizer {
  readonly format = 'claude-stream-json';
  /** Tool calls seen, by id: their names, so that a result says what it is the result of. */
  private readonly calls = new Map<string, string>();

  constructor(now?: () => number) {
    super('claude', now);
  }

  protected read(type: string, obj: Record<string, unknown>): NormalizedEntry[] {
    const timestamp = typeof obj.timestamp === 'string' ? Date.parse(obj.timestamp) || undefined : undefined;
    switch (type) {
      case 'system':
        return obj.subtype === 'init' ? [this.entries.make('system_message', `session started: ${asString(obj.model) ?? 'model unknown'} in ${asString(obj.cwd) ?? '?'}`, undefined, timestamp)] : [];
      case 'assistant':
        return this.assistant(asRecord(obj.message), timestamp);
      case 'user':
        return this.user(asRecord(obj.message), timestamp);
      case 'result': {
        if (obj.is_error === true || (typeof obj.subtype === 'string' && obj.subtype.startsWith('error'))) {
          const message = asString(obj.result) ?? asString(obj.error) ?? `the run ended with ${String(obj.subtype)}`;
          return [this.entries.make('error', message, { status: 'failed' }, timestamp)];
        }
        return [];
      }
      case 'stream_event':
        return [];
      default:
        // A line type this version adds: kept, as a system message naming it.
        return [this.entries.make('system_message', `${type}${typeof obj.subtype === 'string' ? `: ${obj.subtype}` : ''}`, undefined, timestamp)];
    }
  }

  private assistant(message: Record<string, unknown> | undefined, timestamp: number | undefined): NormalizedEntry[] {
    const out: NormalizedEntry[] = [];
    for (const block of Array.isArray(message?.content) ? message.content : []) {
      const b = asRecord(block);
      if (b?.type === 'text' && typeof b.text === 'string' && b.text !== '') out.push(this.entries.make('assistant_message', b.text, undefined, timestamp));
      else if (b?.type === 'tool_use') {
        const name = asString(b.name) ?? 'tool';
        const id = asString(b.id);
        const input = asRecord(b.input);
        if (id) this.calls.set(id, name);
        const kind = entryTypeForTool(name);
        const command = asString(input?.command);
        const filePath = filePathOf(input);
        const content = kind === 'command_run' && command ? command : filePath ?? name;
        out.push(this.entries.make(kind, content, { toolName: name, toolInput: input, toolCallId: id, status: 'running', filePath }, timestamp));
      }
    }
    return out;
  }

  private user(message: Record<string, unknown> | undefined, timestamp: number | undefined): NormalizedEntry[] {
    const content = message?.content;
    if (typeof content === 'string') return [this.entries.make('user_message', content, undefined, timestamp)];
    const out: NormalizedEntry[] = [];
    for (const block of Array.isArray(content) ? content : []) {
      const b = asRecord(block);
      if (b?.type === 'tool_result') {
        const id = asString(b.tool_use_id);
        const output = resultText(b.content);
        const failed = b.is_error === true;
        out.push(this.entries.make('tool_result', output, { toolCallId: id, toolName: id ? this.calls.get(id) : undefined, toolOutput: output, status: failed ? 'failed' : 'success' }, timestamp));
      } else if (b?.type === 'text' && typeof b.text === 'string') out.push(this.entries.make('user_message', b.text, undefined, timestamp));
    }
    return out;
  }
}

/** A tool_result's content: a string, or blocks of which the text ones count. */
function resultText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((c) => asRecord(c))
    .filter((c) => c?.type === 'text')
    .map((c) => asString(c?.text) ?? '')
    .join('\n');
}
