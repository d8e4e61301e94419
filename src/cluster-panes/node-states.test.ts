import { describe, expect, it } from 'vitest';
import type { NodePaneState } from '../api/index.js';
import { NodeStates } from './node-states.js';

const approval = { id: 'a1', tool: 'shell' as const, tool_name: 'Bash', command: 'rm -r build', path: null, options: [] };

describe('NodeStates', () => {
  it('passes pushed changes on, and tells from a look only what differs from what it knew', () => {
    const told: NodePaneState[] = [];
    const states = new NodeStates((state) => told.push(state));
    states.pushed({ pane_id: 'n1/p1', state: 'thinking', previous: 'idle', at: 1, approval: null });
    expect(told.map((s) => s.state)).toEqual(['thinking']);
    // The look agrees: nothing told.
    states.looked('n1', [{ pane_id: 'n1/p1', state: 'thinking', approval: null }], states.mark());
    expect(told).toHaveLength(1);
    // The push of waiting_approval was lost on the way: the look tells it, from what was known.
    states.looked('n1', [{ pane_id: 'n1/p1', state: 'waiting_approval', approval }], states.mark());
    expect(told[1]).toMatchObject({ pane_id: 'n1/p1', state: 'waiting_approval', previous: 'thinking', approval });
    // Another approval in the same state is a change too.
    states.looked('n1', [{ pane_id: 'n1/p1', state: 'waiting_approval', approval: { ...approval, id: 'a2' } }], states.mark());
    expect(told).toHaveLength(3);
  });

  it('a change pushed while a look was out is newer than what the look found', () => {
    const told: NodePaneState[] = [];
    const states = new NodeStates((state) => told.push(state));
    const mark = states.mark();
    states.pushed({ pane_id: 'n1/p1', state: 'idle', previous: 'thinking', at: 2, approval: null });
    states.looked('n1', [{ pane_id: 'n1/p1', state: 'thinking', approval: null }], mark);
    expect(told.map((s) => s.state)).toEqual(['idle']);
  });

  it('forgets the panes a node no longer lists, and those of nodes that are gone', () => {
    const told: NodePaneState[] = [];
    const states = new NodeStates((state) => told.push(state));
    states.looked('n1', [{ pane_id: 'n1/p1', state: 'idle', approval: null }], states.mark());
    states.looked('n2', [{ pane_id: 'n2/p1', state: 'idle', approval: null }], states.mark());
    expect(told).toHaveLength(2);
    // Known: a look that agrees tells nothing.
    states.looked('n1', [{ pane_id: 'n1/p1', state: 'idle', approval: null }], states.mark());
    expect(told).toHaveLength(2);
    // n1 no longer lists p1, and n2 is gone: each is new again when it comes back.
    states.looked('n1', [], states.mark());
    states.keepNodes(['n1']);
    states.looked('n1', [{ pane_id: 'n1/p1', state: 'idle', approval: null }], states.mark());
    states.looked('n2', [{ pane_id: 'n2/p1', state: 'idle', approval: null }], states.mark());
    expect(told).toHaveLength(4);
  });
});
