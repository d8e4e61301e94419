/**
 * Switchboard's library surface. Most callers want `connect()` (talk to a running daemon); embedders
 * (an Electron main process, a test harness) can run a `Daemon` or a bare `PaneRegistry` in-process.
 */
export { connect, SwitchboardClient, ClientSubscription, RpcError, resolveEndpoint, type ConnectOptions, type Endpoint } from './client/index.js';
export { memoryTransportPair, type MemoryTransportOptions } from './protocol/memory-transport.js';
export type { MessageTransport, TransportReceiver, TransportInput } from './protocol/transport.js';
export type { AgentState, StateChange, Evidence, ApprovalInfo, ApprovalSubject, ToolKind } from './contract/index.js';
export { Daemon, type DaemonOptions, type RuntimeInfo } from './daemon/index.js';
export { PaneRegistry, Pane, waitForScreen, type CreatePaneOptions, type ExitInfo, type PaneOutput } from './pane/index.js';
export { SwitchboardError, isSwitchboardError, ERROR_CODES, type ErrorCode } from './core/errors.js';
export { RPC_CODE_BY_ERROR, errorCodeFromRpc, rpcCodeOf } from './protocol/rpc-codes.js';
export { createStreamLogger, silentLogger, type Logger } from './core/logger.js';
export type { MethodName, Params, ParamsInput, Result, Notifications, PaneInfo, ScreenResult, WaitForResult, InfoResult, LogMessage, SessionInfo, ExecuteResultInfo, ExecuteApprovalInfo, RunViewInfo, RunEventInfo, BackendInfoWire } from './protocol/methods.js';
export { CodingAgent, type CodingAgentOptions, type ExecuteResult, type ExecuteStatus, type ApprovalRecord, type ProgressEvent } from './drivers/pane/index.js';
export { AUTO_APPROVE_POLICY, ASK_POLICY, evaluatePolicy, parsePolicy, loadPolicyFile, type ApprovalPolicy, type PolicyRule, type PolicyVerdict } from './approvals/index.js';
export { decideApproval, policyVerdict, describeSubject, type ApprovalRequest, type ApprovalSource, type ApprovalOutcome, type ApprovalChain, type ApprovalCallback, type DecidedBy } from './approvals/index.js';
export { runDoctor, type DoctorOptions, type DoctorReport, type AgentReport, type StepReport } from './doctor/index.js';
export { MsgStore, type MsgStoreOptions, type MsgStoreStats, type StoredMsg, type SubscribeOptions, type BatchListener } from './output/msg-store.js';
export { AnsiSpanParser, ansiToSpans, spansToHtml, type AnsiColor, type SpanStyle, type StyledSpan } from './output/ansi-spans.js';
export { ENTRY_TYPES, type NormalizedEntry, type NormalizedEntryType, type EntryMetadata, type Normalizer } from './output/entry.js';
export { ClaudeStreamJsonNormalizer } from './output/normalize-claude.js';
export { CodexExecJsonNormalizer } from './output/normalize-codex.js';
export { GeminiStreamJsonNormalizer } from './output/normalize-gemini.js';
export { OpenCodeJsonNormalizer } from './output/normalize-opencode.js';
export { negotiateSchema, StreamEventEncoder, SCHEMA_VERSIONS, type SchemaVersion, type StreamEvent, type StreamEventType, type StreamEventV1, type StreamEventV2, type RunOutcome } from './output/stream-events.js';
export { LogService, SessionLogs, PaneLog, PANE_LOG_DEFAULTS, type SessionLog, type SessionKind, type SessionSummary } from './logs/index.js';
export type { RunAgentOptions } from './runs/index.js';
export { logMsgBytes, type LogMsg } from './output/log-msg.js';
export { headlessAgentEnv, agentUnsetEnv, checkSandbox } from './agents/index.js';
export { decidePermission, subjectForTool, type PermissionRequest, type PermissionAnswer } from './drivers/permission.js';
export type { Conversation, ConversationOptions, ConversationDriver, TurnResult } from './drivers/conversation.js';
export { ClaudeConversationDriver } from './drivers/claude-conversation.js';
export { CodexConversationDriver } from './drivers/codex-conversation.js';
export type { SessionDriverOptions } from './drivers/agent-program.js';
export { AcpDriver, type AcpDriverOptions } from './drivers/acp-driver.js';
export { permissionRequestFor, outcomeFor, type AcpPermissionOption, type AcpPermissionOutcome } from './drivers/acp-permission.js';
export { AcpUpdateNormalizer, entryTypeForAcpKind } from './output/normalize-acp.js';
export { RunService, negotiateRunSchema, defaultBackends, ConversationBackend, PaneBackend, FakeBackend, renderEvent, step as stepRun, RUN_STATUSES, FAILED_REASONS, CANCELLED_REASONS, type RunView, type SubmitRequest, type BackendInfo, type BackendDriver, type BackendCapabilities, type BackendHealth, type RunSpec, type RunState, type RunStatus, type RunEvent, type WireRunEvent, type RunLimits } from './runs/index.js';
export { RunLedger, SqliteLedgerStore, LEDGER_FILE, type LedgerStore, type RunRecord, type RunQuery, type RetentionRule } from './ledger/index.js';
export { loadGovernancePolicy, parseGovernancePolicy, Sandbox, Governor, type GovernancePolicy, type BackendPolicy } from './governance/index.js';
export { createHttpApi, startHttpApiServer, openApiDocument, type HttpApi, type HttpApiOptions, type HttpApiServer, type RunsPort } from './surfaces/http-api/index.js';
