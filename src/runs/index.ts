/** The runs layer: driving an agent through a task (CodingAgent), the approval policy, what changed. */
export { CodingAgent, type CodingAgentOptions, type ExecuteResult, type ExecuteStatus, type ApprovalRecord, type ProgressEvent } from './coding-agent.js';
export { snapshotWorkdir, diffSnapshots, type FileChange, type FileChangeKind, type WorkdirSnapshot } from './files-changed.js';
export { extractFinalMessage } from './final-message.js';
export * from '../approvals/index.js';
export { runDoctor, DOCTOR_STEPS, UNREAD_SCREEN_MS, type DoctorOptions, type DoctorReport, type AgentReport, type StepReport, type SeenState } from './doctor/index.js';
