/**
 * Requests and replies between the controller and a node, over NATS request/reply: to one node on
 * `sb.node.<name>.ctl`, to the controller on `sb.ctl.<node>.<op>` (so a node's permissions hold it
 * to asking under its own name, and can name the operations it may ask for). Each operation is a pair of zod schemas, checked on both ends, as the
 * JSON-RPC method table is; a failure travels as a stable code (core/errors.ts) and is thrown
 * again as a SwitchboardError with that code. A request nobody listens for is NODE_UNREACHABLE,
 * at once (NATS answers "no responders"); one nobody answers in time is TIMEOUT.
 *
 * The operations here are the ones the cluster needs itself; runs add theirs to these tables.
 */
import type { Msg, NatsConnection } from '@nats-io/transport-node';
import { z } from 'zod';
import type { Disposable } from '../core/disposable.js';
import { ERROR_CODES, errorMessage, isSwitchboardError, SwitchboardError, type ErrorCode } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import { describeIssues } from '../core/zod-issues.js';
import { LogLimiter } from '../core/log-limiter.js';
import { isConnectionClosed, isNoResponders, isPermissionViolation, isTimeout } from './nats-errors.js';
import { subscribeToNodes } from './reflected.js';
import { checkName, controllerSubject, nodeControlSubject, parseNodeSubject } from './topology.js';

/** How long a caller waits for a reply unless it says otherwise. */
const DEFAULT_TIMEOUT_MS = 5_000;
/** The controllers answering `sb.ctl.>` share the requests (one answers each). */
const CONTROLLER_QUEUE = 'sb-controller';
const WIRE_VERSION = 1;

/** One operation: what it takes and what it answers. */
export interface ControlOp {
  readonly params: z.ZodType;
  readonly result: z.ZodType;
}

export type ControlOps = Readonly<Record<string, ControlOp>>;

/** What a node answers. */
export const NODE_CONTROL_OPS = {
  /** Is the node there, and which registration of it. */
  ping: { params: z.strictObject({}), result: z.object({ node: z.string(), epoch: z.number().int() }) },
  /**
   * End a run the node runs (or is starting): `found` false when it has no such run going. With
   * `violation`, the controller's policy judged one of its decisions again and denies it: the run
   * ends `failed (policy)` saying so, not `cancelled`.
   */
  cancel: {
    params: z.strictObject({ run_id: z.string().min(1).max(128), violation: z.strictObject({ rule: z.string().min(1).max(256), reason: z.string().max(4096) }).optional() }),
    result: z.object({ found: z.boolean() }),
  },
  /**
   * End a run's turn but not its conversation (the CLI's own cancel of its turn, where its driver
   * has one; else a cancel): the run ends `cancelled`, and a follow-up goes on in the conversation.
   * `found` as for cancel.
   */
  interrupt: { params: z.strictObject({ run_id: z.string().min(1).max(128) }), result: z.object({ found: z.boolean() }) },
  /**
   * Write the copy of a CLI's conversation the node keeps on its shelf now, if it changed since the
   * last (and the last copy of a run that just ended): asked before a resume elsewhere copies it
   * from there. `shelved` false when the node carries no such conversation.
   */
  shelve: { params: z.strictObject({ backend: z.string().min(1).max(64), conversation: z.string().min(1).max(128) }), result: z.object({ shelved: z.boolean() }) },
} as const satisfies ControlOps;

/** What the controller answers. */
export const CONTROLLER_CONTROL_OPS = {
  /** Is a controller there. */
  ping: { params: z.strictObject({ node: z.string() }), result: z.object({ at: z.number() }) },
  /** A node joins: its own pool's consumer is laid out (a node's user cannot), and named. */
  join: { params: z.strictObject({ node: z.string().min(1).max(64) }), result: z.object({ pool: z.string() }) },
  /**
   * A node could not take a run it was sent (its claim could not be tried, the item was too old)
   * and refused its work item: the controller ends the run unless a node holds it (`ended`).
   */
  refused: { params: z.strictObject({ node: z.string().min(1).max(64), run_id: z.string().min(1).max(128), reason: z.string().max(4096) }), result: z.object({ ended: z.boolean() }) },
  /**
   * The sequence number of the node's last event of a run the event stream holds (0: none): where
   * its outbox goes on. Asked of the controller because a node may make no direct get of its own
   * (reflected.ts); answered for the asking node's own subjects only.
   */
  last_event: { params: z.strictObject({ node: z.string().min(1).max(64), run_id: z.string().min(1).max(128) }), result: z.object({ seq: z.number().int().nonnegative() }) },
} as const satisfies ControlOps;

/** The handler of every operation of `Ops`: checked parameters in, a result to check out. */
export type ControlHandlers<Ops extends ControlOps> = {
  readonly [K in keyof Ops]: (params: z.output<Ops[K]['params']>) => Promise<z.input<Ops[K]['result']>>;
};

const RequestSchema = z.object({ v: z.literal(WIRE_VERSION), op: z.string(), params: z.unknown() });
const ReplySchema = z.discriminatedUnion('ok', [
  z.object({ ok: z.literal(true), result: z.unknown() }),
  z.object({ ok: z.literal(false), error: z.object({ code: z.string(), message: z.string(), details: z.record(z.string(), z.unknown()).optional() }) }),
]);
type Reply = z.infer<typeof ReplySchema>;

/** The NATS server's default max_payload, for a connection that has not said its own. */
const DEFAULT_MAX_PAYLOAD = 1024 * 1024;

/** The most one message may carry on `nc`'s server (its max_payload). */
export function maxPayload(nc: NatsConnection): number {
  return nc.info?.max_payload ?? DEFAULT_MAX_PAYLOAD;
}

/** A message's JSON, or undefined when it is not JSON. */
export function parseJson(data: Uint8Array): unknown {
  try {
    return JSON.parse(new TextDecoder().decode(data));
  } catch {
    return undefined;
  }
}

const knownCode = (code: string): ErrorCode => ((ERROR_CODES as readonly string[]).includes(code) ? (code as ErrorCode) : 'INTERNAL_ERROR');

/** Asks one side for operations of `Ops`. */
export class ControlClient<Ops extends ControlOps> {
  constructor(
    private readonly nc: NatsConnection,
    private readonly ops: Ops,
    /** Who is asked, for messages: `node b`, `the controller`. */
    private readonly target: string,
    private readonly subjectOf: (op: string) => string,
    private readonly timeoutMs = DEFAULT_TIMEOUT_MS,
  ) {}

  /** Calls `op`; its result, checked, or a SwitchboardError with the stable code of what went wrong. */
  async call<K extends keyof Ops & string>(op: K, params: z.input<Ops[K]['params']>): Promise<z.output<Ops[K]['result']>> {
    const spec = this.ops[op];
    if (spec === undefined) throw new SwitchboardError('METHOD_NOT_FOUND', `no control operation '${op}'`);
    const checked = spec.params.safeParse(params);
    if (!checked.success) throw new SwitchboardError('INVALID_PARAMS', `${op}: ${describeIssues(checked.error)}`);
    const subject = this.subjectOf(op);
    const request = JSON.stringify({ v: WIRE_VERSION, op, params: checked.data });
    // The server would refuse it on the way, and the caller wait out its timeout: said now instead.
    const limit = maxPayload(this.nc);
    const size = Buffer.byteLength(request);
    if (size > limit) throw new SwitchboardError('LIMIT_EXCEEDED', `${op} to ${this.target} carries ${size} bytes, more than the NATS server takes in one message (${limit}): send it in parts`, { op, bytes: size, max_payload: limit });
    let reply: Msg;
    try {
      reply = await this.nc.request(subject, request, { timeout: this.timeoutMs });
    } catch (err) {
      throw this.requestFailure(op, subject, err);
    }
    const parsed = ReplySchema.safeParse(parseJson(reply.data));
    if (!parsed.success) throw new SwitchboardError('INTERNAL_ERROR', `${this.target} answered ${op} with something that is not a reply`);
    if (!parsed.data.ok) {
      const { code, message, details } = parsed.data.error;
      throw new SwitchboardError(knownCode(code), message, details);
    }
    const result = spec.result.safeParse(parsed.data.result);
    if (!result.success) throw new SwitchboardError('INTERNAL_ERROR', `${this.target} answered ${op} with a result that does not fit: ${describeIssues(result.error, 'field')}`);
    return result.data as z.output<Ops[K]['result']>;
  }

  private requestFailure(op: string, subject: string, err: unknown): SwitchboardError {
    const details = { op, subject };
    const options = { cause: err };
    if (isNoResponders(err)) return new SwitchboardError('NODE_UNREACHABLE', `${this.target} is not connected (nobody listens on ${subject})`, details, options);
    if (isTimeout(err)) return new SwitchboardError('TIMEOUT', `${this.target} did not answer ${op} within ${this.timeoutMs} ms`, details, options);
    if (isPermissionViolation(err)) return new SwitchboardError('FORBIDDEN', `this NATS user may not ask ${this.target} (${errorMessage(err)})`, details, options);
    if (isConnectionClosed(err)) return new SwitchboardError('CONNECTION_FAILED', `the NATS connection is closed`, details, options);
    return new SwitchboardError('CONNECTION_FAILED', `asking ${this.target} failed: ${errorMessage(err)}`, details, options);
  }
}

/** A client for the operations of node `node`. */
export function nodeControlClient(nc: NatsConnection, node: string, timeoutMs?: number): ControlClient<typeof NODE_CONTROL_OPS> {
  const subject = nodeControlSubject(node);
  return new ControlClient(nc, NODE_CONTROL_OPS, `node ${node}`, () => subject, timeoutMs);
}

/** A client for the controller's operations, node `node`'s side (its requests go under its name). */
export function controllerControlClient(nc: NatsConnection, node: string, timeoutMs?: number): ControlClient<typeof CONTROLLER_CONTROL_OPS> {
  checkName('node', node);
  return new ControlClient(nc, CONTROLLER_CONTROL_OPS, 'the controller', (op) => controllerSubject(node, op), timeoutMs);
}

export interface ServeOptions<Ops extends ControlOps> {
  nc: NatsConnection;
  subject: string;
  ops: Ops;
  handlers: ControlHandlers<Ops>;
  logger: Logger;
  queue?: string;
  /** The operation a request is for; by default the one it names. */
  opOf?: (message: Msg, named: string) => string | undefined;
  /** Checks a request against where it came from, its params parsed; throws a SwitchboardError to refuse it. */
  admit?: (message: Msg, op: string, params: unknown) => void;
}

/** Answers requests on `subject` with `handlers`, each checked against `ops` both ways; dispose to stop. */
export function serveControl<Ops extends ControlOps>(options: ServeOptions<Ops>): Disposable {
  const { nc, ops, handlers, logger } = options;
  const refusals = new LogLimiter(logger);
  const answer = async (message: Msg): Promise<Reply> => {
    const request = RequestSchema.safeParse(parseJson(message.data));
    if (!request.success) return failure('INVALID_REQUEST', 'not a control request');
    const op = options.opOf ? options.opOf(message, request.data.op) : request.data.op;
    const spec = op === undefined ? undefined : ops[op];
    const handler = op === undefined ? undefined : (handlers as Readonly<Record<string, (params: unknown) => Promise<unknown>>>)[op];
    if (op === undefined || spec === undefined || handler === undefined) return failure('METHOD_NOT_FOUND', `no control operation '${request.data.op}'`);
    const params = spec.params.safeParse(request.data.params);
    if (!params.success) return failure('INVALID_PARAMS', `${op}: ${describeIssues(params.error)}`);
    let result: unknown;
    try {
      options.admit?.(message, op, params.data);
      result = await handler(params.data);
    } catch (err) {
      if (isSwitchboardError(err)) return failure(err.code, err.message, err.details);
      logger.error('a control handler failed', { op, error: errorMessage(err) });
      return failure('INTERNAL_ERROR', `${op} failed: ${errorMessage(err)}`);
    }
    const checked = spec.result.safeParse(result);
    if (!checked.success) {
      logger.error('a control handler gave a result that does not fit', { op, problems: describeIssues(checked.error, 'field') });
      return failure('INTERNAL_ERROR', `${op} gave a result that does not fit`);
    }
    return { ok: true, result: checked.data };
  };
  const subscription = subscribeToNodes(
    nc,
    options.subject,
    (message) => {
      // A request asks for its answer; one with nowhere to answer is nobody's.
      if (message.reply === undefined || message.reply === '') {
        refusals.log('warn', 'refused a control message with nowhere to answer', { subject: options.subject });
        return;
      }
      answer(message)
        .then((reply) => message.respond(fitted(reply, nc)))
        .catch((answerErr: unknown) => logger.debug('a control reply was not sent', { error: errorMessage(answerErr) }));
    },
    {
      ...(options.queue !== undefined && { queue: options.queue }),
      refused: () => refusals.log('warn', "refused a control message sent by the server on another client's say-so (a direct get answered here)", { subject: options.subject }),
      failed: (err) => logger.warn('the control subscription failed', { subject: options.subject, error: errorMessage(err) }),
    },
  );
  return { dispose: () => subscription.unsubscribe() };
}

/**
 * The reply as sent: one larger than the server takes (`max_payload`, 1 MiB by default) would be
 * refused on the way and its caller would wait out its timeout, so it is answered LIMIT_EXCEEDED.
 */
function fitted(reply: Reply, nc: NatsConnection): string {
  const text = JSON.stringify(reply);
  const limit = maxPayload(nc);
  if (Buffer.byteLength(text) <= limit) return text;
  return JSON.stringify(failure('LIMIT_EXCEEDED', `the answer is larger than the NATS server takes in one message (${limit} bytes): ask for less`, { max_payload: limit }));
}

function failure(code: ErrorCode, message: string, details?: Readonly<Record<string, unknown>>): Reply {
  return { ok: false, error: { code, message, ...(details !== undefined && { details: { ...details } }) } };
}

/** Answers node `node`'s operations. */
export function serveNodeControl(nc: NatsConnection, node: string, handlers: ControlHandlers<typeof NODE_CONTROL_OPS>, logger: Logger): Disposable {
  return serveControl({ nc, subject: nodeControlSubject(node), ops: NODE_CONTROL_OPS, handlers, logger: logger.child({ node }) });
}

/**
 * Answers the controller's operations, on `sb.ctl.<node>.<op>`: the subject names the asking node
 * (its user may ask under its own name only) and the operation, and a request that says it is
 * another node's is refused (FORBIDDEN). An older node's `sb.ctl.<op>` is taken on its own word.
 */
export function serveControllerControl(nc: NatsConnection, handlers: ControlHandlers<typeof CONTROLLER_CONTROL_OPS>, logger: Logger): Disposable {
  // What nodes can make it say: a few lines a minute, then a count.
  const nodeLog = new LogLimiter(logger);
  /** Says a node asks as older versions did, where its own word is all there is. */
  const olderNodeAsked = (node: string): void => {
    nodeLog.log('warn', 'a node asks the controller on sb.ctl.<op>, as Switchboard before per-node subjects did: upgrade it with its new permissions (docs/cluster.md)', { node });
  };
  return serveControl({
    nc,
    subject: 'sb.ctl.>',
    ops: CONTROLLER_CONTROL_OPS,
    handlers,
    logger: logger.child({ component: 'controller-control' }),
    queue: CONTROLLER_QUEUE,
    opOf: (message, named) => {
      const op = controllerRequestOf(message.subject)?.op;
      return op === named ? op : undefined;
    },
    admit: (message, op, params) => {
      const asker = controllerRequestOf(message.subject)?.node;
      const said = (params as { node?: unknown }).node;
      // What only a node's own subjects may say is never answered on an older node's word.
      if (asker === undefined && op === 'last_event') throw new SwitchboardError('FORBIDDEN', `${op} is answered on sb.ctl.<node>.${op} only`, { op });
      if (asker === undefined) olderNodeAsked(String(said));
      else if (said !== asker) throw new SwitchboardError('FORBIDDEN', `node ${asker} may not ${op} as node ${String(said)}`, { node: asker, op });
    },
  });
}

/** The node and operation of a request to the controller (`sb.ctl.<node>.<op>`; an older node's `sb.ctl.<op>` names no node). */
function controllerRequestOf(subject: string): { node: string | undefined; op: string } | undefined {
  const named = parseNodeSubject(subject, 'ctl', 'control topic');
  return named && { node: named.node, op: named.name };
}
