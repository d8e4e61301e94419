/**
 * The approvals layer: one request type for every source (a screen's prompt, a structured mode's
 * permission request, the orchestrator's risk gate), one chain of deciders (policy, callback, person, else deny or open), and the
 * policy itself.
 */
export * from './policy/index.js';
export { describeSubject, type ApprovalOutcome, type ApprovalRequest, type ApprovalSource, type DecidedBy } from './request.js';
export { decideApproval, policyVerdict, type ApprovalCallback, type ApprovalChain, type RuleStep } from './broker.js';
