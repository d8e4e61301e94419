import { describe, expect, it } from 'vitest';
import { MemoryBudget } from './memory-budget.js';

describe('MemoryBudget', () => {
  it('gives each member an equal share within its floor and ceiling, and tells members when it changes', () => {
    const budget = new MemoryBudget(1000, { minShare: 100, maxShare: 400 });
    const seen: number[][] = [[], [], [], [], [], [], [], [], [], [], [], []];
    const members = seen.map((log) => budget.join((share) => log.push(share)));
    expect(budget.share).toBe(100);
    expect(seen[0]).toEqual([400, 333, 250, 200, 166, 142, 125, 111, 100]);
    expect(seen[11]).toEqual([100]);
    for (const m of members.slice(0, 10)) m.dispose();
    expect(budget.memberCount).toBe(2);
    expect(budget.share).toBe(400);
    expect(seen[11]).toEqual([100, 111, 125, 142, 166, 200, 250, 333, 400]);
    members[10]?.dispose();
    members[10]?.dispose();
    expect(budget.memberCount).toBe(1);
  });
});
