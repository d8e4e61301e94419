/** Seed 001's log stream for any session: list, subscribe, unsubscribe, read history, export; and its notifications. */
import { z } from 'zod';
import { int, logMsgSchema, optional, sessionId, subscriptionId, success } from './common.js';

export const logParams = {
  /** Every session with a log: each pane's, and each structured run's. */
  log_sessions: z.strictObject({}),
  /** Seed 001's logStream:subscribe: the session's retained history (unless history is false), then live. */
  log_subscribe: z.strictObject({ session_id: sessionId, history: optional(z.boolean()) }),
  log_unsubscribe: z.strictObject({ subscription: subscriptionId }),
  /** Seed 001's logStream:getHistory: retained messages after `after_seq`, oldest first, at most `limit`. */
  log_get_history: z.strictObject({ session_id: sessionId, after_seq: optional(int(0, Number.MAX_SAFE_INTEGER)), limit: optional(int(1, 10_000)) }),
  /** Writes the session's whole log (spilled part included) as JSONL to a private file in the daemon's home. */
  log_export: z.strictObject({ session_id: sessionId }),
} as const;

/** A session as log_sessions lists it. */
export const sessionInfoSchema = z.object({
  session_id: z.string(),
  kind: z.enum(['pane', 'run', 'session']),
  title: z.string(),
  agent: z.string().nullable(),
  created_at: z.string(),
  finished: z.boolean(),
  /** On a cluster controller, the node a session is on (its id is then `<node>/<session>`); absent for the daemon's own. */
  node: z.string().optional(),
  stats: z.object({ retained: z.number(), retainedBytes: z.number(), evicted: z.number(), lastSeq: z.number(), subscribers: z.number(), dropped: z.number(), unspilled: z.number() }),
});

/** One message of a session's log with its place in it (seq counts from 1, never repeats). */
export const logMessageSchema = z.object({ seq: z.number(), msg: logMsgSchema });

export const logResults = {
  log_sessions: z.object({ sessions: z.array(sessionInfoSchema) }),
  log_subscribe: z.object({ subscription: z.string(), session_id: z.string() }),
  log_unsubscribe: success,
  log_get_history: z.object({ session_id: z.string(), messages: z.array(logMessageSchema), finished: z.boolean(), evicted: z.number(), last_seq: z.number() }),
  log_export: z.object({ session_id: z.string(), path: z.string(), messages: z.number() }),
} as const;

export const logNotifications = {
  /** New messages of a session's log, in order, batched (seed 001's logStream:message). */
  log_message: z.object({ subscription: z.string(), session_id: z.string(), messages: z.array(logMessageSchema) }),
  /** The session ended; no message follows (seed 001's logStream:finished). */
  log_finished: z.object({ subscription: z.string(), session_id: z.string() }),
  /** The subscriber fell too far behind and was let go; read log_get_history to catch up. */
  log_dropped: z.object({ subscription: z.string(), session_id: z.string(), reason: z.string(), last_seq: z.number() }),
} as const;
