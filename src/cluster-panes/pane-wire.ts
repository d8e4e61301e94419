/**
 * What crosses the network for a pane on another host: the node's pane operations (request and
 * reply on `sb.node.<name>.panes`, checked on both ends as every control operation is) and the
 * frames of an attached terminal's output (`sb.pane.<node>.<attachment>`, published by the node).
 *
 * An attached terminal is joined without a gap the way a local one is: the controller subscribes
 * to the attachment's subject before it asks, the node answers `attach` (and `redraw`) with the
 * output so far and the sequence number of the last frame that output holds, and the controller
 * drops the frames up to it and plays the rest. A frame missing from the sequence (NATS drops what
 * a slow subscriber cannot take) is made good by a redraw, never by guessing.
 */
import { z } from 'zod';
import type { ControlOps } from '../cluster/index.js';
import { NODE_PANE_METHODS } from '../api/index.js';
import { notificationSchemas } from '../protocol/methods.js';

/** An attachment's name: one subject token the controller makes up (random), so a node's output for it goes to that controller only. */
const attachmentId = z.string().regex(/^[a-z0-9]{16,32}$/, 'an attachment id is 16 to 32 lowercase letters and digits');
/** A call the controller may stop before it ends (a wait_for whose caller has gone): a random name it makes up. */
const callId = attachmentId;
/** A pane's id on its node: never a `/`, which would make `<node>/<pane>` ambiguous. */
const paneId = z.string().min(1).max(128).regex(/^[^/]+$/, 'a pane id holds no /');
const exitSchema = z.object({ exit_code: z.number().nullable(), signal: z.string().nullable() });
/**
 * Keystrokes go in pieces of at most this many bytes: a request stays well under the NATS server's
 * max_payload (1 MiB by default) after base64, so a big paste is never refused on the way.
 */
export const INPUT_CHUNK_BYTES = 256 * 1024;
const MAX_INPUT_BASE64 = Math.ceil(INPUT_CHUNK_BYTES / 3) * 4;

/** The most messages one log read answers (as log_get_history's limit). */
const MAX_LOG_READ = 10_000;
/** The longest a log read waits on the node for a message (the controller asks again after it). */
const MAX_LOG_WAIT_MS = 30_000;

/** What a node's subscription carries itself (an agent's states go to every controller on their own subject). */
const NODE_FOLLOWED_EVENTS = ['output', 'exit', 'screen'] as const;
export type NodeFollowedEvent = (typeof NODE_FOLLOWED_EVENTS)[number];

export const NODE_PANE_OPS = {
  /** The node's panes, as `list` gives a daemon's own (the controller names them `<node>/<pane>`). */
  list: { params: z.strictObject({}), result: z.object({ panes: z.array(z.record(z.string(), z.unknown())).max(4096) }) },
  /** The node's agent panes' states now, as `pane_states` gives a daemon's own. */
  states: { params: z.strictObject({}), result: z.object({ states: z.array(z.record(z.string(), z.unknown())).max(4096) }) },
  /** One pane method (NODE_PANE_METHODS) on one of the node's panes: its params as the method takes them, its result as the method gives it. */
  call: { params: z.strictObject({ method: z.enum(NODE_PANE_METHODS), params: z.record(z.string(), z.unknown()), call: callId.optional() }), result: z.object({ result: z.unknown() }) },
  /**
   * Opens a pane on the node: create_pane's params (checked on the node as a daemon checks them;
   * a program, never an agent), its result. A node opens panes only when its person said so
   * (`switchboard node --panes`), in a folder its policy's sandbox holds.
   */
  create: { params: z.strictObject({ params: z.record(z.string(), z.unknown()) }), result: z.object({ result: z.unknown() }) },
  /** Stops a named call still under way (a wait_for whose caller has gone: it answers `cancelled`); one already over is let be. */
  cancel: { params: z.strictObject({ call: callId }), result: z.object({}) },
  /** Attaches a terminal: the output so far (a replay, or the screen now), whether the program has exited, and the last frame number it holds. */
  attach: { params: z.strictObject({ pane_id: paneId, attachment: attachmentId }), result: z.object({ replay: z.string(), seq: z.number().int().min(0), exit: exitSchema.optional() }) },
  /** The screen as it is now, for a terminal the controller reset, the last frame number it holds, and the program's exit if it has ended (a frame saying so may be among those it holds, or lost). */
  redraw: { params: z.strictObject({ attachment: attachmentId }), result: z.object({ screen: z.string(), seq: z.number().int().min(0), exit: exitSchema.optional() }) },
  /** Keystrokes, as base64 bytes. */
  input: { params: z.strictObject({ attachment: attachmentId, data: z.base64().max(MAX_INPUT_BASE64) }), result: z.object({}) },
  /** Resizes the pane (the pane limits checked on the node too). */
  resize: { params: z.strictObject({ attachment: attachmentId, cols: z.number().int().min(2).max(1000), rows: z.number().int().min(1).max(500) }), result: z.object({}) },
  /**
   * The controller still has these attachments: the node keeps them (it ends one not kept for a
   * while), says which it no longer has, and the number of the last frame it sent each (frames and
   * this answer leave on one connection, so a controller that has played fewer lost the last ones).
   */
  keep: {
    params: z.strictObject({ attachments: z.array(attachmentId).max(1024) }),
    result: z.object({ gone: z.array(z.string()), sent: z.record(z.string(), z.number().int().min(0)) }),
  },
  /**
   * Follows a pane as `subscribe` does (output, exit, screen frames): its notifications go out in
   * numbered frames on the attachment's subject, as a terminal's output does, and it is kept and
   * ended the same way.
   */
  subscribe: {
    params: z.strictObject({ pane_id: paneId, attachment: attachmentId, events: z.array(z.enum(NODE_FOLLOWED_EVENTS)).max(NODE_FOLLOWED_EVENTS.length), replay: z.boolean() }),
    /** Where in the pane's output stream its first output starts (the replay's start, or the end of the output so far). */
    result: z.object({ offset: z.number().int().min(0) }),
  },
  /**
   * For a subscription that lost frames: its screen again as a full frame, its exit again if the
   * program has ended, where the output it has sent ends (so the controller can tell how much of
   * it never came) and the number of the last frame sent (what that offset is true as of).
   */
  repaint: { params: z.strictObject({ attachment: attachmentId }), result: z.object({ offset: z.number().int().min(0), seq: z.number().int().min(0) }) },
  /**
   * A session's log on the node (a pane's, by its id there): its retained messages after
   * `after_seq` (none given: after its last now, so none), oldest first, at most `limit` and as
   * many as one answer carries. With `wait_ms`, an answer that would hold none waits that long for
   * one, or for the log's end; `waited` is false when the node holds as many waits as it takes
   * and answered at once. Named (`call`), the controller can stop the wait (`cancel`).
   */
  log_read: {
    params: z.strictObject({
      session_id: paneId,
      after_seq: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional(),
      limit: z.number().int().min(1).max(MAX_LOG_READ),
      wait_ms: z.number().int().min(0).max(MAX_LOG_WAIT_MS),
      call: callId.optional(),
    }),
    result: z.object({ messages: z.array(z.unknown()).max(MAX_LOG_READ), finished: z.boolean(), evicted: z.number().int().min(0), last_seq: z.number().int().min(0), waited: z.boolean() }),
  },
  /** The node's session logs (its panes'), as `log_sessions` lists a daemon's own (the controller names them `<node>/<session>`). */
  log_sessions: { params: z.strictObject({}), result: z.object({ sessions: z.array(z.record(z.string(), z.unknown())).max(4096) }) },
  /** Ends an attachment or a subscription. */
  detach: { params: z.strictObject({ attachment: attachmentId }), result: z.object({}) },
} as const satisfies ControlOps;

/** One frame of an attachment's output: output, the program's exit, or the attachment's end. */
export const OutputFrameSchema = z.object({
  seq: z.number().int().min(1),
  output: z.string().optional(),
  exit: exitSchema.optional(),
  /** The node ended the attachment (its pane is gone, or the node is stopping). */
  ended: z.object({ code: z.string(), message: z.string() }).optional(),
});
export type OutputFrame = z.infer<typeof OutputFrameSchema>;

/** What a subscription's frames carry: a pane notification without the subscription and pane (the controller's caller names them). */
const unnamed = { subscription: true, pane_id: true } as const;
const NoticeSchema = z.discriminatedUnion('method', [
  z.object({ method: z.literal('output'), params: notificationSchemas.output.omit(unnamed) }),
  z.object({ method: z.literal('exit'), params: notificationSchemas.exit.omit(unnamed) }),
  z.object({ method: z.literal('screen'), params: notificationSchemas.screen.omit(unnamed) }),
]);

/** One frame of a subscription: a notification, or the subscription's end. */
export const NoticeFrameSchema = z.object({
  seq: z.number().int().min(1),
  notice: NoticeSchema.optional(),
  ended: z.object({ code: z.string(), message: z.string() }).optional(),
});
export type NoticeFrame = z.infer<typeof NoticeFrameSchema>;

/** A node started a pane (its own id; the node is the subject's). */
export const PaneCreatedSchema = z.object({ pane_id: paneId, title: z.string().max(256) });

/** An agent pane of a node changed state (its own id; the node is the subject's): the whole state, so a lost one is made good by the next. */
export const PaneStateSchema = notificationSchemas.state.omit({ subscription: true }).extend({ pane_id: paneId });

/** The program of a node's pane ended (its own id; the node is the subject's). */
export const PaneExitedSchema = z.object({ pane_id: paneId, exit_code: z.number().nullable(), signal: z.string().nullable() });

/** A pane of a node's listing, as far as the controller relies on it (the rest is checked by the protocol's schema). */
export const ListedPaneSchema = z.object({ pane_id: paneId });
/** A listed session's id must be one `<node>/<session>` can name. */
export const ListedSessionSchema = z.object({ session_id: paneId });

/** How often the controller renews its attachments, and how long a node keeps one not renewed. */
export const KEEP_EVERY_MS = 10_000;
export const KEEP_FOR_MS = 3 * KEEP_EVERY_MS;
