/**
 * The governance of a run whose caller names its own rules: seed 001's `run_agent`, a prompt on an
 * agent's headless mode, whose tools run as the CLI arguments the caller gave allow (`--allowedTools
 * Bash`, `--yolo`), and `agent_session_*`, whose requests are judged by the approval policy the
 * caller chose; the policy file does not judge them. The run is still one of the run service's:
 * recorded in the ledger with the same states, events and decisions, under the policy's limits and
 * concurrency, cancelled the one way. Its decisions name the face they come from
 * (`run_agent.cli`), so a reader of the ledger sees who governed what.
 */
import { homedir } from 'node:os';
import { evaluatePolicy, type ApprovalPolicy, type PolicyVerdict, type RuleStep } from '../approvals/index.js';
import { folderChanged, type GovernanceDecision, type RunGovernance } from './governor.js';

export interface CallerGovernanceOptions {
  /** The face the run came by (`run_agent`): the prefix of every rule it records. */
  face: string;
  /** Why the caller governs, for the record (the admission decision's reason). */
  reason: string;
  /**
   * The caller's approval policy for the requests the CLI asks about (agent_session_open's `auto`
   * or `ask`): what it leaves open is denied, since no one is asked. Absent: the CLI's own flags
   * decide, and every request it asks about is allowed.
   */
  approvals?: ApprovalPolicy;
  home?: string;
}

export class CallerGovernance implements RunGovernance {
  readonly home: string;

  constructor(private readonly options: CallerGovernanceOptions) {
    this.home = options.home ?? homedir();
  }

  /** The admission to record: the caller's own, by the face's rule. */
  admission(): GovernanceDecision {
    return { decision: 'allow', rule: `${this.options.face}.caller`, reason: this.options.reason };
  }

  admitAtStart(_backend: string, cwd: string, realCwd: string | undefined): GovernanceDecision {
    return (realCwd !== undefined ? folderChanged(cwd, realCwd) : undefined) ?? this.admission();
  }

  ruleStep(): RuleStep {
    const approvals = this.options.approvals;
    if (!approvals) return () => this.verdict();
    return (subject, context) => {
      const v = evaluatePolicy(approvals, subject, context);
      return { ...v, ruleName: v.rule !== null ? `${this.options.face}.approvals.rules[${v.rule}]` : `${this.options.face}.approvals.${v.basis}` };
    };
  }

  /**
   * A call the CLI made without asking: its own to make. Where the caller gave an approval policy
   * the record says that policy was not consulted, rather than judging the call after the fact (a
   * denial then could only end the run, and with it the caller's conversation).
   */
  judgeToolCall(): GovernanceDecision {
    const v = this.verdict();
    const reason = this.options.approvals ? `made without asking, so the ${this.options.face}'s approval policy was not consulted; the CLI's own settings decided` : v.reason;
    return { decision: v.decision, rule: v.ruleName ?? `${this.options.face}.cli`, reason };
  }

  /** A denied call is the CLI's to handle: the run goes on, as it would have without Switchboard. */
  onDeny(): 'fail' | 'continue' {
    return 'continue';
  }

  /** Every call is the CLI's own to make, under the flags the caller started it with. */
  private verdict(): PolicyVerdict {
    return { decision: 'allow', reason: `the CLI's own flags, as the caller gave them, decide (${this.options.face})`, rule: null, basis: 'rule', ruleName: `${this.options.face}.cli`, parts: [] };
  }
}
