import { describe, expect, it } from 'vitest';
import { AUTO_APPROVE_POLICY, evaluatePolicy } from '../approvals/index.js';
import { plannerPolicy } from './role-approvals.js';

describe("the planner's approval policy", () => {
  const ctx = { workdir: '/work/project', home: '/home/dev' };
  const decide = (toolName: string): string => evaluatePolicy(plannerPolicy(AUTO_APPROVE_POLICY), { tool: 'mcp', toolName }, ctx).decision;

  it("allows its calls of the team's tools, however the CLI names them", () => {
    expect(['switchboard MCP server to run tool "tabs_send"', 'mcp__switchboard__tabs_send', 'mcp_switchboard_run_complete', 'switchboard — Tasks Add Tool', 'switchboard — Run Report Draft'].map(decide)).toEqual(['allow', 'allow', 'allow', 'allow', 'allow']);
  });

  it("asks about any other MCP tool, another server's of the same name too, as its role's policy does", () => {
    const others = ['tabs_send', 'other MCP server to run tool "tabs_send"', 'mcp__other__tabs_send', 'mcp__switchboard__send', 'xtabs_list', 'other — Tasks Add Tool', 'switchboard — Ask Tool'];
    expect(others.map(decide)).toEqual(others.map(() => 'ask'));
    // The role's own rules still stand after it.
    expect(evaluatePolicy(plannerPolicy(AUTO_APPROVE_POLICY), { tool: 'shell', command: 'ls' }, ctx).decision).toBe('allow');
  });
});
