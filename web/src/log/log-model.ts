/**
 * A session's log messages folded into what the structured view lists: output runs (consecutive
 * stdout or stderr chunks, as ANSI-styled HTML), and entries, with each tool result placed under
 * the call it answers (paired by `metadata.toolCallId`). Messages arrive in order and at most once
 * (the feed drops repeats by seq); an entry that arrives again with the same id replaces the
 * earlier one (an approval's status moving on).
 */
import { AnsiSpanParser, spansToHtml, type StyledSpan } from '../../../src/output/ansi-spans.js';
import type { LogMessage, NormalizedEntry } from '../rpc/wire.js';

export type LogItem =
  | { kind: 'output'; key: string; stream: 'stdout' | 'stderr'; html: string; chars: number }
  | { kind: 'entry'; key: string; entry: NormalizedEntry; result: NormalizedEntry | undefined };

const CALL_TYPES = new Set<NormalizedEntry['type']>(['tool_use', 'command_run', 'file_edit', 'file_read']);

/** An output run is cut here so appending to it (re-rendering its HTML) stays cheap. */
const MAX_RUN_CHARS = 16 * 1024;
/** Items kept for display; older ones are counted and left to the export. */
const MAX_ITEMS = 2_000;

type OutputItem = Extract<LogItem, { kind: 'output' }>;

export class LogModel {
  private list: LogItem[] = [];
  private snapshot: readonly LogItem[] = [];
  /** Items dropped from the front to keep the view light. */
  private trimmed = 0;
  private readonly callIndex = new Map<string, number>();
  private readonly entryIndex = new Map<string, number>();
  private readonly parsers = { stdout: new AnsiSpanParser(), stderr: new AnsiSpanParser() };
  /** Spans of the open output run, kept to re-render it as chunks join it. */
  private runSpans: StyledSpan[] = [];

  /** The items to show, oldest first; a new array after each push that changed something. */
  get items(): readonly LogItem[] {
    return this.snapshot;
  }

  /** How many older items were dropped from the view. */
  get hidden(): number {
    return this.trimmed;
  }

  push(messages: readonly LogMessage[]): void {
    if (messages.length === 0) return;
    for (const { seq, msg } of messages) {
      if (msg.type === 'normalized') this.addEntry(seq, msg.entry);
      else this.addOutput(seq, msg.type, msg.content);
    }
    if (this.list.length > MAX_ITEMS * 1.25) this.trim();
    this.snapshot = [...this.list];
  }

  private addOutput(seq: number, stream: 'stdout' | 'stderr', content: string): void {
    const spans = this.parsers[stream].push(content);
    if (spans.length === 0) return;
    const last = this.list[this.list.length - 1];
    if (last?.kind === 'output' && last.stream === stream && last.chars < MAX_RUN_CHARS) {
      appendSpans(this.runSpans, spans);
      const chars = last.chars + spans.reduce((n, s) => n + s.text.length, 0);
      // A new object, so the view re-renders this run and only this run.
      this.list[this.list.length - 1] = { ...last, html: spansToHtml(this.runSpans), chars } satisfies OutputItem;
      return;
    }
    this.runSpans = [...spans];
    this.list.push({ kind: 'output', key: `out-${seq}`, stream, html: spansToHtml(spans), chars: spans.reduce((n, s) => n + s.text.length, 0) });
  }

  private addEntry(seq: number, entry: NormalizedEntry): void {
    const callId = entry.metadata?.toolCallId;
    if (entry.type === 'tool_result' && callId !== undefined) {
      const at = this.callIndex.get(callId);
      const call = at === undefined ? undefined : this.list[at];
      if (at !== undefined && call?.kind === 'entry') {
        this.list[at] = { ...call, result: entry };
        return;
      }
    }
    const known = this.entryIndex.get(entry.id);
    const existing = known === undefined ? undefined : this.list[known];
    if (known !== undefined && existing?.kind === 'entry') {
      this.list[known] = { ...existing, entry };
      return;
    }
    const index = this.list.length;
    this.list.push({ kind: 'entry', key: `entry-${seq}`, entry, result: undefined });
    this.entryIndex.set(entry.id, index);
    if (CALL_TYPES.has(entry.type) && callId !== undefined) this.callIndex.set(callId, index);
  }

  private trim(): void {
    const drop = this.list.length - MAX_ITEMS;
    this.list = this.list.slice(drop);
    this.trimmed += drop;
    // Indexes moved; rebuild them (a late result for a dropped call then shows on its own).
    this.callIndex.clear();
    this.entryIndex.clear();
    this.list.forEach((item, index) => {
      if (item.kind !== 'entry') return;
      this.entryIndex.set(item.entry.id, index);
      const callId = item.entry.metadata?.toolCallId;
      if (CALL_TYPES.has(item.entry.type) && callId !== undefined) this.callIndex.set(callId, index);
    });
  }
}

const sameStyle = (a: StyledSpan['style'], b: StyledSpan['style']): boolean => {
  const keys = Object.keys(a) as (keyof StyledSpan['style'])[];
  return keys.length === Object.keys(b).length && keys.every((k) => a[k] === b[k]);
};

/** Adds spans to a run, joining a chunk's first span to the last one when a chunk boundary split it. */
function appendSpans(run: StyledSpan[], spans: readonly StyledSpan[]): void {
  for (const span of spans) {
    const last = run[run.length - 1];
    if (last && sameStyle(last.style, span.style)) run[run.length - 1] = { text: last.text + span.text, style: last.style };
    else run.push(span);
  }
}
