import { describe, expect, it } from 'vitest';
import { OWNER_GRANT, type Grant } from '../../api/index.js';
import { GrantBudget } from './grant-budget.js';

const pane = (paneId: string): Grant => ({ owner: false, scopes: new Set(['read']), paneId });

describe('connection budgets per grant', () => {
  it('admits a grant up to its own limit and all grants up to theirs, never counting the owner, and frees a place on release', () => {
    const budget = new GrantBudget<string>(2, 3);
    expect(budget.admit('a1', pane('a'))).toBeUndefined();
    expect(budget.admit('a1', pane('a'))).toBeUndefined();
    expect(budget.admit('a2', pane('a'))).toBeUndefined();
    expect(budget.admit('a3', pane('a'))).toBe('too many connections for the token of pane a (limit 2)');
    expect(budget.admit('b1', pane('b'))).toBeUndefined();
    expect(budget.admit('c1', pane('c'))).toBe('too many connections of scoped tokens (limit 3)');
    for (let i = 0; i < 10; i++) expect(budget.admit(`owner${i}`, OWNER_GRANT)).toBeUndefined();
    expect(budget.size).toBe(3);
    budget.release('a1');
    budget.release('a1');
    expect(budget.size).toBe(2);
    expect(budget.admit('a3', pane('a'))).toBeUndefined();
  });
});
