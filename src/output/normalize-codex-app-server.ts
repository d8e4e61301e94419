/**
 * Codex's app-server notifications (protocol v2, Codex 0.171) as entries. Work comes as items:
 * `item/started` when a command or a patch begins (a command_run, running; a patch's changes are
 * kept for its approval, which does not repeat them), `item/completed` when it ends (the command's
 * tool_result with its exit code, the patch's file_edit entries, the agent's whole message). The
 * reply also streams as `item/agentMessage/delta`: pieces, taken by the driver (`takePieces`).
 * Items still open when a turn ends (an interrupted command sends no completion) are closed here.
 */
import { asRecord, asString, EntryFactory, type NormalizedEntry } from './entry.js';

export interface FileChange {
  path: string;
  /** add, update, delete (Codex's `kind.type`). */
  kind: string;
}

export class CodexAppServerNormalizer {
  readonly format = 'codex-app-server';
  private readonly entries: EntryFactory;
  /** Commands started and not yet completed, by item id (closed at the turn's end if Codex never says). */
  private readonly openCommands = new Map<string, string>();
  /** Each patch's changes from its `item/started`, by item id: the approval request names only the item. */
  private readonly patches = new Map<string, FileChange[]>();
  private pieces: string[] = [];

  constructor(now?: () => number) {
    this.entries = new EntryFactory('codex', now);
  }

  userPrompt(text: string): NormalizedEntry {
    return this.entries.make('user_message', text);
  }

  note(text: string, metadata?: NormalizedEntry['metadata']): NormalizedEntry {
    return this.entries.make('system_message', text, metadata);
  }

  error(text: string): NormalizedEntry {
    return this.entries.make('error', text, { status: 'failed' });
  }

  /** The changes of patch `itemId`, as its `item/started` listed them ([] when it did not). */
  changesOf(itemId: string): FileChange[] {
    return this.patches.get(itemId) ?? [];
  }

  /** The entries one notification yields. */
  notification(method: string, params: unknown): NormalizedEntry[] {
    const p = asRecord(params);
    switch (method) {
      case 'item/started':
        return this.started(asRecord(p?.item));
      case 'item/completed':
        return this.completed(asRecord(p?.item));
      case 'item/agentMessage/delta': {
        const delta = asString(p?.delta);
        if (delta) this.pieces.push(delta);
        return [];
      }
      case 'error': {
        // willRetry: Codex tries again itself; only the last word counts as the turn's error.
        if (p?.willRetry === true) return [this.note(`codex will retry: ${describeError(p.error)}`)];
        return [this.error(describeError(p?.error))];
      }
      default:
        return [];
    }
  }

  /** The reply's pieces since the last call. */
  takePieces(): string[] {
    const out = this.pieces;
    this.pieces = [];
    return out;
  }

  /** At a turn's end: a result for every command Codex never said had ended (an interrupt kills them silently). */
  closeOpenItems(why: string): NormalizedEntry[] {
    const out = [...this.openCommands.keys()].map((id) => this.entries.make('tool_result', why, { toolName: 'shell', toolCallId: id, toolOutput: why, status: 'failed' }));
    this.openCommands.clear();
    this.patches.clear();
    return out;
  }

  private started(item: Record<string, unknown> | undefined): NormalizedEntry[] {
    const id = asString(item?.id);
    if (!item || !id) return [];
    if (item.type === 'commandExecution') {
      const command = asString(item.command) ?? '';
      this.openCommands.set(id, command);
      return [this.entries.make('command_run', command, { toolName: 'shell', toolInput: { command, cwd: asString(item.cwd) }, toolCallId: id, status: 'running' })];
    }
    if (item.type === 'fileChange') this.patches.set(id, fileChanges(item.changes));
    return [];
  }

  private completed(item: Record<string, unknown> | undefined): NormalizedEntry[] {
    if (typeof item?.type !== 'string') return [];
    const id = asString(item.id);
    switch (item.type) {
      case 'agentMessage':
        return [this.entries.make('assistant_message', asString(item.text) ?? '')];
      case 'userMessage':
      case 'reasoning':
      case 'plan':
        return [];
      case 'commandExecution': {
        const out: NormalizedEntry[] = [];
        const command = asString(item.command) ?? '';
        if (id && !this.openCommands.has(id)) out.push(this.entries.make('command_run', command, { toolName: 'shell', toolInput: { command }, toolCallId: id, status: 'running' }));
        if (id) this.openCommands.delete(id);
        const exitCode = typeof item.exitCode === 'number' ? item.exitCode : undefined;
        const declined = item.status === 'declined';
        const output = declined ? 'declined: the command did not run' : (asString(item.aggregatedOutput) ?? '');
        const failed = declined || item.status === 'failed' || (exitCode !== undefined && exitCode !== 0);
        out.push(this.entries.make('tool_result', output, { toolName: 'shell', toolCallId: id, toolOutput: output, exitCode, status: failed ? 'failed' : 'success' }));
        return out;
      }
      case 'fileChange': {
        const changes = fileChanges(item.changes);
        if (id) this.patches.delete(id);
        const status = item.status === 'completed' ? 'success' : 'failed';
        const verb = item.status === 'declined' ? 'declined ' : '';
        return changes.map((c) => this.entries.make('file_edit', `${verb}${c.kind} ${c.path}`, { filePath: c.path, toolName: 'apply_patch', toolCallId: id, status }));
      }
      default: {
        const name = typeof item.tool === 'string' ? `${asString(item.server) ?? asString(item.namespace) ?? item.type}.${item.tool}` : asString(item.type);
        const failed = item.status === 'failed' || item.success === false;
        return [this.entries.make('tool_use', name ?? 'item', { toolName: name, toolCallId: id, toolInput: item, status: failed ? 'failed' : 'success' })];
      }
    }
  }
}

function fileChanges(value: unknown): FileChange[] {
  if (!Array.isArray(value)) return [];
  return value.flatMap((c) => {
    const change = asRecord(c);
    const path = asString(change?.path);
    return path ? [{ path, kind: asString(asRecord(change?.kind)?.type) ?? asString(change?.kind) ?? 'update' }] : [];
  });
}

/** Codex's error object in a sentence: its message, and its kind where it names one. */
export function describeError(error: unknown): string {
  const e = asRecord(error);
  const message = asString(e?.message) ?? 'the turn failed';
  const info = asString(e?.codexErrorInfo);
  return info ? `${message} (${info})` : message;
}
