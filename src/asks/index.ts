/** Agents asking agents: the ask engine, its lifecycle, the transcript readers and the MCP server core. */
export { AskEngine } from './engine.js';
export { LedgerAskRecorder } from './ledger-recorder.js';
export { PaneAskTarget } from './pane-target.js';
export type { Asker, AskDirectory, AskRecord, AskTarget } from './types.js';
export { createTranscriptReader, opencodeDbQuery } from './transcripts/reader.js';
export { markQuestion, newAskId } from './transcripts/marker.js';
export { AskService, type AskTargetInfo } from './service.js';
