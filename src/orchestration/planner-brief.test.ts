import { describe, expect, it } from 'vitest';
import { MarkerReader } from './marker-lines.js';
import { plannerBrief, type PlannerBriefInput } from './planner-brief.js';

const input: PlannerBriefInput = {
  goal: 'add a --verbose flag',
  workers: [{ id: 'executor-1', role: 'executor', agent: 'codex', brief: 'write the code' }],
  roles: [{ name: 'tester', agent: 'gemini', brief: 'run the tests' }],
  plannerBrief: 'You lead this team.',
  calls: { via: 'markers', nonce: 'n0nce' },
};

describe("the planner's brief", () => {
  it('names the goal, the team, the roles and every tool', () => {
    const brief = plannerBrief(input);
    expect(brief).toContain('GOAL: add a --verbose flag');
    expect(brief).toContain('- executor-1: executor (codex): write the code');
    expect(brief).toContain('- tester (gemini): run the tests');
    for (const tool of ['tabs.list', 'tabs.create', 'tabs.send', 'tabs.read', 'tabs.wait', 'run.report_draft', 'run.complete', 'tasks.claim']) expect(brief).toContain(`- ${tool}: `);
    expect(plannerBrief({ ...input, calls: { via: 'mcp' } })).toContain('- tabs_send: ');
  });

  it('gives the nonce, but no line an echo of the brief would run', () => {
    const brief = plannerBrief(input);
    expect(brief).toContain('Your nonce is n0nce.');
    const reader = new MarkerReader('n0nce');
    expect(reader.read(brief)).toEqual([]);
    expect(reader.ignored.map((i) => i.why)).toEqual(['unparsable']);
  });
});
