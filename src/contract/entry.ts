/**
 * Seed 001's NormalizedEntry: one event model for every agent, whatever CLI it is, and the LogMsg a
 * session's log holds. Normalizers (src/output/) make entries; the wire and the dashboard read them.
 */

export const ENTRY_TYPES = ['assistant_message', 'user_message', 'system_message', 'tool_use', 'tool_result', 'command_run', 'file_edit', 'file_read', 'error', 'raw'] as const;
export type NormalizedEntryType = (typeof ENTRY_TYPES)[number];

export const ENTRY_STATUSES = ['pending', 'running', 'success', 'failed'] as const;
export type EntryStatus = (typeof ENTRY_STATUSES)[number];

export interface EntryMetadata {
  toolName?: string;
  toolInput?: Record<string, unknown>;
  toolOutput?: string;
  exitCode?: number;
  filePath?: string;
  status?: EntryStatus;
  /** Pairs a tool call with its result: the call's id, on both. */
  toolCallId?: string;
}

export interface NormalizedEntry {
  id: string;
  type: NormalizedEntryType;
  /** Milliseconds since the epoch: the CLI's own time where the line has one, else when it was read. */
  timestamp: number;
  content: string;
  metadata?: EntryMetadata;
}

export const LOG_MSG_TYPES = ['stdout', 'stderr', 'normalized'] as const;

/**
 * Seed 001's LogMsg: what a session's log holds. Output as the program wrote it (`stdout`,
 * `stderr`), and the structured entries read from it (`normalized`). A log is finished when its
 * session ends; that is a notification, not a message.
 */
export type LogMsg = { type: 'stdout'; content: string } | { type: 'stderr'; content: string } | { type: 'normalized'; entry: NormalizedEntry };
