/**
 * One event model for every agent, whatever CLI it is: the NormalizedEntry of seed 001. Each
 * structured format gets a normalizer that turns its lines into entries; a line that cannot be
 * read becomes a `raw` entry (and is counted), never dropped.
 */

import type { EntryMetadata, NormalizedEntry, NormalizedEntryType } from '../contract/entry.js';

// The entry and its types are the shared vocabulary (src/contract/entry.ts).
export { ENTRY_TYPES, type NormalizedEntryType, type EntryStatus, type EntryMetadata, type NormalizedEntry } from '../contract/entry.js';

/** Reads one structured format, line by line; keeps what it needs to pair calls with results. */
export interface Normalizer {
  readonly format: string;
  /** The entries one line of output yields (often one, sometimes none or several). */
  line(text: string): NormalizedEntry[];
  /** Lines that could not be read (each became a raw entry). */
  readonly unparsed: number;
  /** At the end of the stream: what was still being put together (a message streamed in pieces). */
  end?(): NormalizedEntry[];
}

/** What a tool call is, by its name: a shell command, a file edit, a file read, or another tool. */
export function entryTypeForTool(name: string): 'command_run' | 'file_edit' | 'file_read' | 'tool_use' {
  const n = name.toLowerCase();
  if (['bash', 'shell', 'run_shell_command', 'exec_command', 'local_shell'].includes(n)) return 'command_run';
  if (['edit', 'multiedit', 'write', 'notebookedit', 'write_file', 'replace', 'apply_patch', 'patch'].includes(n)) return 'file_edit';
  if (['read', 'read_file', 'read_many_files', 'view'].includes(n)) return 'file_read';
  return 'tool_use';
}

/** The file a tool's input names, where it names one. */
export function filePathOf(input: Record<string, unknown> | undefined): string | undefined {
  for (const key of ['file_path', 'filePath', 'path', 'absolute_path', 'notebook_path']) {
    const value = input?.[key];
    if (typeof value === 'string' && value !== '') return value;
  }
  return undefined;
}

/** A helper normalizers share: ids, raw entries and the unparsed count. */
export class EntryFactory {
  unparsed = 0;
  private next = 0;
  constructor(
    private readonly prefix: string,
    private readonly now: () => number = Date.now,
  ) {}

  make(type: NormalizedEntryType, content: string, metadata?: EntryMetadata, timestamp?: number): NormalizedEntry {
    const entry: NormalizedEntry = { id: `${this.prefix}-${++this.next}`, type, timestamp: timestamp ?? this.now(), content };
    // Only what is known: a key with no value is left out, so entries compare and serialize cleanly.
    const known = Object.fromEntries(Object.entries(metadata ?? {}).filter(([, v]) => v !== undefined)) as EntryMetadata;
    if (Object.keys(known).length > 0) entry.metadata = known;
    return entry;
  }

  /** A line that could not be read, kept as it was. */
  raw(text: string): NormalizedEntry {
    this.unparsed++;
    return this.make('raw', text);
  }
}

/**
 * The shared part of the JSON-lines normalizers: blank lines yield nothing, a line that is not a
 * JSON object with a `type` becomes a raw entry, and the rest goes to `read`.
 */
export abstract class JsonLinesNormalizer implements Normalizer {
  abstract readonly format: string;
  protected readonly entries: EntryFactory;

  constructor(prefix: string, now?: () => number) {
    this.entries = new EntryFactory(prefix, now);
  }

  get unparsed(): number {
    return this.entries.unparsed;
  }

  line(text: string): NormalizedEntry[] {
    if (text.trim() === '') return [];
    const obj = parseObjectLine(text);
    const type = asString(obj?.type);
    if (!obj || !type) return [...this.flush(), this.entries.raw(text)];
    return this.read(type, obj);
  }

  /** What a line of `type` yields. */
  protected abstract read(type: string, obj: Record<string, unknown>): NormalizedEntry[];

  /** What is held back (a message streamed in pieces), given out before anything else. */
  protected flush(): NormalizedEntry[] {
    return [];
  }
}

/** Parses a JSON object line; undefined for anything else. */
export function parseObjectLine(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

export const asRecord = (v: unknown): Record<string, unknown> | undefined => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined);
export const asString = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
