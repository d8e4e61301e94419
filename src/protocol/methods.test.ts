import { describe, expect, it } from 'vitest';
import { METHOD_GROUPS, METHOD_NAMES, describeIssues, notificationSchemas, paramSchemas, resultSchemas } from './methods.js';
import { METHOD_SCOPES } from './method-scopes.js';

describe('the method table', () => {
  it('puts every method in exactly one group', () => {
    const grouped = Object.values(METHOD_GROUPS).flat();
    expect(new Set(grouped).size).toBe(grouped.length);
    expect([...grouped].sort()).toEqual([...METHOD_NAMES].sort());
  });

  it('gives every method a result schema and a scope', () => {
    expect(Object.keys(resultSchemas).sort()).toEqual([...METHOD_NAMES].sort());
    expect(Object.keys(METHOD_SCOPES).sort()).toEqual([...METHOD_NAMES].sort());
  });

  it('keeps seed 000 methods in the pane group', () => {
    for (const m of ['create_pane', 'send_text', 'is_alive', 'get_text', 'list', 'kill'] as const) expect(METHOD_GROUPS.panes).toContain(m);
  });

  it('reads params: null is not given, unknown parameters are refused by name', () => {
    expect(paramSchemas.get_text.parse({ pane_id: 'p1', lines: null })).toEqual({ pane_id: 'p1', lines: undefined, join_wrapped: undefined });
    const bad = paramSchemas.get_text.safeParse({ pane_id: 'p1', colour: true });
    expect(bad.success).toBe(false);
    if (!bad.success) expect(describeIssues(bad.error)).toBe("unknown parameter 'colour'");
  });

  it('checks results and notifications as the operations make them', () => {
    expect(resultSchemas.ping.safeParse({ pong: true, time: new Date().toISOString() }).success).toBe(true);
    expect(resultSchemas.ping.safeParse({ pong: false, time: 'x' }).success).toBe(false);
    const approval = { id: 'a1', tool: 'shell', tool_name: 'Bash', command: 'ls', path: null, options: [{ label: 'Yes', meaning: 'allow_once' }] };
    expect(resultSchemas.pane_states.safeParse({ states: [{ pane_id: 'p1', state: 'waiting_approval', approval }] }).success).toBe(true);
    expect(resultSchemas.pane_states.safeParse({ states: [{ pane_id: 'p1', state: 'asleep', approval: null }] }).success).toBe(false);
    const entry = { id: 'e1', type: 'command_run', timestamp: 1, content: 'ls', metadata: { status: 'pending', toolCallId: 'a1' } };
    expect(notificationSchemas.log_message.safeParse({ subscription: 's1', session_id: 'p1', messages: [{ seq: 1, msg: { type: 'normalized', entry } }] }).success).toBe(true);
    expect(notificationSchemas.log_message.safeParse({ subscription: 's1', session_id: 'p1', messages: [{ seq: 1, msg: { type: 'stdin', content: 'x' } }] }).success).toBe(false);
  });
});
