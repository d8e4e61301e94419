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
];

/** Allows shell and file operations inside the workdir; asks for anything outside it, for network and MCP. */
export const AUTO_APPROVE_POLICY: ApprovalPolicy = frozen({ rules, default: 'ask' });

/** Asks for everything. */
export const ASK_POLICY: ApprovalPolicy = frozen({ rules: [], default: 'ask' });
