import type { ApprovalPolicy, PolicyRule, ToolKind } from './types.js';

/** The built-in policies. Frozen: a caller that wants changes builds its own from these. */

const LOCAL: ToolKind[] = ['shell', 'file_read', 'file_edit', 'file_write'];

function frozen(policy: ApprovalPolicy): ApprovalPolicy {
  for (const rule of policy.rules) {
    if (Array.isArray(rule.tool)) Object.freeze(rule.tool);
    Object.freeze(rule);
  }
  Object.freeze(policy.rules);
  return Object.freeze(policy);
}

const rules: PolicyRule[] = [
  { decision: 'ask', tool: 'network', reason: 'network access is always asked' },
  { decision: 'ask', tool: 'mcp', reason: 'MCP tools are always asked' },
  { decision: 'allow', tool: LOCAL, path: 'inside_workdir', reason: 'shell and file operations inside the workdir' },
  { decision: 'ask', tool: LOCAL, path: 'outside_workdir', reason: 'it reaches outside the workdir' },
  // Last, so that the rules above keep their numbers. A subagent's own acts are asked one by one.
  { decision: 'allow', tool: 'internal', reason: "the agent's own machinery (subagents, to-do lists, loading tools)" },
];

/**
 * Allows shell and file operations inside the workdir and the agent's own machinery; asks for
 * anything outside the workdir, for network, MCP and tools it does not know.
 */
export const AUTO_APPROVE_POLICY: ApprovalPolicy = frozen({ rules, default: 'ask' });

/** Asks for everything. */
export const ASK_POLICY: ApprovalPolicy = frozen({ rules: [], default: 'ask' });
