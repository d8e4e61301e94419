/** The agent bridge (seed 004): runs as a service over BackendDrivers, with governance and the Run Ledger. */
export type { RemoteRuns, RemoteCancel, ClusterNodeView, ChooseOptions, RunPlace, StopHow } from './remote-runs.js';
export type { BeforeEnd } from './live-run.js';
export { RunService, negotiateRunSchema, OWNER_CALLER, PAGE_BYTES, type RunServiceOptions, type SubmitRequest, type RunView, type RunViewPage, type BackendInfo, type IdleConversationsView, type IdleCount, type ClusterNodesView, type RecoveryReport } from './run-service.js';
export { RUN_STATUSES, RUN_MODES, FAILED_REASONS, CANCELLED_REASONS, COMPLETED_REASONS, NEXT_STATUSES, step, canStep, initialState, isEnded, replayTransitions, type RunSpec, type RunState, type RunStatus, type RunMode, type RunLimits, type RunInput, type RunTransition, type EndReason, type FailedReason, type CancelledReason } from '../ledger/run-model.js';
export { RUN_EVENT_TYPES, renderEvent, type RunEvent, type NewRunEvent, type RunEventType, type WireRunEvent, type DecisionRecord } from '../ledger/run-events.js';
export type { BackendDriver, BackendCapabilities, BackendHealth, DriverRun, DriverRunRequest, DriverOutcome, DriverEmission, ToolCallRequest } from './backends/backend-driver.js';
export { ConversationBackend, type ConversationBackendOptions } from './backends/conversation-backend.js';
export { PaneBackend, type PaneBackendOptions } from './backends/pane-backend.js';
export { CommandBackend, SHELL_BACKEND, type CommandBackendOptions } from './backends/command-backend.js';
export { FakeBackend, type FakeBackendOptions } from './backends/fake-backend.js';
export { defaultBackends, type DefaultBackendsOptions } from './backends/default-backends.js';
export { BRIDGE_MARKER_VARIABLE } from './process-marker.js';
export { StructuredRuns, type RunAgentOptions } from './structured-runs.js';
export type { OpenSessionOptions, SessionTurn, SessionPermission } from './agent-sessions.js';
export { executeTask, type TaskOptions, type TaskOutcome } from './task-runs.js';
export { carriesBackend, carriesConversation, findConversationFile, conversationTarget, type ConversationPlace, type ConversationFile } from './conversation-files.js';
