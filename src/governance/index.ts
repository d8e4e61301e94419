/** Governance: policy.yaml (sandbox, approvals, limits, ledger, per-backend overrides), the sandbox, admission, the governor. */
export { loadGovernancePolicy, parseGovernancePolicy, governancePolicySchema, POLICY_FILE, DEFAULT_CONCURRENCY, DEFAULT_LIMITS, type GovernancePolicy, type GovernancePolicyInput, type BackendPolicy } from './policy-file.js';
export { Sandbox, realPathLoose, type SandboxVerdict } from './sandbox.js';
export { AdmissionQueue, type AdmissionStats } from './admission.js';
export { Governor, type GovernanceDecision } from './governor.js';
