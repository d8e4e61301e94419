/**
 * The one place a run's governance is decided: may it run at all (its backend enabled, its folder
 * inside the sandbox), and may its agent make this tool call (the sandbox, then the approval
 * policy: its rules, its blocklist, its default). Each decision names the rule that made it, as the
 * ledger records it: `sandbox.roots`, `approvals.rules[2]`, `backends.claude.approvals.default`,
 * `blocklist`.
 */
import { homedir } from 'node:os';
import { evaluatePolicy, type ApprovalSubject } from '../../approvals/policy/index.js';
import type { GovernancePolicy, BackendPolicy } from './policy-file.js';
import { Sandbox, realPathLoose } from './sandbox.js';

export interface GovernanceDecision {
  decision: 'allow' | 'deny' | 'ask';
  rule: string;
  reason: string;
}

export class Governor {
  private readonly sandboxes = new Map<string, Sandbox>();

  constructor(
    readonly policy: GovernancePolicy,
    private readonly home: string = homedir(),
  ) {}

  backend(backend: string): BackendPolicy {
    return this.policy.forBackend(backend);
  }

  sandbox(backend: string): Sandbox {
    let box = this.sandboxes.get(backend);
    if (!box) {
      box = new Sandbox(this.backend(backend).roots, this.home);
      this.sandboxes.set(backend, box);
    }
    return box;
  }

  /** May a run of `backend` in `cwd` start at all. */
  admit(backend: string, cwd: string): GovernanceDecision {
    const b = this.backend(backend);
    if (!b.enabled) return { decision: 'deny', rule: `backends.${backend}.enabled`, reason: `runs on ${backend} are turned off by the policy (${this.policy.origin})` };
    const verdict = this.sandbox(backend).checkFolder(cwd);
    return { decision: verdict.decision, rule: this.sandboxRule(b, verdict.rule), reason: verdict.reason };
  }

  /** May the agent of a run in `cwd` make this tool call: the sandbox first, then the approval policy. */
  judgeToolCall(backend: string, cwd: string, subject: ApprovalSubject, input: Record<string, unknown> = {}): GovernanceDecision {
    const b = this.backend(backend);
    const boxed = this.sandbox(backend).checkToolCall(subject, cwd, input);
    if (boxed.decision === 'deny') return { decision: 'deny', rule: this.sandboxRule(b, boxed.rule), reason: `denied: ${boxed.reason}` };
    const verdict = evaluatePolicy(b.approvals, subject, { workdir: realPathLoose(cwd), home: this.home });
    const prefix = b.source.approvals === 'default' ? 'approvals(default policy)' : b.source.approvals;
    let rule: string;
    if (verdict.rule !== null) rule = `${prefix}.rules[${verdict.rule}]`;
    else if (verdict.reason.includes('by default')) rule = `${prefix}.default`;
    else if (verdict.reason.startsWith('blocked') || verdict.reason.includes('never auto-approved')) rule = 'blocklist';
    else rule = `${prefix}.unreadable`;
    return { decision: verdict.decision, rule, reason: verdict.reason };
  }

  private sandboxRule(b: BackendPolicy, rule: string): string {
    return b.source.sandbox === 'default' || b.source.sandbox === 'sandbox' ? rule : rule.replace(/^sandbox/, b.source.sandbox);
  }
}
