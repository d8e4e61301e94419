/**
 * Seed 001's LogMsg: what a session's log holds. Output as the program wrote it (`stdout`,
 * `stderr`), and the structured entries read from it (`normalized`). A log is finished when its
 * session ends; that is a notification, not a message.
 */
import type { LogMsg } from '../contract/entry.js';

export type { LogMsg } from '../contract/entry.js';

/** What a message weighs against a log's byte bound: its text, without serializing it (the output path is hot). */
export function logMsgBytes(msg: LogMsg): number {
  if (msg.type !== 'normalized') return msg.content.length + 32;
  const e = msg.entry;
  const meta = e.metadata;
  const metaBytes = meta ? (meta.toolOutput?.length ?? 0) + (meta.toolInput ? JSON.stringify(meta.toolInput).length : 0) + 64 : 0;
  return e.content.length + metaBytes + 96;
}
