/**
 * OpenCode's `opencode run --format json` lines as entries. A tool shows up once, when it is done
 * (its `state` has the input and the output or error), so it yields the call and its result
 * together, paired by `callID`. Text parts are the assistant's reply; step boundaries yield nothing.
 */
import { asRecord, asString, entryTypeForTool, filePathOf, JsonLinesNormalizer, type NormalizedEntry } from './entry.js';

export class OpenCodeJsonNormalizer extends JsonLinesNormalizer {
  readonly format = 'opencode-json';

  constructor(now?: () => number) {
    super('opencode', now);
  }

  protected read(type: string, obj: Record<string, unknown>): NormalizedEntry[] {
    const timestamp = typeof obj.timestamp === 'number' ? obj.timestamp : undefined;
    const part = asRecord(obj.part);
    switch (type) {
      case 'step_start':
      case 'step_finish':
        return [];
      case 'text': {
        const content = asString(part?.text) ?? '';
        return content === '' ? [] : [this.entries.make('assistant_message', content, undefined, timestamp)];
      }
      case 'tool_use':
        return this.tool(part, timestamp);
      case 'error': {
        const error = asRecord(obj.error);
        const data = asRecord(error?.data);
        return [this.entries.make('error', asString(data?.message) ?? asString(error?.message) ?? asString(error?.name) ?? 'error', { status: 'failed' }, timestamp)];
      }
      default:
        return [this.entries.make('system_message', type, undefined, timestamp)];
    }
  }

  private tool(part: Record<string, unknown> | undefined, timestamp: number | undefined): NormalizedEntry[] {
    const name = asString(part?.tool) ?? 'tool';
    const id = asString(part?.callID);
    const state = asRecord(part?.state);
    const input = asRecord(state?.input);
    const kind = entryTypeForTool(name);
    const command = asString(input?.command);
    const filePath = filePathOf(input);
    const call = this.entries.make(kind, kind === 'command_run' && command ? command : filePath ?? name, { toolName: name, toolInput: input, toolCallId: id, status: 'running', filePath }, timestamp);
    const status = asString(state?.status);
    if (status !== 'completed' && status !== 'error') return [call];
    const meta = asRecord(state?.metadata);
    const output = asString(state?.output) ?? asString(state?.error) ?? '';
    const exitCode = typeof meta?.exit === 'number' ? meta.exit : undefined;
    const failed = status === 'error' || (exitCode !== undefined && exitCode !== 0);
    return [call, this.entries.make('tool_result', output, { toolName: name, toolCallId: id, toolOutput: output, exitCode, status: failed ? 'failed' : 'success' }, timestamp)];
  }
}
