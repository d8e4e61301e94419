import { describe, expect, it } from 'vitest';
import { stepTeam, teamEnded, type TeamEvent, type TeamState } from './team-state.js';

const run = (events: TeamEvent[], from: TeamState = 'starting'): TeamState => events.reduce((state, e) => stepTeam(state, e).to, from);

describe('team run states', () => {
  it('goes starting → running ⇄ paused → completed, each change with why', () => {
    expect(run([{ kind: 'started' }, { kind: 'pause', by: 'a person' }, { kind: 'resume', by: 'a person' }, { kind: 'complete', by: 'the planner' }])).toBe('completed');
    expect(stepTeam('running', { kind: 'pause', by: 'a person at the dashboard' })).toEqual({ from: 'running', to: 'paused', why: 'paused by a person at the dashboard' });
    expect(stepTeam('starting', { kind: 'start_failed', reason: 'claude is not installed' })).toEqual({ from: 'starting', to: 'failed', why: 'claude is not installed' });
  });

  it('answers CONFLICT for an event the state does not take, and an ended run takes none', () => {
    expect(() => stepTeam('running', { kind: 'resume', by: 'x' })).toThrow(expect.objectContaining({ code: 'CONFLICT', message: 'cannot resume the run: the team run is running' }));
    for (const ended of ['completed', 'failed', 'cancelled'] as const) {
      expect(teamEnded(ended)).toBe(true);
      expect(() => stepTeam(ended, { kind: 'cancel', by: 'x' })).toThrow(expect.objectContaining({ message: `cannot end the run: the team run has ended (${ended})` }));
    }
    expect(teamEnded('paused')).toBe(false);
  });
});
