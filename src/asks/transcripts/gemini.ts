/**
 * Gemini CLI's chat file (~/.gemini/tmp/<project>/chats/session-<time>-<id>.jsonl): a header line,
 * then message records (`type` user, gemini, error, info…) and `{"$set": …}` updates. A message is
 * written again under the same id as it grows (its tool calls added), and `$set.messages` replaces
 * the whole list, so the state is the list of messages by id. The question is a user message
 * carrying the ask's marker; the reply is the text of the gemini messages after it. Gemini writes
 * no end-of-turn record (seen with 0.61.0): a gemini message with text and no tool calls, last in
 * the list, is where the turn ends if nothing follows, so that end is not certain on its own.
 */
import { carriesAsk, withoutMarkers } from './marker.js';
import { arr, contentText, isRecord, joinReply, str, timeOf, type TranscriptFold } from './types.js';

interface GeminiMessage {
  id: string;
  type: string;
  text: string;
  toolCalls: number;
  /** A user message that answers a tool call (functionResponse), not a prompt. */
  toolResult: boolean;
  at: number | null;
}

interface GeminiState {
  askId: string;
  messages: GeminiMessage[];
}

function toMessage(value: unknown): GeminiMessage | null {
  if (!isRecord(value)) return null;
  const id = str(value.id);
  const type = str(value.type);
  if (id === undefined || type === undefined) return null;
  const content = value.content;
  const toolResult = Array.isArray(content) && content.some((p) => isRecord(p) && p.functionResponse !== undefined);
  return { id, type, text: contentText(content, ['text']), toolCalls: arr(value.toolCalls).length, toolResult, at: timeOf(value.timestamp) };
}

function upsert(messages: readonly GeminiMessage[], message: GeminiMessage): GeminiMessage[] {
  const at = messages.findIndex((m) => m.id === message.id);
  if (at < 0) return [...messages, message];
  const next = [...messages];
  next[at] = message;
  return next;
}

export const geminiFold: TranscriptFold<GeminiState> = {
  initial: (askId) => ({ askId, messages: [] }),
  step(state, record) {
    if (!isRecord(record)) return state;
    const set = record.$set;
    if (isRecord(set)) {
      if (!Array.isArray(set.messages)) return state;
      return { ...state, messages: set.messages.map(toMessage).filter((m): m is GeminiMessage => m !== null) };
    }
    const message = toMessage(record);
    return message ? { ...state, messages: upsert(state.messages, message) } : state;
  },
  view(s) {
    const at = s.messages.findIndex((m) => m.type === 'user' && carriesAsk(m.text, s.askId));
    if (at < 0) return { found: false, reply: '', done: false, certain: false, endSignal: null, interrupted: false, endAt: null };
    const after = s.messages.slice(at + 1);
    const nextPrompt = after.findIndex((m) => m.type === 'user' && !m.toolResult);
    const turn = nextPrompt < 0 ? after : after.slice(0, nextPrompt);
    const reply = withoutMarkers(joinReply(turn.filter((m) => m.type === 'gemini').map((m) => m.text)));
    const last = turn[turn.length - 1];
    const answered = last !== undefined && last.type === 'gemini' && last.text.trim() !== '' && last.toolCalls === 0;
    // A later user record makes the end certain. What ended the turn is still the answer when there
    // was one: Gemini records user messages of its own too (the folder list it adds to the history
    // once folders given with --include-directories are trusted, late under load after its restart
    // for a trust answer), so a user record after the answer is no sign the turn was cut short.
    const endAt = last?.at ?? null;
    if (nextPrompt >= 0) return { found: true, reply, done: true, certain: true, endSignal: answered ? 'gemini/message' : 'user/next prompt', interrupted: !answered, endAt };
    const error = turn.find((m) => m.type === 'error');
    if (error) return { found: true, reply, done: true, certain: true, endSignal: 'error', interrupted: true, endAt: error.at };
    return { found: true, reply, done: answered, certain: false, endSignal: answered ? 'gemini/message' : null, interrupted: false, endAt: answered ? endAt : null };
  },
};
