/**
 * One item of the structured view: a message, a tool call with its result under it, a file edit
 * as a diff, an error, or a run of output with its colours.
 */
import { memo } from 'react';
import type { NormalizedEntry } from '../rpc/wire.js';
import { diffLines, type DiffLine } from './line-diff.js';
import type { LogItem } from './log-model.js';

const str = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

/** The file a tool's input names (the same keys the normalizers read). */
function filePathOf(entry: NormalizedEntry): string | undefined {
  if (entry.metadata?.filePath) return entry.metadata.filePath;
  const input = entry.metadata?.toolInput;
  for (const key of ['file_path', 'filePath', 'path', 'absolute_path', 'notebook_path']) {
    const value = str(input?.[key]);
    if (value) return value;
  }
  return undefined;
}

/** The diff a file edit's input describes: old/new strings (one or several edits), or a whole new file. */
function editDiff(entry: NormalizedEntry): DiffLine[] | undefined {
  const input = entry.metadata?.toolInput;
  if (!input) return undefined;
  const pairs: [string, string][] = [];
  const pairOf = (edit: unknown): void => {
    if (typeof edit !== 'object' || edit === null) return;
    const { old_string: before, new_string: after } = edit as Record<string, unknown>;
    if (typeof before === 'string' && typeof after === 'string') pairs.push([before, after]);
  };
  pairOf(input);
  if (Array.isArray(input.edits)) input.edits.forEach(pairOf);
  if (pairs.length > 0) return pairs.flatMap(([before, after]) => diffLines(before, after));
  const content = str(input.content);
  if (content !== undefined) return diffLines('', content);
  return undefined;
}

/** A patch given as text (apply_patch): its lines, coloured by their first character. */
function patchLines(entry: NormalizedEntry): DiffLine[] | undefined {
  const input = entry.metadata?.toolInput;
  const patch = str(input?.patch) ?? str(input?.input) ?? str(input?.diff);
  if (patch === undefined) return undefined;
  return patch.split('\n').map((text) => ({ op: text.startsWith('+') && !text.startsWith('+++') ? 'added' : text.startsWith('-') && !text.startsWith('---') ? 'removed' : 'same', text }));
}

function Diff({ lines }: { lines: DiffLine[] }) {
  const marks = { same: ' ', removed: '-', added: '+' } as const;
  return (
    <pre className="log-diff" data-testid="log-diff">
      {lines.map((line, i) => (
        <div key={i} className={`diff-${line.op}`}>
          {marks[line.op]} {line.text}
        </div>
      ))}
    </pre>
  );
}

function Status({ entry }: { entry: NormalizedEntry }) {
  const status = entry.metadata?.status;
  const exitCode = entry.metadata?.exitCode;
  return (
    <>
      {status && <span className={`log-status log-status-${status}`}>{status}</span>}
      {exitCode !== undefined && <span className={`log-status ${exitCode === 0 ? '' : 'log-status-failed'}`}>exit {exitCode}</span>}
    </>
  );
}

/** What a tool call was asked to do, in one line. */
function callSummary(entry: NormalizedEntry): string {
  const input = entry.metadata?.toolInput;
  if (entry.type === 'command_run') return str(input?.command) ?? str(input?.cmd) ?? entry.content;
  if (entry.type === 'file_edit' || entry.type === 'file_read') return filePathOf(entry) ?? entry.content;
  return entry.content;
}

function ToolResult({ result, fallback }: { result: NormalizedEntry | undefined; fallback: string | undefined }) {
  const text = result ? result.content || result.metadata?.toolOutput : fallback;
  if (text === undefined || text === '') return null;
  const failed = result?.metadata?.status === 'failed' || (result?.metadata?.exitCode ?? 0) !== 0;
  return (
    <pre className={`log-result ${failed ? 'log-failed' : ''}`} data-testid="log-tool-result">
      {text}
    </pre>
  );
}

function ToolCall({ entry, result }: { entry: NormalizedEntry; result: NormalizedEntry | undefined }) {
  const tool = entry.metadata?.toolName ?? entry.type.replace('_', ' ');
  const diff = entry.type === 'file_edit' ? (editDiff(entry) ?? patchLines(entry)) : undefined;
  const input = entry.metadata?.toolInput;
  return (
    <div className="log-call">
      <div className="log-call-head">
        <span className="log-tool">{tool}</span>
        <code className="log-call-summary">{entry.type === 'command_run' ? `$ ${callSummary(entry)}` : callSummary(entry)}</code>
        {/* Once answered, the result's status is the call's outcome; the call's own is stale. */}
        <Status entry={result ?? entry} />
      </div>
      {diff && <Diff lines={diff} />}
      {entry.type === 'tool_use' && input && Object.keys(input).length > 0 && <pre className="log-input">{JSON.stringify(input, null, 2)}</pre>}
      <ToolResult result={result} fallback={entry.metadata?.toolOutput} />
    </div>
  );
}

const ROLE_LABELS: Partial<Record<NormalizedEntry['type'], string>> = {
  user_message: 'you',
  assistant_message: 'assistant',
  system_message: 'system',
  error: 'error',
  tool_result: 'result',
  raw: 'raw',
};

function EntryBody({ entry, result }: { entry: NormalizedEntry; result: NormalizedEntry | undefined }) {
  switch (entry.type) {
    case 'tool_use':
    case 'command_run':
    case 'file_edit':
    case 'file_read':
      return <ToolCall entry={entry} result={result} />;
    case 'tool_result':
      return <ToolResult result={entry} fallback={undefined} />;
    default:
      return (
        <div className="log-message">
          <span className="log-role">{ROLE_LABELS[entry.type] ?? entry.type}</span>
          <div className="log-text">{entry.content}</div>
        </div>
      );
  }
}

/** One list item; memoized since a batch changes only the last few items of a long list. */
export const LogItemView = memo(function LogItemView({ item }: { item: LogItem }) {
  if (item.kind === 'output') {
    return (
      // The HTML comes from spansToHtml, which escapes every character of the program's text.
      <pre className={`log-output log-${item.stream} ansi`} data-testid="log-output" dangerouslySetInnerHTML={{ __html: item.html }} />
    );
  }
  const { entry, result } = item;
  return (
    <div className={`log-entry log-${entry.type}`} data-testid="log-entry" data-type={entry.type} data-entry-id={entry.id}>
      <EntryBody entry={entry} result={result} />
    </div>
  );
});
