import { describe, expect, it } from 'vitest';
import { BUILTIN_PRESETS } from './builtin.js';
import { parsePreset, plannerOf, presetReview } from './preset.js';

const minimal = { name: 'pair', planner: 'lead', roles: [{ name: 'lead', agent: 'claude' }, { name: 'coder', agent: 'codex' }] };
const problemsOf = (input: unknown, agents?: string[]): string[] => {
  try {
    parsePreset(input, agents);
  } catch (err) {
    return (err as { details: { problems: string[] } }).details.problems;
  }
  return [];
};

describe('a team preset', () => {
  it('fills in every default', () => {
    const preset = parsePreset(minimal);
    expect(preset.roles[1]).toEqual({ name: 'coder', agent: 'codex', brief: '', folder: '.', approvals: 'auto', stuck_after_s: 300, worktree: false, count: 1 });
    expect(preset.risk).toEqual({ medium: 'confirm' });
    expect(preset.stuck).toMatchObject({ max_nudges: 2, max_restarts: 1 });
    expect(plannerOf(preset).name).toBe('lead');
  });

  it('names the field of every problem', () => {
    expect(problemsOf({ ...minimal, roles: [{ name: 'lead', agent: 'claude' }, { name: 'Coder!', agent: 'codex', stuck_after_s: 1, colour: 'red' }] })).toEqual([
      "roles[1].name: a role name is 1 to 40 lower-case letters, digits or '-', starting with a letter",
      'roles[1].stuck_after_s: Too small: expected number to be >=10',
      "roles[1]: unknown key 'colour'",
    ]);
    expect(problemsOf({ ...minimal, planner: 'boss' })).toEqual(["planner: no role is named 'boss'"]);
    expect(problemsOf({ ...minimal, roles: [...minimal.roles, { name: 'coder', agent: 'gemini' }] })).toEqual(["roles[2].name: 'coder' is a second role of that name"]);
    expect(problemsOf({ ...minimal, roles: [{ name: 'lead', agent: 'claude', count: 2 }, minimal.roles[1]] })).toEqual(['roles[0].count: a team has one planner']);
    expect(problemsOf({ ...minimal, roles: [minimal.roles[0]] })[0]).toMatch(/^roles: Too small/);
  });

  it('checks agents against the profiles there are, and a role’s own approval rules', () => {
    expect(problemsOf(minimal, ['claude', 'gemini'])).toEqual(["roles[1].agent: no agent profile is named 'codex' (known: claude, gemini)"]);
    const rules = { ...minimal, roles: [minimal.roles[0], { name: 'coder', agent: 'codex', approvals: { rules: [{ decision: 'maybe' }] } }] };
    expect(problemsOf(rules)[0]).toMatch(/^roles\[1\]\.approvals: invalid approval policy: rules\[0\]\.decision/);
    expect(problemsOf({ ...minimal, roles: [minimal.roles[0], { name: 'coder', agent: 'codex', approvals: 'yolo' }] })).toEqual(["roles[1].approvals: 'auto', 'ask', or an approval policy ({rules, default})"]);
    expect(parsePreset({ ...minimal, roles: [minimal.roles[0], { name: 'coder', agent: 'codex', approvals: { rules: [{ decision: 'deny', tool: 'network' }] } }] }).roles[1]?.approvals).toEqual({ rules: [{ decision: 'deny', tool: 'network' }], default: 'ask' });
  });

  it('names what a shared preset does beyond its workers’ own judgement, and caps the team’s size', () => {
    const shared = parsePreset({ ...minimal, roles: [{ name: 'lead', agent: 'claude', folder: '../other' }, { name: 'coder', agent: 'codex', check: 'make test', folder: 'C:\\src', approvals: { default: 'allow' } }] });
    expect(presetReview(shared).map((i) => `${i.role} ${i.what} ${i.value}`)).toEqual(['lead folder ../other', 'coder check make test', 'coder folder C:\\src', 'coder approvals {"rules":[],"default":"allow"}']);
    expect(presetReview(parsePreset(minimal))).toEqual([]);
    expect(problemsOf({ ...minimal, roles: [minimal.roles[0], { name: 'coder', agent: 'codex', count: 12 }, { name: 'tester', agent: 'gemini', count: 4 }] })).toEqual(['roles: the team opens 17 agents at its start (at most 16)']);
  });

  it('has the seed’s three built-in teams, each with a planner', () => {
    expect(BUILTIN_PRESETS.map((p) => p.name)).toEqual(['implement-test-document', 'bug-triage', 'compare-approaches']);
    for (const preset of BUILTIN_PRESETS) expect(plannerOf(preset).agent).toBe('claude');
    expect(BUILTIN_PRESETS[1]?.roles.map((r) => r.name)).toEqual(['planner', 'reproducer', 'log-reader', 'minimizer', 'fixer']);
  });
});
