/** The pane driver: an interactive agent CLI driven through a task on its screen (CodingAgent, seed 002). */
export { CodingAgent, type CodingAgentOptions, type ExecuteResult, type ProgressEvent } from './coding-agent.js';
export type { ApprovalRecord, ExecuteStatus } from './turn.js';
