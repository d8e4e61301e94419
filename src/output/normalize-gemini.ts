/**
 * Gemini CLI's `--output-format stream-json` lines as entries. The assistant's reply streams as
 * `message` lines with `delta: true`, a piece each: they are joined into one assistant_message,
 * given out when anything else arrives (or the stream ends). Tool calls and results pair by
 * `tool_id`.
 */
import { asRecord, asString, entryTypeForTool, filePathOf, JsonLinesNormalizer, type NormalizedEntry } from './entry.js';

export class GeminiStreamJsonNormalizer extends JsonLinesNormalizer {
  readonly format = 'gemini-stream-json';
  private readonly calls = new Map<string, string>();
  private pending: { text: string; timestamp: number | undefined } | undefined;

  constructor(now?: () => number) {
    super('gemini', now);
  }

  protected read(type: string, obj: Record<string, unknown>): NormalizedEntry[] {
    const timestamp = typeof obj.timestamp === 'string' ? Date.parse(obj.timestamp) || undefined : undefined;
    if (type === 'message' && obj.role === 'assistant' && obj.delta === true) {
      const piece = asString(obj.content) ?? '';
      if (this.pending) this.pending.text += piece;
      else this.pending = { text: piece, timestamp };
      return [];
    }
    return [...this.flush(), ...this.complete(type, obj, timestamp)];
  }

  end(): NormalizedEntry[] {
    return this.flush();
  }

  protected override flush(): NormalizedEntry[] {
    const pending = this.pending;
    this.pending = undefined;
    return pending && pending.text !== '' ? [this.entries.make('assistant_message', pending.text, undefined, pending.timestamp)] : [];
  }

  private complete(type: string, obj: Record<string, unknown>, timestamp: number | undefined): NormalizedEntry[] {
    switch (type) {
      case 'init':
        return [this.entries.make('system_message', `session started: ${asString(obj.model) ?? 'model unknown'}`, undefined, timestamp)];
      case 'message': {
        const content = asString(obj.content) ?? '';
        return [this.entries.make(obj.role === 'user' ? 'user_message' : 'assistant_message', content, undefined, timestamp)];
      }
      case 'tool_use': {
        const name = asString(obj.tool_name) ?? 'tool';
        const id = asString(obj.tool_id);
        const input = asRecord(obj.parameters);
        if (id) this.calls.set(id, name);
        const kind = entryTypeForTool(name);
        const command = asString(input?.command);
        const filePath = filePathOf(input);
        return [this.entries.make(kind, kind === 'command_run' && command ? command : filePath ?? name, { toolName: name, toolInput: input, toolCallId: id, status: 'running', filePath }, timestamp)];
      }
      case 'tool_result': {
        const id = asString(obj.tool_id);
        const failed = obj.status !== 'success';
        const error = asRecord(obj.error);
        const output = asString(obj.output) ?? asString(error?.message) ?? '';
        return [this.entries.make('tool_result', output, { toolCallId: id, toolName: id ? this.calls.get(id) : undefined, toolOutput: output, status: failed ? 'failed' : 'success' }, timestamp)];
      }
      case 'error':
        return [this.entries.make('error', asString(obj.message) ?? 'error', { status: 'failed' }, timestamp)];
      case 'result': {
        if (obj.status === 'success') return [];
        const error = asRecord(obj.error);
        return [this.entries.make('error', asString(error?.message) ?? `the run ended with ${String(obj.status)}`, { status: 'failed' }, timestamp)];
      }
      default:
        return [this.entries.make('system_message', type, undefined, timestamp)];
    }
  }
}
