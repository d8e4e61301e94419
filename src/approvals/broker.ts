/**
 * The one chain of deciders every approval request goes through, whatever raised it: written rules
 * first (the approval policy, or a bridge run's governance in its place: the run's sandbox, then its
 * policy), then the caller's callback for what the rules leave open, then a person
 * (answer_approval, the dashboard) where one may answer, else the chain's end: deny (no one is
 * there to ask) or leave the request open for the caller to hand on. The reasons and the
 * `decidedBy` words are the same for every source.
 */
import { evaluatePolicy, type ApprovalPolicy, type ApprovalSubject, type PolicyContext, type PolicyVerdict } from './policy/index.js';
import type { ApprovalOutcome, ApprovalRequest } from './request.js';

/** The caller's own decider, asked what the policy leaves open. */
export interface ApprovalCallback {
  /** Its name in reasons ("allowed by the onApproval callback"). */
  name: string;
  /** 'ask' hands the request on to the next decider (a person where one may answer), as if there were no callback. */
  decide(request: ApprovalRequest, verdict: PolicyVerdict): Promise<'allow' | 'deny' | 'ask'> | 'allow' | 'deny' | 'ask';
  /**
   * What a callback that throws means: 'deny' (the structured modes: the CLI waits for an answer,
   * and a failed judge must not approve), or 'throw' (the error is the caller's to see).
   */
  onError: 'deny' | 'throw';
}

/**
 * The chain's first step in place of a bare policy: a judge by written rules of the caller's own
 * (a bridge run's governance), whose verdicts name their rule (`ruleName`). It judges the subject;
 * what could not be read, or not with certainty, the chain asks about whatever it says.
 */
export type RuleStep = (subject: ApprovalSubject, context: PolicyContext) => PolicyVerdict;

export interface ApprovalChain {
  /** The first step: the approval policy, judged in `context`, or a rule step of the caller's own in its place. */
  policy: ApprovalPolicy | RuleStep;
  context: PolicyContext;
  callback?: ApprovalCallback;
  /**
   * A person's answer (answer_approval, the dashboard): resolves with it, or with null when the
   * request went away before anyone answered. Waits as long as it takes; the caller's signal ends it.
   */
  person?: (request: ApprovalRequest, signal?: AbortSignal) => Promise<'allow' | 'deny' | null>;
  /** What the end of the chain does with a request no one decided: deny it, or leave it open. */
  otherwise: 'deny' | 'open';
  /** Who was missing, for the reason of a default denial ("no onPermission callback"). */
  missing?: string;
}

/**
 * The policy's verdict on a request. A request that could not be read, or not with certainty, is
 * asked about whatever the policy would say: approving text that may not be what the CLI runs is
 * how a blocklisted command once ran (issue 10).
 */
export function policyVerdict(request: ApprovalRequest, policy: ApprovalPolicy, context: PolicyContext): PolicyVerdict {
  return readVerdict(request, (subject) => evaluatePolicy(policy, subject, context));
}

/** What the chain's first step says of a request. */
function firstVerdict(request: ApprovalRequest, chain: ApprovalChain): PolicyVerdict {
  const { policy, context } = chain;
  return typeof policy === 'function' ? readVerdict(request, (subject) => policy(subject, context)) : policyVerdict(request, policy, context);
}

/** The first step's verdict on a request, its doubts applied (see policyVerdict). */
function readVerdict(request: ApprovalRequest, judge: (subject: ApprovalSubject) => PolicyVerdict): PolicyVerdict {
  if (!request.subject) return { decision: 'ask', reason: 'asked: the approval prompt could not be parsed', rule: null, basis: 'unreadable', parts: [] };
  const verdict = judge(request.subject);
  if (request.certain || verdict.decision !== 'allow') return verdict;
  return { decision: 'ask', reason: `asked: the prompt could not be read with certainty (${request.doubts.join('; ')})`, rule: null, basis: 'unreadable', parts: [] };
}

/** Runs `request` through `chain`: written rules, callback, person, else the chain's end. */
export async function decideApproval(request: ApprovalRequest, chain: ApprovalChain, signal?: AbortSignal): Promise<ApprovalOutcome> {
  const verdict = firstVerdict(request, chain);
  if (verdict.decision !== 'ask') return { decision: verdict.decision, decidedBy: 'policy', reason: verdict.reason, verdict };
  const { callback, person } = chain;
  if (callback) {
    let answer: 'allow' | 'deny' | 'ask';
    try {
      answer = await callback.decide(request, verdict);
    } catch (err) {
      if (callback.onError === 'throw') throw err;
      return { decision: 'deny', decidedBy: 'default', reason: `denied: the ${callback.name} callback failed (${(err as Error).message})`, verdict };
    }
    if (answer !== 'ask') return { decision: answer, decidedBy: 'callback', reason: `${answer === 'allow' ? 'allowed' : 'denied'} by the ${callback.name} callback (policy: ${verdict.reason})`, verdict };
  }
  if (person) {
    const answer = await person(request, signal);
    if (answer === null) return { decision: 'withdrawn', decidedBy: 'none', reason: `withdrawn before anyone answered (policy: ${verdict.reason})`, verdict };
    return { decision: answer, decidedBy: 'person', reason: `${answer === 'allow' ? 'allowed' : 'denied'} by a person (policy: ${verdict.reason})`, verdict };
  }
  if (chain.otherwise === 'open') return { decision: 'ask', decidedBy: 'none', reason: verdict.reason, verdict };
  return { decision: 'deny', decidedBy: 'default', reason: `denied: ${verdict.reason}, and no one answers${chain.missing ? ` (${chain.missing})` : ''}`, verdict };
}
