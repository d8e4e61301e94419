/**
 * The one place a run's governance is decided: may it run at all (its backend enabled, its folder
 * inside the sandbox), and may its agent make this tool call (the sandbox, then the approval
 * policy: its rules, its blocklist, its default). Each decision names the rule that made it, as the
 * ledger records it: `sandbox.roots`, `approvals.rules[2]`, `backends.claude.approvals.default`,
 * `blocklist`.
 */
import { realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import { errorMessage } from '../core/errors.js';
import { evaluatePolicy, type ApprovalSubject, type PolicyVerdict, type RuleStep } from '../approvals/index.js';
import type { GovernancePolicy, BackendPolicy } from './policy-file.js';
import { Sandbox, realPathLoose } from './sandbox.js';

export interface GovernanceDecision {
  decision: 'allow' | 'deny' | 'ask';
  rule: string;
  reason: string;
}

/**
 * What governs one run while it lives (runs/live-run.ts): may it still start where it was admitted,
 * the broker's first step for each tool call it asks to make, the verdict on one it made or refused
 * on its own, and whether a denial ends it. The policy file's `Governor` for the bridge's runs; a
 * caller's own (`CallerGovernance`) for the seed's methods that name their own rules (run_agent).
 */
export interface RunGovernance {
  /** Expands `~` in tool calls. */
  readonly home: string;
  admitAtStart(backend: string, cwd: string, realCwd: string | undefined): GovernanceDecision;
  ruleStep(backend: string, cwd: string, input?: Record<string, unknown>): RuleStep;
  judgeToolCall(backend: string, cwd: string, subject: ApprovalSubject, input?: Record<string, unknown>): GovernanceDecision;
  /** A denied tool call ends the run (`fail`, the policy's default) or only that call (`continue`). */
  onDeny(backend: string): 'fail' | 'continue';
}

/**
 * A queued run's folder must still resolve to `realCwd`, the real path kept when it was admitted (a
 * folder swapped for a symlink while the run waited is refused): the refusal, or undefined when it does.
 */
export function folderChanged(cwd: string, realCwd: string): GovernanceDecision | undefined {
  let now: string;
  try {
    now = realpathSync.native(cwd);
  } catch (err) {
    return { decision: 'deny', rule: 'sandbox.real_path', reason: `the run's folder ${cwd} is gone since it was admitted (${errorMessage(err)})` };
  }
  if (now !== realCwd) return { decision: 'deny', rule: 'sandbox.real_path', reason: `the run's folder ${cwd} changed while the run waited: it now leads to ${now}, not ${realCwd} as when it was admitted` };
  return undefined;
}

export class Governor implements RunGovernance {
  private readonly sandboxes = new Map<string, Sandbox>();

  constructor(
    readonly policy: GovernancePolicy,
    readonly home: string = homedir(),
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

  /**
   * May a queued run start now: its folder must still resolve to `realCwd`, the real path kept when
   * it was admitted (a folder swapped for a symlink while the run waited is refused), and that path
   * must still pass admission (inside the roots, the backend enabled).
   */
  admitAtStart(backend: string, cwd: string, realCwd: string | undefined): GovernanceDecision {
    // A run recorded before real paths were kept is judged as it was at admission.
    if (realCwd === undefined) return this.admit(backend, cwd);
    return folderChanged(cwd, realCwd) ?? this.admit(backend, realCwd);
  }

  onDeny(backend: string): 'fail' | 'continue' {
    return this.backend(backend).onDeny;
  }

  /**
   * Governance as the approval broker's first step for a tool call of a run of `backend` in `cwd`
   * (the chain then goes on to a person, or to its end, for what it leaves open): the sandbox
   * first, then the approval policy, each verdict naming its rule (`ruleName`).
   */
  ruleStep(backend: string, cwd: string, input: Record<string, unknown> = {}): RuleStep {
    // The run's folder and this governor's home stand for the chain's context.
    return (subject) => this.verdict(backend, cwd, subject, input);
  }

  /** The same verdict, for a call judged outside any chain (one the CLI made or refused on its own, judged afterwards). */
  judgeToolCall(backend: string, cwd: string, subject: ApprovalSubject, input: Record<string, unknown> = {}): GovernanceDecision {
    const v = this.verdict(backend, cwd, subject, input);
    return { decision: v.decision, rule: v.ruleName, reason: v.reason };
  }

  /**
   * The approval rules' verdict alone, the sandbox left out: what a cluster controller judges again
   * of a call its node allowed, in a folder on the node (the sandbox's roots are this machine's).
   */
  judgeByRules(backend: string, workdir: string, subject: ApprovalSubject): GovernanceDecision {
    const v = this.rulesVerdict(this.backend(backend), subject, workdir);
    return { decision: v.decision, rule: v.ruleName, reason: v.reason };
  }

  private verdict(backend: string, cwd: string, subject: ApprovalSubject, input: Record<string, unknown>): PolicyVerdict & { ruleName: string } {
    const b = this.backend(backend);
    const boxed = this.sandbox(backend).checkToolCall(subject, cwd, input);
    if (boxed.decision === 'deny') return { decision: 'deny', reason: `denied: ${boxed.reason}`, rule: null, basis: 'rule', ruleName: this.sandboxRule(b, boxed.rule), parts: [] };
    return this.rulesVerdict(b, subject, realPathLoose(cwd));
  }

  private rulesVerdict(b: BackendPolicy, subject: ApprovalSubject, workdir: string): PolicyVerdict & { ruleName: string } {
    const verdict = evaluatePolicy(b.approvals, subject, { workdir, home: this.home });
    const prefix = b.source.approvals === 'default' ? 'approvals(default policy)' : b.source.approvals;
    // The rule is named from what decided, as the verdict carries it (never read out of the reason).
    let ruleName: string;
    switch (verdict.basis) {
      case 'rule': {
        const k = verdict.rule ?? 0;
        ruleName = k < b.ownApprovalRules ? `${prefix}.rules[${k}]` : `approvals(default policy).rules[${k - b.ownApprovalRules}]`;
        break;
      }
      case 'default':
        ruleName = `${prefix}.default`;
        break;
      case 'blocklist':
        ruleName = 'blocklist';
        break;
      case 'unreadable':
        ruleName = `${prefix}.unreadable`;
        break;
    }
    return { ...verdict, ruleName };
  }

  private sandboxRule(b: BackendPolicy, rule: string): string {
    return b.source.sandbox === 'default' || b.source.sandbox === 'sandbox' ? rule : rule.replace(/^sandbox/, b.source.sandbox);
  }
}
