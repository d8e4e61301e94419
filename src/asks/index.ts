/** Agents asking agents: the ask engine, its lifecycle, the transcript readers and the MCP server core. */
export { AskEngine, DEFAULT_ASK_TIMEOUT_MS, MAX_ASK_TIMEOUT_MS, MAX_ASKS_PER_TARGET, MAX_QUESTION_CHARS, REPLY_POLL_MS, TRANSCRIPT_PATIENCE_MS, type AskEngineOptions } from './engine.js';
export { ASK_STATUSES, FINAL_STATUSES, isFinal, newAskLife, stepAsk, stepDelivery, type AskEvent, type AskLife, type AskStatus, type DeliveryStatus, type ReplySource } from './lifecycle.js';
export { MemoryAskRecorder, MAX_KEPT_ASKS } from './memory-recorder.js';
export { LedgerAskRecorder, interruptAsk, type LedgerAskRecorderOptions } from './ledger-recorder.js';
export { PaneAskTarget, type PaneTargetOptions } from './pane-target.js';
export { resolveTarget } from './resolve.js';
export { deliveryText } from './delivery.js';
export type { Asker, AskDirectory, AskRecord, AskRecorder, AskRequest, AskTarget } from './types.js';
export { askMarker, markQuestion, newAskId, askIdIn, isAskId } from './transcripts/marker.js';
export { createTranscriptReader, opencodeDbQuery, type TranscriptReader, type OpenCodeQuery } from './transcripts/reader.js';
export { dashedCwd, transcriptDirs, type TranscriptLocation } from './transcripts/locate.js';
export { TRANSCRIPT_FORMATS, type ReplyRead, type TranscriptFormat } from './transcripts/types.js';
export { AskService, RegistryAskDirectory, type AskTargetInfo } from './service.js';
