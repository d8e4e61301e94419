import { describe, expect, it } from 'vitest';
import type { AgentPane, AgentState } from '../agents/index.js';
import { StuckWatch } from './stuck-watch.js';

/** An agent as the watch looks at it: a screen and a state. */
function fakeAgent(screen: string[], state: AgentState): { agent: AgentPane; set: (screen: string[], state?: AgentState) => void } {
  const view = { screen, state };
  const agent = { pane: { alive: true, screenLines: () => view.screen }, state: { get state() { return view.state; } } } as unknown as AgentPane;
  return {
    agent,
    set: (next: string[], nextState?: AgentState) => {
      view.screen = next;
      if (nextState) view.state = nextState;
    },
  };
}

function watchWithClock(): { watch: StuckWatch; events: string[]; advance: (ms: number) => void } {
  let now = 0;
  const events: string[] = [];
  const watch = new StuckWatch({
    onStuck: (id, why) => events.push(`stuck ${id}: ${why}`),
    onMoving: (id) => events.push(`moving ${id}`),
    nudge: (id, text) => events.push(`nudge ${id}: ${text}`),
    now: () => now,
    checkEveryMs: 60_000,
  });
  return {
    watch,
    events,
    advance: (ms: number) => {
      now += ms;
      watch.check();
    },
  };
}

const POLICY = { afterMs: 10_000, nudge: 'status?', maxNudges: 1 };

describe('StuckWatch', () => {
  it('counts a screen whose only motion is a spinner and a timer as unchanged, and nudges a busy worker within the cap', () => {
    const { watch, events, advance } = watchWithClock();
    const w = fakeAgent(['✻ Working… (3s · esc to interrupt)'], 'thinking');
    watch.watch('w-1', w.agent, POLICY);
    w.set(['✶ Working… (9s · esc to interrupt)']);
    advance(9_000);
    expect(events).toEqual([]);
    w.set(['⠹ Working… (12s · esc to interrupt)']);
    advance(2_000);
    expect(events).toEqual(['stuck w-1: busy on an unchanged screen for 11 s', 'nudge w-1: status?']);
    expect(watch.isStuck('w-1')).toBe(true);
    // The nudge shows: moving again; then stuck once more, not nudged past the cap.
    w.set(['⠹ Working… (13s · esc to interrupt)', '> status?']);
    advance(1_000);
    expect(watch.isStuck('w-1')).toBe(false);
    advance(10_000);
    expect(events.slice(2)).toEqual(['moving w-1', 'stuck w-1: busy on an unchanged screen for 10 s']);
    watch.dispose();
  });

  it('marks a worker waiting on a question stuck without typing into it, and never an idle one', () => {
    const { watch, events, advance } = watchWithClock();
    const waiting = fakeAgent(['Allow this command? (y/n)'], 'waiting_approval');
    const idle = fakeAgent(['> '], 'idle');
    watch.watch('asking', waiting.agent, POLICY);
    watch.watch('resting', idle.agent, POLICY);
    advance(60_000);
    expect(events).toEqual(['stuck asking: waiting on an unchanged screen for 60 s']);
    expect(watch.isStuck('resting')).toBe(false);
    watch.dispose();
  });
});
