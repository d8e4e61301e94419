/**
 * A controller's side of its nodes' panes (api's RemotePanes): listing every live node's panes,
 * a pane method sent to the pane's node, and a terminal attached to a node's pane, which keeps
 * its attachment renewed, plays the node's frames in order, and redraws when one went missing.
 */
import { randomBytes } from 'node:crypto';
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import { z } from 'zod';
import { Emitter } from '../core/emitter.js';
import { errorMessage, SwitchboardError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import { nodePaneId, type NodeLogPage, type NodePaneEvent, type NodePaneExit, type NodePaneFollow, type NodePaneState, type NodePaneListener, type NodePaneMethod, type NodePaneRef, type PaneTerminal, type RemotePanes, type TerminalAttachment, type TerminalSink } from '../api/index.js';
import { ControlClient, nodePanesSubject, PANE_CREATED_ANY_NODE, PANE_EXITED_ANY_NODE, PANE_STATE_ANY_NODE, paneOutputSubject, parseJson, subscribeToNodes } from '../cluster/index.js';
import { paramSchemas, resultSchemas, type PaneInfo, type Params, type Result, type SessionInfo } from '../protocol/methods.js';
import { asFailure, HeldOnNode, type NodePaneClient } from './held.js';
import { NodeStates } from './node-states.js';
import { RemoteSubscription } from './remote-subscription.js';
import { INPUT_CHUNK_BYTES, KEEP_EVERY_MS, ListedPaneSchema, ListedSessionSchema, NODE_PANE_OPS, OutputFrameSchema, PaneCreatedSchema, PaneExitedSchema, PaneStateSchema, type OutputFrame } from './pane-wire.js';

/** One pane as `list` answers it. */
const paneInfoSchema = resultSchemas.list.shape.panes.element;
/** One message of a log page as `log_get_history` answers it. */
const logMessageSchema = resultSchemas.log_get_history.shape.messages.element;
/** Its place in the log, when the rest of it does not fit. */
const seqOnlySchema = z.object({ seq: z.number().int().min(1) });

/**
 * A message of a node's log page, checked alone: one this controller cannot read (a newer node's
 * entry type) is a line saying so in its place, so it never stops a reader at that seq for good.
 * A message without its seq makes the page unreadable (INTERNAL_ERROR).
 */
function readableMessage(raw: unknown, ref: NodePaneRef): z.infer<typeof logMessageSchema> {
  const message = logMessageSchema.safeParse(raw);
  if (message.success) return message.data;
  const placed = seqOnlySchema.safeParse(raw);
  if (!placed.success) throw new SwitchboardError('INTERNAL_ERROR', `node ${ref.node} answered a log read with a message that has no seq`, { node: ref.node, session_id: nodePaneId(ref) });
  return { seq: placed.data.seq, msg: { type: 'stderr', content: `[a message node ${ref.node} sent that this controller cannot read was left out]` } };
}
/** One agent pane's state as `pane_states` answers it. */
const paneStateInfoSchema = resultSchemas.pane_states.shape.states.element;
/** A session log as `log_sessions` lists it. */
const sessionInfoSchema = resultSchemas.log_sessions.shape.sessions.element;
/** How long a node has to answer a listing (a node that does not is left out of it) and any other call. */
const LIST_TIMEOUT_MS = 5_000;
const CALL_TIMEOUT_MS = 10_000;
/** A wait on a node's screen: its own time limit, and this much more for the network. */
const WAIT_MARGIN_MS = 5_000;
const DEFAULT_WAIT_MS = 30_000;
/** An approval's answer: the agent pane settles the prompt and waits on each key's effect (seconds each on a loaded machine). */
const ANSWER_TIMEOUT_MS = 30_000;
/** A prompt typed into a node's agent: the agent settles first and each step is confirmed on its screen. */
const PROMPT_TIMEOUT_MS = 60_000;
/** A kill's wait for the program to end when the caller gave no grace (the node's own default is shorter). */
const KILL_GRACE_MS = 10_000;
/** Output held while an answer is out, at most: past it the held frames are dropped and the screen drawn again after the answer. */
const MAX_HELD_CHARS = 4 * 1024 * 1024;

export interface ClusterPanesOptions {
  nc: NatsConnection;
  /** The live nodes' names, now. */
  nodes: () => readonly string[];
  logger: Logger;
  /** Tests: how often attachments are renewed. */
  keepEveryMs?: number;
}


export class ClusterPanes implements RemotePanes {
  /** The attached terminals and subscriptions, renewed together. */
  private readonly attachments = new Set<HeldOnNode>();
  private keepTimer: NodeJS.Timeout | undefined;
  private readonly createdEmitter = new Emitter<{ pane_id: string; title: string }>();
  readonly onPaneCreated = this.createdEmitter.event;
  private readonly exitedEmitter = new Emitter<NodePaneExit>();
  readonly onPaneExited = this.exitedEmitter.event;
  private readonly stateEmitter = new Emitter<NodePaneState>();
  readonly onPaneState = this.stateEmitter.event;
  private readonly nodeStates = new NodeStates((state) => this.stateEmitter.fire(state));
  private readonly told: Subscription[];
  private closed = false;

  constructor(private readonly options: ClusterPanesOptions) {
    this.scheduleKeep();
    this.told = [
      this.hear(PANE_CREATED_ANY_NODE, PaneCreatedSchema, (created) => this.createdEmitter.fire(created)),
      this.hear(PANE_EXITED_ANY_NODE, PaneExitedSchema, (exited) => this.exitedEmitter.fire(exited)),
      this.hear(PANE_STATE_ANY_NODE, PaneStateSchema, (state) => this.nodeStates.pushed(state)),
    ];
  }

  list(): Promise<PaneInfo[]> {
    return this.fromEveryNode('panes', async (node, client) => {
      const { panes } = await client.call('list', {});
      return panes.flatMap((raw) => {
        const info = paneInfoSchema.safeParse(raw);
        if (!info.success || !ListedPaneSchema.safeParse(raw).success) return [];
        return [{ ...info.data, pane_id: nodePaneId({ node, pane: info.data.pane_id }), node }];
      });
    });
  }

  logSessions(): Promise<SessionInfo[]> {
    return this.fromEveryNode('session logs', async (node, client) => {
      const { sessions } = await client.call('log_sessions', {});
      return sessions.flatMap((raw) => {
        const info = sessionInfoSchema.safeParse(raw);
        if (!info.success || !ListedSessionSchema.safeParse(raw).success) return [];
        return [{ ...info.data, session_id: nodePaneId({ node, pane: info.data.session_id }), node }];
      });
    });
  }

  /**
   * What every live node lists, asked at once: a node that does not answer in time (or an older
   * one that lists no such thing) adds nothing. Said at debug: the dashboard lists often, and a node
   * that does not answer is said by its lease going.
   */
  private async fromEveryNode<T>(what: string, ask: (node: string, client: NodePaneClient) => Promise<T[]>): Promise<T[]> {
    const listed = await Promise.all(
      this.options.nodes().map(async (node) => {
        try {
          return await ask(node, this.client(node, LIST_TIMEOUT_MS));
        } catch (err) {
          this.options.logger.debug(`a node did not list its ${what}`, { node, error: errorMessage(err) });
          return [];
        }
      }),
    );
    return listed.flat();
  }

  async states(): Promise<Result<'pane_states'>['states']> {
    const told = await Promise.all(this.options.nodes().map(async (node) => (await this.statesOf(node)) ?? []));
    return told.flat();
  }

  /** `node`'s agent panes' states now, named `<node>/<pane>`; undefined when it does not answer in time (logged). */
  private async statesOf(node: string): Promise<Result<'pane_states'>['states'] | undefined> {
    try {
      const { states } = await this.client(node, LIST_TIMEOUT_MS).call('states', {});
      return states.flatMap((raw) => {
        const state = paneStateInfoSchema.safeParse(raw);
        if (!state.success || !ListedPaneSchema.safeParse(raw).success) return [];
        return [{ ...state.data, pane_id: nodePaneId({ node, pane: state.data.pane_id }) }];
      });
    } catch (err) {
      this.options.logger.debug('a node did not tell its panes’ states', { node, error: errorMessage(err) });
      return undefined;
    }
  }

  /** Every node's states looked at: a change it told that never came is told now (NodeStates). */
  private async lookAtStates(): Promise<void> {
    const nodes = this.options.nodes();
    this.nodeStates.keepNodes(nodes);
    const mark = this.nodeStates.mark();
    await Promise.all(
      nodes.map(async (node) => {
        const states = await this.statesOf(node);
        if (states && !this.closed) this.nodeStates.looked(node, states, mark);
      }),
    );
  }

  async create(node: string, params: Omit<Params<'create_pane'>, 'node'>): Promise<Result<'create_pane'>> {
    if (this.closed) throw new SwitchboardError('SHUTTING_DOWN', 'the controller is stopping');
    const { result } = await this.client(node, CALL_TIMEOUT_MS)
      .call('create', { params })
      .catch((err: unknown) => {
        // A node older than panes opened from the controller knows no such operation.
        if (err instanceof SwitchboardError && err.code === 'METHOD_NOT_FOUND') throw new SwitchboardError('INVALID_PARAMS', `node ${node} cannot open panes for its controller (it runs an older Switchboard)`, { node });
        throw err;
      });
    const checked = resultSchemas.create_pane.safeParse(result);
    if (!checked.success || !ListedPaneSchema.safeParse(result).success) throw new SwitchboardError('INTERNAL_ERROR', `node ${node} answered create_pane with a result that does not fit`, { node });
    return { ...checked.data, pane_id: nodePaneId({ node, pane: checked.data.pane_id }) };
  }

  async call<M extends NodePaneMethod>(ref: NodePaneRef, method: M, params: Params<M>, signal?: AbortSignal): Promise<Result<M>> {
    const { result } = await this.callOnNode(ref, method, params, signal);
    const checked = resultSchemas[method].safeParse(result);
    if (!checked.success) throw new SwitchboardError('INTERNAL_ERROR', `node ${ref.node} answered ${method} with a result that does not fit`, { node: ref.node, method });
    return checked.data as Result<M>;
  }

  /**
   * Asks the node; a wait is named, so that when its caller goes (`signal`) the node is told to
   * stop it instead of holding it until its time limit. Other methods run to their end: a kill or
   * a prompt is not taken back half-way.
   */
  private callOnNode(ref: NodePaneRef, method: NodePaneMethod, params: Params<NodePaneMethod>, signal: AbortSignal | undefined): Promise<{ result: unknown }> {
    const client = this.client(ref.node, timeoutFor(method, params));
    if (method !== 'wait_for') return client.call('call', { method, params });
    return this.stoppable(ref, signal, (call) => client.call('call', { method, params, ...(call !== undefined && { call }) }));
  }

  async readLog(ref: NodePaneRef, read: { after_seq?: number; limit: number; wait_ms: number }, signal?: AbortSignal): Promise<NodeLogPage> {
    if (this.closed) throw new SwitchboardError('SHUTTING_DOWN', 'the controller is stopping');
    const client = this.client(ref.node, read.wait_ms > 0 ? read.wait_ms + WAIT_MARGIN_MS : CALL_TIMEOUT_MS);
    const params = { session_id: ref.pane, limit: read.limit, wait_ms: read.wait_ms, ...(read.after_seq !== undefined && { after_seq: read.after_seq }) };
    try {
      const page = read.wait_ms > 0 ? await this.stoppable(ref, signal, (call) => client.call('log_read', { ...params, ...(call !== undefined && { call }) })) : await client.call('log_read', params);
      return { ...page, messages: page.messages.map((raw) => readableMessage(raw, ref)) };
    } catch (err) {
      // The node names the session by its own id: said here as the caller named it.
      if (err instanceof SwitchboardError && err.code === 'SESSION_NOT_FOUND') throw new SwitchboardError('SESSION_NOT_FOUND', `no session ${nodePaneId(ref)} on node ${ref.node}`, { session_id: nodePaneId(ref), node: ref.node });
      throw err;
    }
  }

  /**
   * A call that waits on the node, named when it has a caller who may go (`signal`): when that
   * signal aborts, the node is told to stop it (`cancel`).
   */
  private stoppable<T>(ref: NodePaneRef, signal: AbortSignal | undefined, send: (call: string | undefined) => Promise<T>): Promise<T> {
    if (signal === undefined) return send(undefined);
    const name = randomBytes(12).toString('hex');
    const cancel = (): void => {
      this.client(ref.node, CALL_TIMEOUT_MS)
        .call('cancel', { call: name })
        .catch((err: unknown) => this.options.logger.debug('a wait on a node was not stopped', { node: ref.node, error: errorMessage(err) }));
    };
    // The call is on its way before a cancel can be (one connection keeps their order).
    const answered = send(name);
    if (signal.aborted) cancel();
    else signal.addEventListener('abort', cancel, { once: true });
    return answered.finally(() => signal.removeEventListener('abort', cancel));
  }

  terminal(ref: NodePaneRef): PaneTerminal {
    return {
      paneId: nodePaneId(ref),
      attach: (sink) => {
        const attachment = new RemoteAttachment(ref, this.client(ref.node, CALL_TIMEOUT_MS), this.options.nc, sink, this.options.logger, () => this.attachments.delete(attachment));
        // Said to the terminal, not thrown: the dashboard's socket is open by now.
        if (this.closed) queueMicrotask(() => attachment.fail({ code: 'SHUTTING_DOWN', message: 'the controller is stopping' }));
        else this.attachments.add(attachment);
        return attachment;
      },
    };
  }

  async subscribe(ref: NodePaneRef, options: { events: readonly NodePaneEvent[]; replay: boolean }, listener: NodePaneListener): Promise<NodePaneFollow> {
    if (this.closed) throw new SwitchboardError('SHUTTING_DOWN', 'the controller is stopping');
    let held: RemoteSubscription | undefined;
    const subscription = await RemoteSubscription.open(ref, options, {
      client: this.client(ref.node, CALL_TIMEOUT_MS),
      nc: this.options.nc,
      listener,
      logger: this.options.logger,
      forget: () => {
        if (held) this.attachments.delete(held);
      },
    });
    // The controller stopped while it opened (read again: the await let close() run): ended at once,
    // told to the caller, and the node told to let go.
    if (this.isClosed()) {
      subscription.fail({ code: 'SHUTTING_DOWN', message: 'the controller is stopping' });
      this.client(ref.node, CALL_TIMEOUT_MS).call('detach', { attachment: subscription.id }).catch(() => undefined);
    }
    // Renewed from now on, unless it ended while it opened (the node told so at once).
    if (!subscription.ended) {
      held = subscription;
      this.attachments.add(subscription);
    }
    return subscription;
  }

  private isClosed(): boolean {
    return this.closed;
  }

  /** Ends every attachment and subscription (before the NATS connection closes). */
  close(): void {
    this.closed = true;
    clearTimeout(this.keepTimer);
    for (const subscription of this.told) subscription.unsubscribe();
    this.createdEmitter.dispose();
    this.exitedEmitter.dispose();
    this.stateEmitter.dispose();
    for (const attachment of this.attachments) attachment.dispose();
  }

  /**
   * What every node tells on `subjects` (`sb.pane.*.<what>`), checked by `schema`, its pane named
   * `<node>/<pane>`: the node is the subject's own token, which its NATS user can publish under only
   * for itself.
   */
  private hear<T extends { pane_id: string }>(subjects: string, schema: z.ZodType<T>, tell: (told: T) => void): Subscription {
    return subscribeToNodes(this.options.nc, subjects, (message) => {
      const node = message.subject.split('.')[2] ?? '';
      const told = schema.safeParse(parseJson(message.data));
      if (node === '' || !told.success) return;
      tell({ ...told.data, pane_id: nodePaneId({ node, pane: told.data.pane_id }) });
    });
  }

  private client(node: string, timeoutMs: number): NodePaneClient {
    return new ControlClient(this.options.nc, NODE_PANE_OPS, `node ${node}`, () => nodePanesSubject(node), timeoutMs);
  }

  /** The next round of renewals and of looks at the nodes' states, once the last one is done (a slow node never gets two at once). */
  private scheduleKeep(): void {
    if (this.closed) return;
    this.keepTimer = setTimeout(() => {
      void Promise.all([this.keep(), this.lookAtStates()]).finally(() => this.scheduleKeep());
    }, this.options.keepEveryMs ?? KEEP_EVERY_MS);
    this.keepTimer.unref();
  }

  /** Renews every attachment, one request per node. */
  private async keep(): Promise<void> {
    const byNode = new Map<string, HeldOnNode[]>();
    for (const attachment of this.attachments) {
      const held = byNode.get(attachment.node);
      if (held) held.push(attachment);
      else byNode.set(attachment.node, [attachment]);
    }
    await Promise.all(
      [...byNode].map(async ([node, held]) => {
        try {
          const { gone, sent } = await this.client(node, CALL_TIMEOUT_MS).call('keep', { attachments: held.map((a) => a.id) });
          for (const attachment of held) {
            if (gone.includes(attachment.id)) attachment.fail({ code: 'PANE_NOT_FOUND', message: `node ${node} no longer holds this ${attachment.what} of pane ${attachment.paneId}` });
            else attachment.kept(sent[attachment.id]);
          }
        } catch (err) {
          for (const attachment of held) attachment.keepFailed(err);
        }
      }),
    );
  }
}

/**
 * A terminal attached to a node's pane. States: `joining` (subscribed, the attach call out, frames
 * held), `live` (frames played in order), `redrawing` (the redraw call out, frames held), `ended`.
 * Frames held while a call is out are played after its answer, from the first one it does not hold.
 */
class RemoteAttachment extends HeldOnNode implements TerminalAttachment {
  readonly paneId: string;
  readonly what = 'attached terminal';
  private state: 'joining' | 'live' | 'redrawing' | 'ended' = 'joining';
  /** The last frame played (or held in what the node last answered). */
  private seq = 0;
  private held: OutputFrame[] = [];
  private heldChars = 0;
  /** Held frames were dropped (too many while an answer was out): the screen is drawn again once it comes. */
  private heldOverflowed = false;
  /** The terminal was told the program exited: an answer that says so again (a redraw's) tells it no more. */
  private exitTold = false;
  private readonly subscription: Subscription;

  constructor(
    private readonly ref: NodePaneRef,
    client: NodePaneClient,
    nc: NatsConnection,
    private readonly sink: TerminalSink,
    private readonly logger: Logger,
    private readonly forget: () => void,
  ) {
    super(client);
    this.paneId = nodePaneId(ref);
    // Subscribed before the attach call goes out: no frame can come before the subscription.
    this.subscription = subscribeToNodes(nc, paneOutputSubject(ref.node, this.id), (message) => this.frame(message.data), { failed: (err) => this.fail({ code: 'CONNECTION_FAILED', message: errorMessage(err) }) });
    this.client.call('attach', { pane_id: ref.pane, attachment: this.id }).then(
      (opened) => {
        if (this.state !== 'joining') return;
        this.sink.output(opened.replay);
        if (opened.exit) this.tellExit(opened.exit);
        this.resume(opened.seq);
      },
      (err: unknown) => this.fail(asFailure(err)),
    );
  }

  get node(): string {
    return this.ref.node;
  }

  write(data: Buffer): void {
    if (this.state === 'ended') return;
    // In pieces a NATS message takes; the node applies them in the order sent.
    for (let at = 0; at < data.length; at += INPUT_CHUNK_BYTES) {
      const piece = data.subarray(at, at + INPUT_CHUNK_BYTES);
      this.client.call('input', { attachment: this.id, data: piece.toString('base64') }).catch((err: unknown) => this.logger.warn('keystrokes for a node pane were not taken', { pane_id: this.paneId, error: errorMessage(err) }));
    }
  }

  resize(cols: number, rows: number): void {
    // Checked here first, as a local pane's resize is: a bad size is the caller's INVALID_PARAMS at once.
    const checked = paramSchemas.resize.safeParse({ pane_id: this.paneId, cols, rows });
    if (!checked.success) throw new SwitchboardError('INVALID_PARAMS', `pane size ${cols}x${rows} is out of range`, { cols, rows });
    if (this.state === 'ended') return;
    this.client.call('resize', { attachment: this.id, cols, rows }).catch((err: unknown) => this.logger.debug('a node pane was not resized', { pane_id: this.paneId, error: errorMessage(err) }));
  }

  /** For a terminal the caller reset (the pane socket's repaint). */
  redraw(): void {
    this.startRedraw(false);
  }

  get ended(): boolean {
    return this.state === 'ended';
  }

  protected keptSent(sent: number | undefined): void {
    if (this.state === 'live' && sent !== undefined && sent > this.seq) {
      this.logger.debug('the last frames of a node pane went missing; redrawing', { pane_id: this.paneId, played: this.seq, sent });
      this.startRedraw(true);
    }
  }

  protected tellEnded(error: { code: string; message: string }): void {
    this.sink.fail(error);
  }

  /**
   * Asks the node for the screen as it is now; frames are held till it answers. One at a time: a
   * second asked while one is out is answered by it (its screen comes after the caller's reset).
   * `reset`: the terminal is told to reset first (the attachment's own redraw, after a loss).
   */
  private startRedraw(reset: boolean): void {
    if (this.state !== 'live') return;
    this.state = 'redrawing';
    this.client.call('redraw', { attachment: this.id }).then(
      (drawn) => {
        if (this.state !== 'redrawing') return;
        if (reset) this.sink.reset();
        this.sink.output(drawn.screen);
        // The exit's own frame may be among those the answer holds (dropped here), or lost.
        if (drawn.exit) this.tellExit(drawn.exit);
        this.resume(drawn.seq);
      },
      (err: unknown) => this.fail(asFailure(err)),
    );
  }

  private tellExit(exit: { exit_code: number | null; signal: string | null }): void {
    if (this.exitTold) return;
    this.exitTold = true;
    this.sink.exit(exit);
  }

  protected end(): void {
    this.state = 'ended';
    this.held = [];
    this.heldChars = 0;
    this.subscription.unsubscribe();
    this.forget();
  }

  /** After an answer that holds the output up to frame `seq`: the frames held since, from the next one, then live. */
  private resume(seq: number): void {
    this.seq = seq;
    this.state = 'live';
    const held = this.held;
    const overflowed = this.heldOverflowed;
    this.held = [];
    this.heldChars = 0;
    this.heldOverflowed = false;
    if (overflowed) {
      this.startRedraw(true);
      return;
    }
    for (const frame of held) if (frame.seq > seq) this.play(frame);
  }

  private frame(data: Uint8Array): void {
    if (this.state === 'ended') return;
    let frame: OutputFrame;
    try {
      frame = OutputFrameSchema.parse(parseJson(data));
    } catch {
      this.logger.warn('a node sent a pane frame that is not one', { pane_id: this.paneId });
      return;
    }
    if (this.state !== 'live') this.hold(frame);
    else this.play(frame);
  }

  private hold(frame: OutputFrame): void {
    if (this.heldOverflowed) return;
    this.heldChars += frame.output?.length ?? 0;
    if (this.heldChars <= MAX_HELD_CHARS) {
      this.held.push(frame);
      return;
    }
    // A pane flooding while an answer is slow: what is held is dropped, and a redraw after the answer
    // makes it good (its answer says whether the program exited meanwhile).
    this.held = [];
    this.heldChars = 0;
    this.heldOverflowed = true;
  }

  private play(frame: OutputFrame): void {
    if (this.state !== 'live' || frame.seq <= this.seq) return;
    if (frame.seq !== this.seq + 1) {
      // A frame went missing on the way: what the terminal shows is no longer the pane's. Redrawn from the screen now.
      this.logger.debug('a node pane frame went missing; redrawing', { pane_id: this.paneId, expected: this.seq + 1, got: frame.seq });
      this.startRedraw(true);
      this.hold(frame);
      return;
    }
    this.seq = frame.seq;
    if (frame.output !== undefined) this.sink.output(frame.output);
    if (frame.exit) this.tellExit(frame.exit);
    if (frame.ended) this.fail(frame.ended);
  }
}

/** How long `method` may take on its node, and a little more for the network. */
function timeoutFor<M extends NodePaneMethod>(method: M, params: Params<M>): number {
  if (method === 'wait_for') return ((params as Params<'wait_for'>).timeout_ms ?? DEFAULT_WAIT_MS) + WAIT_MARGIN_MS;
  if (method === 'answer_approval') return ANSWER_TIMEOUT_MS;
  // A prompt waits for its agent to take it (a dialog in the way answered first).
  if (method === 'send_prompt') return PROMPT_TIMEOUT_MS;
  if (method === 'kill' || method === 'remove') return CALL_TIMEOUT_MS + ((params as Params<'kill'>).grace_ms ?? KILL_GRACE_MS);
  if (method === 'send_keys') {
    const keys = params as Params<'send_keys'>;
    return CALL_TIMEOUT_MS + keys.keys.length * (keys.interval_ms ?? 0);
  }
  return CALL_TIMEOUT_MS;
}

