import { describe, expect, it } from 'vitest';
import { replyPiece } from './claude-conversation.js';

const delta = (d: Record<string, unknown>, parent: string | null = null): Record<string, unknown> => ({ type: 'stream_event', event: { type: 'content_block_delta', index: 0, delta: d }, parent_tool_use_id: parent, session_id: 's' });

describe("Claude Code's partial messages", () => {
  it('take the text deltas of the main reply, not a subagent\u2019s, not tool input or thinking', () => {
    expect(replyPiece(delta({ type: 'text_delta', text: 'Hel' }))).toBe('Hel');
    expect(replyPiece(delta({ type: 'text_delta', text: 'lo' }, 'toolu_1'))).toBeUndefined();
    expect(replyPiece(delta({ type: 'input_json_delta', partial_json: '{"a' }))).toBeUndefined();
    expect(replyPiece(delta({ type: 'thinking_delta', thinking: 'hmm' }))).toBeUndefined();
    expect(replyPiece(delta({ type: 'text_delta', text: '' }))).toBeUndefined();
    expect(replyPiece({ type: 'stream_event', event: { type: 'message_start' }, parent_tool_use_id: null })).toBeUndefined();
    expect(replyPiece({ type: 'assistant', message: {} })).toBeUndefined();
    expect(replyPiece(undefined)).toBeUndefined();
  });
});
