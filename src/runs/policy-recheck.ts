/**
 * The controller's second look at a node run's decisions (issue 26: policy enforced on the node
 * and checked again on the controller). The node's policy decides each tool call before the act;
 * each `allow` it records comes into the controller's ledger, where the controller's own approval
 * rules judge the same call again. One they deny is a violation: the controller stops the run
 * (`failed (policy)` on its node, naming the controller's rule). The sandbox is not judged again:
 * its roots are folders on the controller's machine, which say nothing of the node's.
 */
import { TOOL_KINDS } from '../agents/index.js';
import type { ApprovalSubject } from '../approvals/index.js';
import type { Governor } from '../governance/governor.js';
import type { RunEvent } from '../ledger/run-events.js';
import type { RunSpec } from '../ledger/run-model.js';

export interface PolicyViolation {
  rule: string;
  reason: string;
}

/**
 * The controller's denial of a call `event` records the node allowed, or undefined when it allows
 * it too (or `event` is no such decision). `folder` is where the run works on its node (its `cwd`,
 * or for a repository run the folder inside its worktree the node admitted it in: admittedFolder).
 */
export function recheckDecision(governor: Governor, spec: RunSpec, event: RunEvent, folder = spec.cwd): PolicyViolation | undefined {
  if (event.type !== 'decision' || event.data.decision !== 'allow') return undefined;
  // Too large to cross whole (cluster-runs/run-wire.ts): what the node allowed cannot be judged again, so it stands for nothing.
  if (event.data.cut_bytes !== undefined) return { rule: 'cluster.cut_decision', reason: `a call the node allowed was too large to send whole (${typeof event.data.cut_bytes === 'number' ? event.data.cut_bytes : '?'} bytes), so the controller cannot judge it again` };
  const subject = subjectOf(event.data.subject);
  if (subject === undefined) return undefined;
  const verdict = governor.judgeByRules(spec.backend, folder, subject);
  return verdict.decision === 'deny' ? { rule: verdict.rule, reason: verdict.reason } : undefined;
}

/**
 * The folder a node admitted its run in, from the run's admission decision (a repository run's
 * worktree folder, which only the node knows), or undefined when `event` is none.
 */
export function admittedFolder(event: RunEvent): string | undefined {
  if (event.type !== 'decision') return undefined;
  const subject = event.data.subject as Record<string, unknown> | undefined;
  return subject?.run === 'admission' && typeof subject.cwd === 'string' && subject.cwd !== '' ? subject.cwd : undefined;
}

/** A recorded decision's subject as a tool call, or undefined when it judged something else (the run's admission, its place in line). */
function subjectOf(recorded: unknown): ApprovalSubject | undefined {
  if (typeof recorded !== 'object' || recorded === null) return undefined;
  const r = recorded as Record<string, unknown>;
  if (!(TOOL_KINDS as readonly unknown[]).includes(r.tool)) return undefined;
  const text = (key: string): string | undefined => (typeof r[key] === 'string' ? r[key] : undefined);
  const subject: ApprovalSubject = { tool: r.tool as ApprovalSubject['tool'] };
  const command = text('command');
  const path = text('path');
  const toolName = text('toolName');
  const url = text('url');
  if (command !== undefined) subject.command = command;
  if (path !== undefined) subject.path = path;
  if (toolName !== undefined) subject.toolName = toolName;
  if (url !== undefined) subject.url = url;
  return subject;
}
