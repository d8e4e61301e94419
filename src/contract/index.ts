/**
 * The shared vocabulary of Switchboard: types and their literal-name lists only, importing
 * nothing. Every layer may import it, and so may the web app (type-only imports).
 */
export { AGENT_STATES, type AgentState, type Evidence, type StateChange } from './agent-state.js';
export { ENTRY_TYPES, ENTRY_STATUSES, LOG_MSG_TYPES, type NormalizedEntryType, type EntryStatus, type EntryMetadata, type NormalizedEntry, type LogMsg } from './entry.js';
export { TOOL_KINDS, ANSWER_MEANINGS, APPROVAL_DECISIONS, DECIDERS, SHELL_DIALECTS, type DecidedBy, type RecordedDecider, type ToolKind, type AnswerMeaning, type ApprovalDecision, type ShellDialect, type ApprovalSubject, type ApprovalInfo, type ApprovalOption, type ApprovalPrompt } from './approval.js';
export { SCHEMA_VERSIONS, STREAM_EVENT_TYPES, RUN_OUTCOMES, type SchemaVersion, type StreamEventType, type RunOutcome, type CompatFields, type StreamEventV1, type StreamEventV2, type StreamEvent } from './stream-events.js';
export { ASK_ID_SOURCE, ASK_ID_WORDS, DEFAULT_ASK_TIMEOUT_MS, MAX_ASK_TIMEOUT_MS, MAX_ASKS_PER_TARGET, MAX_QUESTION_CHARS } from './ask.js';
export { RUN_STATUSES, RUN_MODES, RUN_EVENT_TYPES, END_STATUSES, REPO_NAME_PATTERN, GIT_REF_PATTERN, isEnded, type RunStatus, type EndStatus, type RunMode, type RunEventType } from './bridge-run.js';
