/** The approval policy: rules that decide allow / deny / ask for a tool call an agent CLI wants to make. */
export type {
  ApprovalPolicy,
  ApprovalSubject,
  Decision,
  PolicyContext,
  PolicyRule,
  PolicyVerdict,
  
  
  ShellDialect,
  
  
  
  ShellWord,
  
  
  
} from './types.js';
export { evaluatePolicy } from './evaluate.js';
export { parsePolicy, loadPolicyFile } from './schema.js';
export { AUTO_APPROVE_POLICY, ASK_POLICY } from './presets.js';
export { splitShellCommand } from './split.js';
