/** Governance: policy.yaml (sandbox, approvals, limits, ledger, per-backend overrides), the sandbox, admission, the governor. */
export { loadGovernancePolicy, parseGovernancePolicy, POLICY_FILE, type GovernancePolicy, type BackendPolicy } from './policy-file.js';
export { Sandbox } from './sandbox.js';
export { Governor } from './governor.js';
