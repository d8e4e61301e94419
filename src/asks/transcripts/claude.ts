/**
 * Claude Code's transcript (~/.claude/projects/<cwd dashed>/<session>.jsonl). The question is a
 * `user` record whose message content carries the ask's marker; the reply is the text blocks of the
 * `assistant` records after it (one record per block, tool calls between them); the turn ends with
 * the `system` record of subtype `turn_duration` Claude writes once the turn is over (seen with
 * 2.1.197 and 2.1.330), or, failing that, when a newer prompt or an interruption shows up.
 */
import { askIdIn, carriesAsk, withoutMarkers } from './marker.js';
import { contentText, isRecord, joinReply, str, timeOf, type TranscriptFold } from './types.js';

interface ClaudeState {
  askId: string;
  phase: 'before' | 'answering' | 'ended';
  texts: string[];
  endSignal: string | null;
  interrupted: boolean;
  certain: boolean;
  endAt: number | null;
}

/** Claude writes this as the user's text when Esc stops a turn. */
const INTERRUPTED = /^\[Request interrupted by user/;

/** A user record a person (or an asker) typed, as opposed to a tool result or Claude's own meta records. */
function promptText(record: Record<string, unknown>): string | null {
  if (record.type !== 'user' || record.isMeta === true || record.isSidechain === true) return null;
  const message = record.message;
  if (!isRecord(message)) return null;
  const content = message.content;
  if (Array.isArray(content) && content.some((part) => isRecord(part) && part.type === 'tool_result')) return null;
  return contentText(content, ['text']);
}

export const claudeFold: TranscriptFold<ClaudeState> = {
  initial: (askId) => ({ askId, phase: 'before', texts: [], endSignal: null, interrupted: false, certain: false, endAt: null }),
  step(state, record) {
    if (state.phase === 'ended' || !isRecord(record)) return state;
    const prompt = promptText(record);
    if (state.phase === 'before') {
      return prompt !== null && carriesAsk(prompt, state.askId) ? { ...state, phase: 'answering' } : state;
    }
    if (prompt !== null) {
      // Another prompt (an interruption, or a turn this ask did not start) ends the ask's turn.
      const interrupted = INTERRUPTED.test(prompt.trim());
      const other = askIdIn(prompt);
      return { ...state, phase: 'ended', interrupted: interrupted || other !== state.askId, endSignal: interrupted ? 'user/interrupted' : 'user/next prompt', endAt: timeOf(record.timestamp) };
    }
    if (record.type === 'assistant' && record.isSidechain !== true && isRecord(record.message)) {
      const text = contentText(record.message.content, ['text']);
      return text === '' ? state : { ...state, texts: [...state.texts, text] };
    }
    if (record.type === 'system' && str(record.subtype) === 'turn_duration') {
      return { ...state, phase: 'ended', certain: true, endSignal: 'system/turn_duration', endAt: timeOf(record.timestamp) };
    }
    return state;
  },
  view: (s) => ({
    found: s.phase !== 'before',
    reply: withoutMarkers(joinReply(s.texts)),
    done: s.phase === 'ended',
    certain: s.certain,
    endSignal: s.endSignal,
    interrupted: s.interrupted,
    endAt: s.endAt,
  }),
};
