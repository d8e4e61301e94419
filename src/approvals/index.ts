/** The approvals layer: how a tool call an agent asks for is judged (the policy), whatever asked. */
export * from './policy/index.js';
