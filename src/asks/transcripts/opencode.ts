/**
 * OpenCode's storage (~/.local/share/opencode/opencode.db, SQLite): tables `message` (id,
 * session_id, time_created, data JSON with role, parentID, finish, time.completed, error) and `part`
 * (id, message_id, data JSON: text, tool, step-start, step-finish{reason}…). The question is a user
 * message with a text part carrying the ask's marker; the reply is the text parts of the assistant
 * messages whose parentID is that message; the turn ends with an assistant message that finished
 * for a reason other than tool calls (its step-finish reason "stop"), as seen with 1.18.33.
 *
 * The database is only ever read, through a query (ASK_ROWS_SQL) that returns the rows of the
 * question's session from the question on, one row per part.
 */
import { isAskId, carriesAsk, withoutMarkers } from './marker.js';
import { isRecord, joinReply, str, timeOf, type ReplyRead } from './types.js';

/** One row of ASK_ROWS_SQL's result. */
export interface OpenCodeRow {
  message_id: string;
  message_time: number;
  message: string;
  part_id: string | null;
  part: string | null;
}

/** The rows of the ask's session from the question's message on (read-only; the id is checked hex). */
export function askRowsSql(askId: string): string {
  if (!isAskId(askId)) throw new Error(`not an ask id: ${askId}`);
  const marker = `%[switchboard ask ${askId}]%`;
  return [
    'SELECT m.id AS message_id, m.time_created AS message_time, m.data AS message, p.id AS part_id, p.data AS part',
    'FROM message m LEFT JOIN part p ON p.message_id = m.id',
    `WHERE m.session_id = (SELECT session_id FROM part WHERE data LIKE '${marker}' LIMIT 1)`,
    `AND m.time_created >= (SELECT m2.time_created FROM message m2 JOIN part p2 ON p2.message_id = m2.id WHERE p2.data LIKE '${marker}' LIMIT 1)`,
    'ORDER BY m.time_created, m.id, p.time_created, p.id',
  ].join(' ');
}

interface Message {
  id: string;
  role: string;
  parentId: string | null;
  finish: string | null;
  completed: boolean;
  completedAt: number | null;
  error: boolean;
  texts: string[];
  finishedStep: string | null;
}

const parse = (json: string | null): Record<string, unknown> | null => {
  if (json === null) return null;
  try {
    const value: unknown = JSON.parse(json);
    return isRecord(value) ? value : null;
  } catch {
    return null;
  }
};

function messagesOf(rows: readonly OpenCodeRow[]): Message[] {
  const byId = new Map<string, Message>();
  for (const row of rows) {
    let message = byId.get(row.message_id);
    if (!message) {
      const data = parse(row.message) ?? {};
      const time = isRecord(data.time) ? data.time : {};
      message = {
        id: row.message_id,
        role: str(data.role) ?? '',
        parentId: str(data.parentID) ?? null,
        finish: str(data.finish) ?? null,
        completed: typeof time.completed === 'number',
        completedAt: timeOf(time.completed),
        error: data.error !== undefined,
        texts: [],
        finishedStep: null,
      };
      byId.set(row.message_id, message);
    }
    const part = parse(row.part);
    if (!part) continue;
    // Synthetic parts are OpenCode's own additions (file contents, reminders), not what was typed or said.
    if (part.type === 'text' && part.synthetic !== true && typeof part.text === 'string') message.texts.push(part.text);
    if (part.type === 'step-finish') message.finishedStep = str(part.reason) ?? null;
  }
  return [...byId.values()];
}

/** What the rows say about ask `askId`. */
export function readOpenCodeRows(rows: readonly OpenCodeRow[], askId: string): Omit<ReplyRead, 'source'> {
  const messages = messagesOf(rows);
  const question = messages.find((m) => m.role === 'user' && m.texts.some((t) => carriesAsk(t, askId)));
  if (!question) return { found: false, reply: '', done: false, certain: false, endSignal: null, interrupted: false, endAt: null };
  const answers = messages.filter((m) => m.role === 'assistant' && m.parentId === question.id);
  const reply = withoutMarkers(joinReply(answers.flatMap((m) => m.texts)));
  const failed = answers.find((m) => m.error);
  if (failed) return { found: true, reply, done: true, certain: true, endSignal: 'message/error', interrupted: true, endAt: failed.completedAt };
  const finished = answers.find((m) => m.completed && m.finish !== null && m.finish !== 'tool-calls' && m.finish !== 'unknown');
  if (finished) return { found: true, reply, done: true, certain: true, endSignal: `message/finish:${finished.finish ?? ''}`, interrupted: false, endAt: finished.completedAt };
  const later = messages.find((m) => m.role === 'user' && m !== question && messages.indexOf(m) > messages.indexOf(question));
  if (later) return { found: true, reply, done: true, certain: true, endSignal: 'user/next prompt', interrupted: true, endAt: null };
  return { found: true, reply, done: false, certain: false, endSignal: null, interrupted: false, endAt: null };
}
