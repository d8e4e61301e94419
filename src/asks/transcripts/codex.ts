/**
 * Codex's rollout ($CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<thread>.jsonl). The question is a
 * `response_item` message of role `user` carrying the ask's marker; the reply is the `output_text`
 * of the assistant messages after it; the turn ends with the `event_msg` `task_complete` of the
 * turn the question opened (`turn_aborted` when it was stopped). Seen with 0.169.0.
 */
import { carriesAsk, withoutMarkers } from './marker.js';
import { contentText, isRecord, joinReply, str, timeOf, type TranscriptFold } from './types.js';

interface CodexState {
  askId: string;
  phase: 'before' | 'answering' | 'ended';
  /** The turn the question belongs to: the last `task_started` before it. */
  turnId: string | null;
  pendingTurnId: string | null;
  texts: string[];
  endSignal: string | null;
  interrupted: boolean;
  endAt: number | null;
}

export const codexFold: TranscriptFold<CodexState> = {
  initial: (askId) => ({ askId, phase: 'before', turnId: null, pendingTurnId: null, texts: [], endSignal: null, interrupted: false, endAt: null }),
  step(state, record) {
    if (state.phase === 'ended' || !isRecord(record) || !isRecord(record.payload)) return state;
    const payload = record.payload;
    const type = str(record.type);
    if (type === 'event_msg' && payload.type === 'task_started') {
      return state.phase === 'before' ? { ...state, pendingTurnId: str(payload.turn_id) ?? null } : state;
    }
    if (type === 'response_item' && payload.type === 'message') {
      const text = contentText(payload.content);
      if (payload.role === 'user') {
        if (state.phase === 'before' && carriesAsk(text, state.askId)) return { ...state, phase: 'answering', turnId: state.pendingTurnId };
        return state;
      }
      if (payload.role === 'assistant' && state.phase === 'answering' && text !== '') return { ...state, texts: [...state.texts, text] };
      return state;
    }
    if (type === 'event_msg' && state.phase === 'answering' && (payload.type === 'task_complete' || payload.type === 'turn_aborted')) {
      const turn = str(payload.turn_id) ?? null;
      if (state.turnId !== null && turn !== null && turn !== state.turnId) return state;
      const aborted = payload.type === 'turn_aborted';
      // A turn whose messages were not written as response items still names its last message.
      const texts = state.texts.length === 0 && str(payload.last_agent_message) ? [str(payload.last_agent_message) ?? ''] : state.texts;
      return { ...state, texts, phase: 'ended', interrupted: aborted, endSignal: aborted ? 'event_msg/turn_aborted' : 'event_msg/task_complete', endAt: timeOf(record.timestamp) };
    }
    return state;
  },
  view: (s) => ({
    found: s.phase !== 'before',
    reply: withoutMarkers(joinReply(s.texts)),
    done: s.phase === 'ended',
    certain: s.phase === 'ended',
    endSignal: s.endSignal,
    interrupted: s.interrupted,
    endAt: s.endAt,
  }),
};
