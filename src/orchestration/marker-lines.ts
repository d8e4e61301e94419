/**
 * Seed 003's tool-call protocol (§10.2) for a planner that has no MCP: it prints one line
 * `__MPS_TOOL__ {"id":"t1","method":"tabs.list","params":{},"nonce":"…"}` (or the JSON in base64
 * after `b64:`), Switchboard runs the tool and types `__MPS_TOOL_RESULT__ {…}` back.
 *
 * What is given to the reader decides who can call: it must be the planner's own replies (its
 * transcript's assistant messages), never its screen as a whole, where text typed into the
 * planner (by a worker that learned the nonce, say) shows too. Within that, a call counts only
 * at the start of a line (after blanks or a bullet a CLI draws, never after a prompt sign `>` or
 * `›`, which marks typed text), only with the run's nonce, and each id once however often the
 * line is read again; a line that does not parse is ignored and counted. Marker lines are taken
 * out of anything shown (summaries, `tabs.read`, the board).
 */
import { randomBytes } from 'node:crypto';

export const TOOL_PREFIX = '__MPS_TOOL__';
export const RESULT_PREFIX = '__MPS_TOOL_RESULT__';
const BASE64_TAG = 'b64:';
/** A call's line: blanks or a CLI's bullet (Claude Code's ⏺, a list's - or •, a box's │) before the prefix, and nothing else. */
const CALL_START = new RegExp(`^[\\s\\u23fa\\u25cf\\u2022*\\u2502\\u2503-]*${TOOL_PREFIX}(?=\\s|$)`);
/** A marker line's payload, at most: a tool call is small; a longer line is not one. */
const MAX_PAYLOAD_CHARS = 256 * 1024;
/** Ids kept to refuse a second run of the same call (a planner makes far fewer in a run). */
const MAX_REMEMBERED_IDS = 10_000;

/** A tool call read from a marker line. */
export interface MarkerCall {
  id: string;
  method: string;
  params: Record<string, unknown>;
}

/** Why a marker line was not taken (for the run's record: a forged or broken line is worth knowing about). */
export type IgnoredMarker = { why: 'unparsable' | 'wrong nonce' | 'too many calls' | 'not at the start of a line'; id?: string };

/** A fresh nonce for a run: 96 random bits, hex. */
export function newRunNonce(): string {
  return randomBytes(12).toString('hex');
}

/** Reads the marker lines of one planner, each call once. */
export class MarkerReader {
  private readonly seen = new Set<string>();
  /** Marker lines that were not taken, oldest first (the last 100). */
  readonly ignored: IgnoredMarker[] = [];

  constructor(private readonly nonce: string) {}

  /** The new calls in `text` (any number of lines), in order. */
  read(text: string): MarkerCall[] {
    const calls: MarkerCall[] = [];
    for (const line of text.split(/\r?\n/)) {
      const start = CALL_START.exec(line);
      if (!start) {
        if (line.includes(TOOL_PREFIX)) this.ignore({ why: 'not at the start of a line' });
        continue;
      }
      const payload = line.slice(start[0].length).trim();
      const call = parsePayload(payload);
      if (!call) {
        this.ignore({ why: 'unparsable' });
        continue;
      }
      if (call.nonce !== this.nonce) {
        this.ignore({ why: 'wrong nonce', id: call.id });
        continue;
      }
      if (this.seen.has(call.id)) continue; // read again from the same output: not news, and not worth a record
      if (this.seen.size >= MAX_REMEMBERED_IDS) {
        this.ignore({ why: 'too many calls', id: call.id });
        continue;
      }
      this.seen.add(call.id);
      calls.push({ id: call.id, method: call.method, params: call.params });
    }
    return calls;
  }

  private ignore(what: IgnoredMarker): void {
    this.ignored.push(what);
    if (this.ignored.length > 100) this.ignored.shift();
  }
}

/** The line typed back into the planner with a tool's outcome (one line: JSON has no raw line breaks). */
export function resultLine(id: string, outcome: { ok: true; result: unknown } | { ok: false; error: { code: string; message: string } }): string {
  return `${RESULT_PREFIX} ${JSON.stringify({ id, ...outcome })}`;
}

/** `lines` without marker lines of either kind: what summaries, `tabs.read` and the board show. */
export function withoutMarkerLines(lines: readonly string[]): string[] {
  return lines.filter((line) => !line.includes(TOOL_PREFIX) && !line.includes(RESULT_PREFIX));
}

function parsePayload(payload: string): (MarkerCall & { nonce: string }) | undefined {
  if (payload.length === 0 || payload.length > MAX_PAYLOAD_CHARS) return undefined;
  let json = payload;
  if (payload.startsWith(BASE64_TAG)) {
    const encoded = payload.slice(BASE64_TAG.length).replace(/\s+/g, '');
    if (!/^[A-Za-z0-9+/=_-]+$/.test(encoded)) return undefined;
    json = Buffer.from(encoded, 'base64').toString('utf8');
  }
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const v = value as Record<string, unknown>;
  const params = v.params ?? {};
  if (typeof v.id !== 'string' || v.id === '' || v.id.length > 128 || typeof v.method !== 'string' || typeof v.nonce !== 'string') return undefined;
  if (typeof params !== 'object' || Array.isArray(params)) return undefined;
  return { id: v.id, method: v.method, params: params as Record<string, unknown>, nonce: v.nonce };
}
