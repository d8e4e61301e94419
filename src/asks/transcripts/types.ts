/**
 * What a transcript reader says about one ask, and the shape every CLI's reader has: a fold over
 * the transcript's records (a pure step function from records to what is known), so each format is
 * tested on recorded files and the file handling is shared.
 */

/** The formats a profile's `transcript.format` names that have a reader. */
export const TRANSCRIPT_FORMATS = ['claude-jsonl', 'codex-rollout', 'gemini-chat', 'opencode-sqlite'] as const;
export type TranscriptFormat = (typeof TRANSCRIPT_FORMATS)[number];

/** What is known of the reply to one ask. */
export interface ReplyRead {
  /** The question (its marker) was found in the transcript's record of the user's prompt. */
  found: boolean;
  /** The reply's text so far: the assistant's text of that turn, in order, tool calls left out. */
  reply: string;
  /** The CLI's own end of turn was seen. */
  done: boolean;
  /**
   * The end of turn is the CLI's definite signal (Claude's turn_duration, Codex's task_complete,
   * OpenCode's finished step): false where the record only suggests it (Gemini writes no
   * end-of-turn record; its last message record is confirmed by the idle screen).
   */
  certain: boolean;
  /** Which record ended the turn, for evidence ("system/turn_duration", "task_complete", …). */
  endSignal: string | null;
  /** The turn ended without an answer (interrupted, an API error, a newer prompt). */
  interrupted: boolean;
  /** Where it was read (a file, or the database). */
  source: string | null;
  /** When the CLI wrote its end of turn (ms since the epoch), where the record says. */
  endAt: number | null;
}

export const NOTHING_YET: ReplyRead = { found: false, reply: '', done: false, certain: false, endSignal: null, interrupted: false, source: null, endAt: null };

/** Milliseconds since the epoch from an ISO time or a number, or null. */
export function timeOf(value: unknown): number | null {
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  if (typeof value !== 'string') return null;
  const t = Date.parse(value);
  return Number.isNaN(t) ? null : t;
}

/** A format's reader as a fold: records in, what is known out. */
export interface TranscriptFold<S> {
  initial(askId: string): S;
  /** One parsed record (a JSON line); records that do not concern the ask leave the state as it was. */
  step(state: S, record: unknown): S;
  view(state: S): Omit<ReplyRead, 'source'>;
}

/** Narrowing helpers for untyped JSON. */
export const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
export const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
export const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/** The text of a message's content: a string, or the `text` of each text part. */
export function contentText(content: unknown, partTypes: readonly string[] = ['text', 'input_text', 'output_text']): string {
  if (typeof content === 'string') return content;
  return arr(content)
    .map((part) => (isRecord(part) && (part.type === undefined || (typeof part.type === 'string' && partTypes.includes(part.type))) ? (str(part.text) ?? '') : ''))
    .filter((t) => t !== '')
    .join('\n');
}

/** Texts joined the way a reply reads: paragraphs apart, each trimmed, empty ones dropped. */
export function joinReply(texts: readonly string[]): string {
  return texts
    .map((t) => t.trim())
    .filter((t) => t !== '')
    .join('\n\n');
}
