/**
 * Switchboard's library surface. Most callers want `connect()` (talk to a running daemon); embedders
 * (an Electron main process, a test harness) can run a `Daemon` or a bare `PaneRegistry` in-process.
 */
export { connect, SwitchboardClient, ClientSubscription, RpcError, resolveEndpoint, type ConnectOptions, type Endpoint } from './client/index.js';
export { Daemon, type DaemonOptions, type RuntimeInfo } from './daemon/index.js';
export { PaneRegistry, Pane, waitForScreen, type CreatePaneOptions, type ExitInfo, type PaneOutput } from './pane/index.js';
export { SwitchboardError, isSwitchboardError, ERROR_CODES, RPC_CODE_BY_ERROR, type ErrorCode } from './core/errors.js';
export { createStreamLogger, silentLogger, type Logger } from './core/logger.js';
export type { MethodName, Params, ParamsInput, Result, Notifications, PaneInfo, ScreenResult, WaitForResult, InfoResult, LogMessage, SessionInfo } from './protocol/methods.js';
export { CodingAgent, AUTO_APPROVE_POLICY, ASK_POLICY, evaluatePolicy, parsePolicy, loadPolicyFile, type CodingAgentOptions, type ExecuteResult, type ExecuteStatus, type ApprovalRecord, type ProgressEvent, type ApprovalPolicy, type PolicyRule, type PolicyVerdict } from './runs/index.js';
export { runDoctor, type DoctorOptions, type DoctorReport, type AgentReport, type StepReport } from './runs/index.js';
export { MsgStore, type MsgStoreOptions, type MsgStoreStats, type StoredMsg, type SubscribeOptions, type BatchListener } from './events/msg-store.js';
export { AnsiSpanParser, ansiToSpans, spansToHtml, type AnsiColor, type SpanStyle, type StyledSpan } from './events/ansi-spans.js';
export { ENTRY_TYPES, type NormalizedEntry, type NormalizedEntryType, type EntryMetadata, type Normalizer } from './events/entry.js';
export { ClaudeStreamJsonNormalizer } from './events/normalize-claude.js';
export { CodexExecJsonNormalizer } from './events/normalize-codex.js';
export { GeminiStreamJsonNormalizer } from './events/normalize-gemini.js';
export { OpenCodeJsonNormalizer } from './events/normalize-opencode.js';
export { negotiateSchema, StreamEventEncoder, SCHEMA_VERSIONS, type SchemaVersion, type StreamEvent, type StreamEventType, type StreamEventV1, type StreamEventV2, type RunOutcome } from './events/stream-events.js';
export { SessionService, SessionLogs, PaneSession, PANE_LOG_DEFAULTS, type SessionLog, type SessionKind, type SessionSummary, type RunAgentOptions } from './sessions/index.js';
export { logMsgBytes, type LogMsg } from './events/log-msg.js';
export { headlessAgentEnv, agentUnsetEnv, checkSandbox } from './agents/index.js';
export { decidePermission, subjectForTool, type PermissionRequest, type PermissionAnswer } from './drivers/permission.js';
export type { AgentSession, AgentSessionOptions, SessionDriver, TurnResult } from './drivers/session.js';
export { ClaudeSessionDriver } from './drivers/claude-session.js';
export { CodexSessionDriver } from './drivers/codex-session.js';
export type { SessionDriverOptions } from './drivers/agent-program.js';
export { AcpDriver, type AcpDriverOptions } from './drivers/acp-driver.js';
export { permissionRequestFor, outcomeFor, type AcpPermissionOption, type AcpPermissionOutcome } from './drivers/acp-permission.js';
export { AcpUpdateNormalizer, entryTypeForAcpKind } from './events/normalize-acp.js';
