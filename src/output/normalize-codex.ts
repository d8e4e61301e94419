/**
 * Codex's `codex exec --json` lines as entries. Work comes as items: `item.started` when a command
 * begins (a command_run, running) and `item.completed` when it ends (its tool_result, paired by the
 * item id, with the exit code); agent messages, file changes and errors complete at once.
 */
import { asRecord, asString, JsonLinesNormalizer, type NormalizedEntry } from './entry.js';

export class CodexExecJsonNormalizer extends JsonLinesNormalizer {
  readonly format = 'codex-exec-json';
  /** Commands that started, by item id: a completion without a start still gets its call. */
  private readonly started = new Set<string>();

  constructor(now?: () => number) {
    super('codex', now);
  }

  protected read(type: string, obj: Record<string, unknown>): NormalizedEntry[] {
    switch (type) {
      case 'thread.started':
        return [this.entries.make('system_message', `session started: ${asString(obj.thread_id) ?? 'thread'}`)];
      case 'turn.started':
      case 'turn.completed':
        return [];
      case 'turn.failed': {
        const error = asRecord(obj.error);
        return [this.entries.make('error', asString(error?.message) ?? 'the turn failed', { status: 'failed' })];
      }
      case 'error':
        return [this.entries.make('error', asString(obj.message) ?? 'error', { status: 'failed' })];
      case 'item.started':
      case 'item.updated':
      case 'item.completed':
        return this.item(asRecord(obj.item), type === 'item.completed');
      default:
        return [this.entries.make('system_message', type)];
    }
  }

  private item(item: Record<string, unknown> | undefined, completed: boolean): NormalizedEntry[] {
    const id = asString(item?.id);
    switch (item?.type) {
      case 'agent_message':
        return completed ? [this.entries.make('assistant_message', asString(item.text) ?? '')] : [];
      case 'reasoning':
        return [];
      case 'command_execution': {
        const command = asString(item.command) ?? '';
        const out: NormalizedEntry[] = [];
        if (!id || !this.started.has(id)) {
          if (id) this.started.add(id);
          out.push(this.entries.make('command_run', command, { toolName: 'shell', toolInput: { command }, toolCallId: id, status: 'running' }));
        }
        if (completed) {
          const output = asString(item.aggregated_output) ?? '';
          const exitCode = typeof item.exit_code === 'number' ? item.exit_code : undefined;
          const failed = item.status === 'failed' || item.status === 'declined' || (exitCode !== undefined && exitCode !== 0);
          out.push(this.entries.make('tool_result', output, { toolName: 'shell', toolCallId: id, toolOutput: output, exitCode, status: failed ? 'failed' : 'success' }));
        }
        return out;
      }
      case 'file_change': {
        if (!completed) return [];
        const changes = Array.isArray(item.changes) ? item.changes.map((c) => asRecord(c)) : [];
        return changes.map((c) => this.entries.make('file_edit', `${asString(c?.kind) ?? 'update'} ${asString(c?.path) ?? ''}`.trim(), { filePath: asString(c?.path), toolName: 'apply_patch', toolCallId: id, status: item.status === 'failed' ? 'failed' : 'success' }));
      }
      case 'error':
        return [this.entries.make('error', asString(item.message) ?? 'error', { status: 'failed' })];
      default:
        return completed ? [this.entries.make('tool_use', asString(item?.type) ?? 'item', { toolCallId: id, toolInput: item, status: 'success' })] : [];
    }
  }
}
