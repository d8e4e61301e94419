import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseYaml } from '../../core/yaml.js';
import { z } from 'zod';
import { SwitchboardError } from '../../core/errors.js';
import { compileSafeRegex } from '../../core/safe-regex.js';
import { issueProblems } from '../../core/zod-issues.js';
import { globSource } from './glob.js';
import { TOOL_KINDS } from '../../contract/approval.js';
import type { ApprovalPolicy, PolicyRule } from './types.js';

/**
 * Approval policies from users: validated with zod, every problem named with where it is
 * (`rules[2].decision: …`), and the rules' patterns compiled up front so a bad one fails at load,
 * not at the first tool call.
 */

const decisionSchema = z.enum(['allow', 'deny', 'ask']);
const toolSchema = z.enum(TOOL_KINDS);

const ruleSchema = z.strictObject({
  decision: decisionSchema,
  tool: z.union([toolSchema, z.array(toolSchema).min(1)]).optional(),
  command: z.string().min(1).optional(),
  path: z.string().min(1).optional(),
  reason: z.string().optional(),
});

export const policySchema = z.strictObject({
  rules: z.array(ruleSchema).default([]),
  /** What happens when no rule matches; asking is the safe default. */
  default: decisionSchema.default('ask'),
});

/** Validates an approval policy (from JSON or YAML); throws INVALID_PARAMS naming every problem and where it is. */
export function parsePolicy(input: unknown): ApprovalPolicy {
  const parsed = policySchema.safeParse(input);
  if (!parsed.success) {
    const problems = issueProblems(parsed.error, 'key');
    throw new SwitchboardError('INVALID_PARAMS', `invalid approval policy: ${problems.join('; ')}`, { problems });
  }
  const problems: string[] = [];
  parsed.data.rules.forEach((rule, i) => {
    if (rule.command !== undefined) {
      try {
        compileSafeRegex(rule.command);
      } catch (err) {
        problems.push(`rules[${i}].command: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    if (rule.path !== undefined && rule.path !== 'inside_workdir' && rule.path !== 'outside_workdir') {
      try {
        compileSafeRegex(`^${globSource(rule.path)}$`);
      } catch (err) {
        problems.push(`rules[${i}].path: not a usable glob (${err instanceof Error ? err.message : String(err)})`);
      }
    }
  });
  if (problems.length > 0) throw new SwitchboardError('INVALID_PARAMS', `invalid approval policy: ${problems.join('; ')}`, { problems });
  // Only the keys that were given, so a policy read back prints as it was written.
  const rules = parsed.data.rules.map((r): PolicyRule => ({
    decision: r.decision,
    ...(r.tool !== undefined ? { tool: r.tool } : {}),
    ...(r.command !== undefined ? { command: r.command } : {}),
    ...(r.path !== undefined ? { path: r.path } : {}),
    ...(r.reason !== undefined ? { reason: r.reason } : {}),
  }));
  return { rules, default: parsed.data.default };
}

/** Reads and validates a policy file (.yaml, .yml or .json); errors name the file. */
export function loadPolicyFile(file: string): ApprovalPolicy {
  const ext = path.extname(file).toLowerCase();
  if (ext !== '.yaml' && ext !== '.yml' && ext !== '.json') {
    throw new SwitchboardError('INVALID_PARAMS', `${file}: an approval policy file must end in .yaml, .yml or .json`, { file });
  }
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new SwitchboardError('INVALID_PARAMS', `cannot read approval policy ${file}: ${err instanceof Error ? err.message : String(err)}`, { file }, { cause: err });
  }
  let data: unknown;
  try {
    data = ext === '.json' ? JSON.parse(text) : parseYaml(text);
  } catch (err) {
    throw new SwitchboardError('INVALID_PARAMS', `${file}: not valid ${ext === '.json' ? 'JSON' : 'YAML'}: ${err instanceof Error ? err.message : String(err)}`, { file }, { cause: err });
  }
  try {
    return parsePolicy(data);
  } catch (err) {
    if (err instanceof SwitchboardError) throw new SwitchboardError('INVALID_PARAMS', `${file}: ${err.message}`, { file, ...err.details }, { cause: err });
    throw err;
  }
}
