import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { canStep, initialState, isEnded, NEXT_STATUSES, replayTransitions, step, FAILED_REASONS, CANCELLED_REASONS, type RunInput, type RunState, type RunTransition } from './run-model.js';

const inputArb: fc.Arbitrary<RunInput> = fc.oneof(
  fc.constant<RunInput>({ type: 'start' }),
  fc.constant<RunInput>({ type: 'first_output' }),
  fc.constant<RunInput>({ type: 'orphan', message: 'its node was lost' }),
  fc.constant<RunInput>({ type: 'complete' }),
  fc.constantFrom(...FAILED_REASONS).map((reason): RunInput => ({ type: 'fail', reason, message: `failed: ${reason}` })),
  fc.constantFrom(...CANCELLED_REASONS).map((reason): RunInput => ({ type: 'cancel', reason })),
);

describe('the run state machine', () => {
  it('orphans a run whose node was lost (not an end), which the person then cancels or fails; nothing else moves it', () => {
    const running = step(initialState(1), { type: 'start' }, 2).state;
    const orphaned = step(running, { type: 'orphan', message: 'node lost' }, 3);
    expect(orphaned.state).toEqual({ status: 'orphaned', since: 3, started_at: 2 });
    expect(orphaned.transition).toEqual({ from: 'running', to: 'orphaned', at: 3, reason: null, message: 'node lost' });
    expect(isEnded('orphaned')).toBe(false);
    expect(step(initialState(1), { type: 'orphan', message: 'claimed, not started' }, 2).state).toEqual({ status: 'orphaned', since: 2, started_at: null });
    expect(step(orphaned.state, { type: 'cancel', reason: 'cancelled_by_user' }, 4).state).toMatchObject({ status: 'cancelled', started_at: 2 });
    expect(step(orphaned.state, { type: 'fail', reason: 'crashed', message: 'gone' }, 4).state).toMatchObject({ status: 'failed', reason: 'crashed' });
    for (const input of [{ type: 'start' }, { type: 'first_output' }, { type: 'complete' }, { type: 'orphan', message: 'again' }] as const) expect(() => step(orphaned.state, input, 4)).toThrow();
    expect(replayTransitions(1, [step(initialState(1), { type: 'start' }, 2).transition, orphaned.transition])).toEqual(orphaned.state);
  });

  it('goes queued, running, streaming, completed, each step an event with its time', () => {
    let state: RunState = initialState(1);
    const seen: RunTransition[] = [];
    for (const [input, at] of [[{ type: 'start' }, 2], [{ type: 'first_output' }, 3], [{ type: 'complete', message: 'ok' }, 4]] as const) {
      const next = step(state, input, at);
      state = next.state;
      seen.push(next.transition);
    }
    expect(seen).toEqual([
      { from: 'queued', to: 'running', at: 2, reason: null, message: '' },
      { from: 'running', to: 'streaming', at: 3, reason: null, message: '' },
      { from: 'streaming', to: 'completed', at: 4, reason: 'finished', message: 'ok' },
    ]);
    expect(state).toEqual({ status: 'completed', since: 4, started_at: 2, reason: 'finished', message: 'ok' });
  });

  it('refuses illegal transitions and changes nothing', () => {
    const queued = initialState(1);
    expect(() => step(queued, { type: 'complete' }, 2)).toThrow(/queued cannot complete/);
    expect(() => step(queued, { type: 'first_output' }, 2)).toThrow(/cannot first output/);
    const running = step(queued, { type: 'start' }, 2).state;
    expect(() => step(running, { type: 'start' }, 3)).toThrow(/running cannot start/);
    const failed = step(running, { type: 'fail', reason: 'crashed', message: 'claude was ended by SIGKILL' }, 3).state;
    for (const input of [{ type: 'start' }, { type: 'complete' }, { type: 'cancel', reason: 'cancelled_by_user' }] as const) expect(() => step(failed, input, 4)).toThrow(/failed cannot/);
    expect(failed).toMatchObject({ status: 'failed', reason: 'crashed' });
  });

  it('under any sequence of inputs: only legal steps happen, an end is final and has a reason, a replay agrees', () => {
    fc.assert(
      fc.property(fc.array(inputArb, { maxLength: 12 }), (inputs) => {
        let state: RunState = initialState(0);
        const transitions: RunTransition[] = [];
        inputs.forEach((input, i) => {
          const legal = canStep(state, input);
          if (!legal) {
            expect(() => step(state, input, i + 1)).toThrow();
            return;
          }
          const next = step(state, input, i + 1);
          expect(NEXT_STATUSES[state.status]).toContain(next.state.status);
          transitions.push(next.transition);
          state = next.state;
        });
        if (isEnded(state.status)) expect('reason' in state && state.reason).toBeTruthy();
        expect(replayTransitions(0, transitions)).toEqual(state);
      }),
    );
  });
});
