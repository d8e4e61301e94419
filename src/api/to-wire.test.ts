import { describe, expect, it } from 'vitest';
import type { ApprovalPrompt } from '../agents/index.js';
import type { SessionTurn } from '../runs/index.js';
import { notificationSchemas, resultSchemas } from '../protocol/methods.js';
import { approvalInfo, inputModesInfo, stateNotification, turnResult } from './to-wire.js';

const REQUEST: ApprovalPrompt = {
  certain: true,
  doubts: [],
  tool: 'shell',
  toolName: 'Bash',
  command: 'rm -rf build',
  path: null,
  options: [
    { label: 'Yes', keys: ['Enter'], meaning: 'allow_once', selected: true },
    { label: 'No', keys: ['Esc'], meaning: 'deny', selected: false },
  ],
  row: 3,
};

describe('domain to wire', () => {
  it('carries an approval with its id, without keys, rows or doubts', () => {
    expect(approvalInfo(null)).toBeNull();
    expect(approvalInfo(REQUEST, 'a1')).toEqual({
      id: 'a1',
      tool: 'shell',
      tool_name: 'Bash',
      command: 'rm -rf build',
      path: null,
      options: [
        { label: 'Yes', meaning: 'allow_once' },
        { label: 'No', meaning: 'deny' },
      ],
    });
  });

  it('makes a state notification with only the fields the change has', () => {
    const note = stateNotification('s1', 'p1', { state: 'waiting_approval', previous: 'executing', at: 5, evidence: null }, approvalInfo(REQUEST, 'a1'));
    expect(notificationSchemas.state.safeParse(note).success).toBe(true);
    expect(Object.keys(note)).not.toContain('question');
    const error = stateNotification('s1', 'p1', { state: 'error', previous: 'thinking', at: 6, evidence: null, error: 'API Error: 500' }, null);
    expect(error).toMatchObject({ state: 'error', error: 'API Error: 500', approval: null });
  });

  it("names a pane's input modes as the wire does", () => {
    expect(inputModesInfo({ bracketedPaste: true, applicationCursorKeys: false, mouseTracking: 'none', sendFocus: true })).toEqual({
      bracketed_paste: true,
      application_cursor_keys: false,
      mouse_tracking: 'none',
      send_focus: true,
    });
  });

  it("reports a conversation's turn with its last reply and every permission decided", () => {
    const turn: SessionTurn = {
      runId: 'run_0123456789abcdef',
      status: 'completed',
      stopReason: 'end_turn',
      durationMs: 12,
      entries: [
        { id: 'e1', type: 'assistant_message', timestamp: 1, content: 'first' },
        { id: 'e2', type: 'command_run', timestamp: 2, content: 'ls' },
        { id: 'e3', type: 'assistant_message', timestamp: 3, content: 'last' },
      ],
      permissions: [{ toolName: 'Bash', decision: 'allow', reason: 'inside the workdir', decidedBy: 'policy' }],
    };
    const result = turnResult(turn);
    expect(result).toEqual({ run_id: 'run_0123456789abcdef', status: 'completed', stop_reason: 'end_turn', duration_ms: 12, entries: 3, permissions: [{ tool_name: 'Bash', decision: 'allow', reason: 'inside the workdir', decided_by: 'policy' }], reply: 'last' });
    expect(resultSchemas.agent_session_prompt.safeParse(result).success).toBe(true);
  });
});
