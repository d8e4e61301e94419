import { describe, expect, it } from 'vitest';
import { leaseStep, type LeaseInput, type LeaseState } from './lease-state.js';

const run = (inputs: LeaseInput[]): LeaseState[] => {
  const states: LeaseState[] = [{ kind: 'registering', epoch: 1 }];
  for (const input of inputs) states.push(leaseStep(states[states.length - 1]!, input));
  return states;
};

describe('the lease state machine', () => {
  it('registers, renews, lapses and registers again under the next epoch', () => {
    const states = run([
      { kind: 'created', revision: 1, at: 10 },
      { kind: 'renewed', revision: 2, at: 20 },
      { kind: 'renewal-refused', evidence: 'wrong last sequence' },
      { kind: 'retry' },
      { kind: 'created', revision: 7, at: 50 },
    ]);
    expect(states.map((s) => s.kind)).toEqual(['registering', 'held', 'held', 'lapsed', 'registering', 'held']);
    expect(states[2]).toEqual({ kind: 'held', epoch: 1, revision: 2, confirmedAt: 20 });
    expect(states[3]).toEqual({ kind: 'lapsed', epoch: 1, evidence: 'wrong last sequence' });
    expect(states[5]).toEqual({ kind: 'held', epoch: 2, revision: 7, confirmedAt: 50 });
  });

  it('lapses when no renewal was confirmed for a TTL, saying so', () => {
    const states = run([{ kind: 'created', revision: 1, at: 0 }, { kind: 'renewal-overdue', sinceMs: 1500 }]);
    expect(states[2]).toEqual({ kind: 'lapsed', epoch: 1, evidence: 'no renewal confirmed for 1500 ms' });
  });

  it('ends in left when the name is taken, or the node leaves, and stays there', () => {
    expect(run([{ kind: 'name-taken', evidence: 'taken' }, { kind: 'created', revision: 1, at: 0 }]).map((s) => s.kind)).toEqual(['registering', 'left', 'left']);
    const left = run([{ kind: 'created', revision: 1, at: 0 }, { kind: 'leave', evidence: 'bye' }, { kind: 'retry' }]);
    expect(left.slice(2)).toEqual([
      { kind: 'left', evidence: 'bye' },
      { kind: 'left', evidence: 'bye' },
    ]);
  });

  it('ignores what does not apply (a late renewal of a lapsed lease, a retry while held)', () => {
    const lapsed: LeaseState = { kind: 'lapsed', epoch: 3, evidence: 'x' };
    expect(leaseStep(lapsed, { kind: 'renewed', revision: 9, at: 1 })).toBe(lapsed);
    const held: LeaseState = { kind: 'held', epoch: 1, revision: 1, confirmedAt: 0 };
    expect(leaseStep(held, { kind: 'retry' })).toBe(held);
    expect(leaseStep(held, { kind: 'created', revision: 2, at: 1 })).toBe(held);
  });
});
