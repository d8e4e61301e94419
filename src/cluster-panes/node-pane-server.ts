/**
 * A node's side of its panes on other hosts: answers the pane operations on `sb.node.<name>.panes`
 * with the node's own panes (the same methods and checks a daemon's panes answer with), and keeps
 * the terminals the controller attached: each one's output goes out on its own subject in numbered
 * frames, coalesced (one frame for what a burst of output gave, up to FRAME_MAX_CHARS), and an
 * attachment the controller stops renewing is ended, so a controller that died holds nothing here.
 */
import { homedir } from 'node:os';
import path from 'node:path';
import type { NatsConnection } from '@nats-io/transport-node';
import { DisposableStore, type Disposable } from '../core/disposable.js';
import { errorMessage, SwitchboardError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import type { Params, Result } from '../protocol/methods.js';
import { approvalInfo, checkedParams, findPaneTerminal, logPage, stateChangeInfo, localPaneMethods, paneInfo, sessionInfo, type NodePaneMethod, type PaneContext, type PaneTerminal, type Services, type TerminalAttachment } from '../api/index.js';
import { maxPayload, nodePanesSubject, paneCreatedSubject, paneExitedSubject, paneOutputSubject, paneStateSubject, serveControl, type ControlHandlers } from '../cluster/index.js';
import { NodeSubscription } from './node-subscription.js';
import { KEEP_EVERY_MS, KEEP_FOR_MS, NODE_PANE_OPS, type OutputFrame } from './pane-wire.js';

/** Attached terminals at once, over all the node's panes (a controller that leaks them is refused, not the node's memory). */
const MAX_ATTACHMENTS = 64;
/** Subscriptions to the node's panes at once (each is one PaneSubscription: small). */
const MAX_SUBSCRIPTIONS = 256;
/** Named calls (waits a controller may stop) under way at once. */
const MAX_NAMED_CALLS = 1024;
/** Log reads waiting for a message at once (each holds one listener on its log): past it, a read answers at once. */
const MAX_LOG_WAITS = 256;
/** Output held for one frame before it goes out: a frame per burst, not per chunk the PTY gave. */
const FRAME_DELAY_MS = 4;
const FRAME_MAX_CHARS = 64 * 1024;

/** One of the node's panes, and the agent in one. */
type NodePane = ReturnType<PaneContext['panes']['get']>;
type NodeAgent = NonNullable<ReturnType<PaneContext['agentPanes']['get']>>;
type NodeLogs = Services['logs']['logs'];
type NodeLog = ReturnType<NodeLogs['get']>;

/** The approval the agent waits on, as `pane_states` and `state` notifications give it. */
function approvalOf(agent: NodeAgent): ReturnType<typeof approvalInfo> {
  return approvalInfo(agent.approval?.prompt ?? null, agent.approval?.request.id ?? null);
}

export interface NodePaneServerOptions {
  nc: NatsConnection;
  /** The node's name (its subjects). */
  node: string;
  panes: PaneContext['panes'];
  /** The agents in those panes (a terminal run's CLI): its approval answered by a person on the controller. */
  agentPanes: PaneContext['agentPanes'];
  /** Each pane's log (a daemon's LogService's, here the node's), read by the controller's log methods. */
  logs: NodeLogs;
  /**
   * Whether the controller may open panes here (`switchboard node --panes`), and where: a folder
   * the node's policy holds (its sandbox) or the reason it does not. None: every `create` is FORBIDDEN.
   */
  openPanes?: { defaultCwd: string; checkFolder: (cwd: string) => { decision: 'allow' | 'deny'; reason: string } };
  logger: Logger;
  /** Tests: how long an attachment not renewed is kept. */
  keepForMs?: number;
}

/**
 * One attached terminal on this node. States: `attaching` (the attach call is taking the replay:
 * output goes into it), `live` (output goes out in frames), `redrawing` (the redraw call is taking
 * the screen now), `ended`.
 */
class NodeAttachment implements Disposable {
  private state: 'attaching' | 'live' | 'redrawing' | 'ended' = 'attaching';
  private seq = 0;
  private pending = '';
  private flushTimer: NodeJS.Timeout | undefined;
  private taken = '';
  private exited: { exit_code: number | null; signal: string | null } | undefined;
  private readonly attachment: TerminalAttachment;
  lastKept: number;

  constructor(
    /** The pane's id here. */
    readonly paneId: string,
    private readonly subject: string,
    private readonly publish: (subject: string, frame: OutputFrame) => void,
    terminal: PaneTerminal,
    now: number,
  ) {
    this.lastKept = now;
    this.attachment = terminal.attach({
      output: (text) => this.output(text),
      exit: (exit) => {
        this.exited = exit;
        if (this.state !== 'attaching') {
          // The program's last output goes before its exit, as a local pane gives them.
          this.flush();
          this.send({ exit });
        }
      },
      fail: (error) => this.end(error),
      // A pane here never asks for one (its redraw is always asked for).
      reset: () => undefined,
    });
    this.state = 'live';
  }

  /** The number of the last frame sent. */
  get sent(): number {
    return this.seq;
  }

  /** What the attach call answers: the replay, the exit if the program had ended, and the last frame number (none yet). */
  opened(): { replay: string; seq: number; exit?: { exit_code: number | null; signal: string | null } } {
    const replay = this.taken;
    this.taken = '';
    return { replay, seq: this.seq, ...(this.exited ? { exit: this.exited } : {}) };
  }

  redraw(): { screen: string; seq: number; exit?: { exit_code: number | null; signal: string | null } } {
    // What output is held now came before the screen is read: it goes out first, and the screen holds it.
    this.flush();
    this.state = 'redrawing';
    try {
      this.attachment.redraw();
    } finally {
      this.state = 'live';
    }
    const screen = this.taken;
    this.taken = '';
    return { screen, seq: this.seq, ...(this.exited ? { exit: this.exited } : {}) };
  }

  write(data: Buffer): void {
    this.attachment.write(data);
  }

  resize(cols: number, rows: number): void {
    this.attachment.resize(cols, rows);
  }

  get ended(): boolean {
    return this.state === 'ended';
  }

  /** Ends the attachment, telling the controller why when it did not ask for it. */
  end(why?: { code: string; message: string }): void {
    if (this.state === 'ended') return;
    this.flush();
    this.state = 'ended';
    if (why) this.send({ ended: why });
    this.attachment.dispose();
  }

  dispose(): void {
    this.end();
  }

  private output(text: string): void {
    if (this.state === 'attaching' || this.state === 'redrawing') {
      this.taken += text;
      return;
    }
    if (this.state === 'ended') return;
    this.pending += text;
    if (this.pending.length >= FRAME_MAX_CHARS) this.flush();
    else this.flushTimer ??= setTimeout(() => this.flush(), FRAME_DELAY_MS);
  }

  private flush(): void {
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    while (this.pending.length > 0) {
      const output = this.pending.slice(0, FRAME_MAX_CHARS);
      this.pending = this.pending.slice(output.length);
      this.send({ output });
    }
  }

  private send(frame: Omit<OutputFrame, 'seq'>): void {
    if (this.state === 'ended' && frame.ended === undefined) return;
    this.seq += 1;
    this.publish(this.subject, { seq: this.seq, ...frame });
  }
}

/** Serves the node's panes until disposed (every attachment ended then). */
export class NodePaneServer implements Disposable {
  /** The attached terminals and the subscriptions, by the id their controller gave them (kept and ended alike). */
  private readonly attachments = new Map<string, NodeAttachment | NodeSubscription>();
  private readonly disposables = new DisposableStore();
  private readonly keepForMs: number;
  /** Each pane's listeners that tell the controllers of its program's end and its agent's states. */
  private readonly paneListeners = new Map<string, DisposableStore>();
  /** Ends the waits on the node's screens (wait_for) when the server stops. */
  private readonly stopping = new AbortController();
  /** Calls the controller named so it can stop them (a wait whose caller has gone), by name. */
  private readonly namedCalls = new Map<string, AbortController>();
  /** Log reads waiting for a message now. */
  private logWaits = 0;

  constructor(private readonly options: NodePaneServerOptions) {
    this.keepForMs = options.keepForMs ?? KEEP_FOR_MS;
    const { nc, node, logger } = options;
    this.disposables.add(serveControl({ nc, subject: nodePanesSubject(node), ops: NODE_PANE_OPS, handlers: this.handlers(), logger: logger.child({ component: 'node-panes' }) }));
    // The controllers' dashboards list a new pane when told (the listing itself is asked of the node).
    this.disposables.add(
      options.panes.onPaneCreated((pane) => {
        this.publish(paneCreatedSubject(node), { pane_id: pane.id, title: pane.title });
        this.tellAbout(pane);
      }),
    );
    for (const pane of options.panes.list()) this.tellAbout(pane);
    // A pane gone (its run ended and took it): its terminals are told, and their places freed.
    this.disposables.add(
      options.panes.onPaneRemoved((pane) => {
        this.paneListeners.get(pane.id)?.dispose();
        this.paneListeners.delete(pane.id);
        this.endAttachmentsOf(pane.id);
      }),
    );
    const sweep = setInterval(() => this.sweep(), Math.min(KEEP_EVERY_MS, this.keepForMs));
    sweep.unref();
    this.disposables.add({ dispose: () => clearInterval(sweep) });
  }

  dispose(): void {
    this.stopping.abort(new SwitchboardError('SHUTTING_DOWN', `node ${this.options.node} is stopping`));
    for (const call of this.namedCalls.values()) call.abort(this.stopping.signal.reason);
    for (const attachment of this.attachments.values()) attachment.end({ code: 'SHUTTING_DOWN', message: `node ${this.options.node} is stopping` });
    this.attachments.clear();
    for (const listeners of this.paneListeners.values()) listeners.dispose();
    this.paneListeners.clear();
    this.disposables.dispose();
  }

  /**
   * What the controllers' lists of every pane are told of a pane: its program's end, and each
   * state its agent moves to (once: a controller that lost one finds it by asking `states`).
   */
  private tellAbout(pane: NodePane): void {
    const { node, agentPanes } = this.options;
    const listeners = new DisposableStore();
    this.paneListeners.set(pane.id, listeners);
    if (pane.alive) listeners.add(pane.onExit((exit) => this.publish(paneExitedSubject(node), { pane_id: pane.id, exit_code: exit.exitCode, signal: exit.signal })));
    // AgentPanes was made before this server, so a new pane's agent is there by the time its creation is heard here.
    const agent = agentPanes.get(pane.id);
    if (!agent) return;
    listeners.add(
      agent.onState((change) => {
        this.publish(paneStateSubject(node), stateChangeInfo(pane.id, change, change.state === 'waiting_approval' ? approvalOf(agent) : null));
      }),
    );
  }

  /** The node's agent panes' states now, as a daemon's `pane_states` gives its own. */
  private states(): { states: Record<string, unknown>[] } {
    const { panes, agentPanes } = this.options;
    return {
      states: panes.list().flatMap((pane) => {
        const agent = agentPanes.get(pane.id);
        if (!agent) return [];
        return [{ pane_id: pane.id, state: agent.tracker.state.state, approval: approvalOf(agent) }];
      }),
    };
  }

  private handlers(): ControlHandlers<typeof NODE_PANE_OPS> {
    const { panes } = this.options;
    return {
      list: () => Promise.resolve({ panes: panes.list().map((pane) => paneInfo(pane)) }),
      states: () => Promise.resolve(this.states()),
      call: async ({ method, params, call }) => ({ result: await this.call(method, params, call) }),
      create: ({ params }) => Promise.resolve({ result: this.create(params) }),
      log_read: ({ call, ...read }) => this.named(call, (signal) => this.readLog(read, signal)),
      log_sessions: () => Promise.resolve({ sessions: this.options.logs.list().map(sessionInfo) }),
      cancel: ({ call }) => {
        this.namedCalls.get(call)?.abort();
        return Promise.resolve({});
      },
      attach: ({ pane_id, attachment }) => Promise.resolve(this.attach(pane_id, attachment)),
      redraw: ({ attachment }) => Promise.resolve(this.attachment(attachment).redraw()),
      subscribe: ({ pane_id, attachment, events, replay }) => {
        this.take(attachment, 'subscription');
        const subscription = new NodeSubscription(pane_id, paneOutputSubject(this.options.node, attachment), (subject, frame) => this.publish(subject, frame), panes, { events, replay }, maxPayload(this.options.nc) / 2, Date.now());
        this.attachments.set(attachment, subscription);
        return Promise.resolve({ offset: subscription.outputOffset });
      },
      repaint: ({ attachment }) => {
        const held = this.attachments.get(attachment);
        if (!(held instanceof NodeSubscription) || held.ended) throw new SwitchboardError('PANE_NOT_FOUND', `no subscription ${attachment} on node ${this.options.node}`, { attachment });
        held.repaint();
        return Promise.resolve({ offset: held.outputOffset, seq: held.sent });
      },
      input: ({ attachment, data }) => {
        this.attachment(attachment).write(Buffer.from(data, 'base64'));
        return Promise.resolve({});
      },
      resize: ({ attachment, cols, rows }) => {
        this.attachment(attachment).resize(cols, rows);
        return Promise.resolve({});
      },
      keep: ({ attachments }) => {
        const now = Date.now();
        const gone: string[] = [];
        const sent: Record<string, number> = {};
        for (const id of attachments) {
          const held = this.attachments.get(id);
          if (held && !held.ended) {
            held.lastKept = now;
            sent[id] = held.sent;
          } else gone.push(id);
        }
        return Promise.resolve({ gone, sent });
      },
      detach: ({ attachment }) => {
        this.attachments.get(attachment)?.end();
        this.attachments.delete(attachment);
        return Promise.resolve({});
      },
    };
  }

  /** A pane method, checked as a daemon checks it (the controller checked it too: a node trusts no caller's checks). */
  private call(method: NodePaneMethod, params: Record<string, unknown>, name: string | undefined): Promise<unknown> {
    const checked = checkedParams(method, params) as never;
    // A wait ends by its own time limit (the controller's request waits that long and a little
    // more), when the node stops, or, named, when the controller says its caller has gone.
    return this.named(name, (signal) => (localPaneMethods[method] as (ctx: PaneContext, p: never) => unknown)({ panes: this.options.panes, agentPanes: this.options.agentPanes, signal }, checked));
  }

  /** A pane opened for the controller, as create_pane opens one on a daemon, when the node allows it. */
  private create(params: Record<string, unknown>): Result<'create_pane'> {
    const { node, panes, openPanes } = this.options;
    if (!openPanes) throw new SwitchboardError('FORBIDDEN', `node ${node} opens no panes for its controller (its person starts it with switchboard node --panes)`, { node });
    const p = checkedParams('create_pane', params) as Params<'create_pane'>;
    // A controller checks this too; a node trusts no caller's checks.
    if (p.agent !== undefined || p.node !== undefined) throw new SwitchboardError('INVALID_PARAMS', `node ${node} opens a program in a pane; an agent starts as a run (run_submit with backend, prompt, node and mode "pty")`, { node });
    const cwd = nodeFolder(p.cwd, openPanes.defaultCwd);
    const verdict = openPanes.checkFolder(cwd);
    if (verdict.decision === 'deny') throw new SwitchboardError('FORBIDDEN', `node ${node}'s policy: ${verdict.reason}`, { node, cwd });
    const pane = panes.create({ command: p.command, argv: p.argv, cwd, title: p.title, env: p.env, cols: p.cols, rows: p.rows, scrollbackRows: p.scrollback });
    return { pane_id: pane.id, title: pane.title, pid: pane.pid };
  }

  /** Runs `run` under the node's stopping signal, and, named, under its own, which a `cancel` of that name aborts. */
  private async named<T>(name: string | undefined, run: (signal: AbortSignal) => T | Promise<T>): Promise<T> {
    if (name === undefined) return run(this.stopping.signal);
    if (this.namedCalls.has(name)) throw new SwitchboardError('CONFLICT', `call ${name} is under way already`, { call: name });
    if (this.namedCalls.size >= MAX_NAMED_CALLS) {
      // Past the bound it still runs, to its own time limit, as before calls were named.
      this.options.logger.debug('a named call runs unnamed: the node holds as many as it names', { call: name, limit: MAX_NAMED_CALLS });
      return run(this.stopping.signal);
    }
    // Its own controller, which dispose() aborts too: AbortSignal.any would tie each call to the
    // long-lived stopping signal for good (Node 20 keeps every signal made from it).
    const stop = new AbortController();
    if (this.stopping.signal.aborted) stop.abort(this.stopping.signal.reason);
    this.namedCalls.set(name, stop);
    try {
      return await run(stop.signal);
    } finally {
      this.namedCalls.delete(name);
    }
  }

  /**
   * A page of a session's log, after waiting (at most `wait_ms`) for a message past `after_seq`
   * when there is none yet and the log goes on. Answers within half the server's max_payload.
   */
  private async readLog(read: { session_id: string; after_seq?: number | undefined; limit: number; wait_ms: number }, signal: AbortSignal): Promise<ReturnType<typeof logPage> & { waited: boolean }> {
    const log = this.options.logs.get(read.session_id);
    const after = read.after_seq ?? log.store.stats().lastSeq;
    let waited = true;
    if (read.wait_ms > 0 && !log.store.finished && log.store.stats().lastSeq <= after) {
      if (this.logWaits >= MAX_LOG_WAITS) waited = false;
      else {
        this.logWaits += 1;
        try {
          await nextMessage(log, read.wait_ms, signal);
        } finally {
          this.logWaits -= 1;
        }
      }
    }
    return { ...logPage(log, after, read.limit, maxPayload(this.options.nc) / 2), waited };
  }

  /** CONFLICT for an id in use, LIMIT_EXCEEDED past the limit of its kind: checked before a new attached terminal or subscription is made. */
  private take(id: string, kind: 'terminal' | 'subscription'): void {
    if (this.attachments.has(id)) throw new SwitchboardError('CONFLICT', `attachment ${id} exists already`, { attachment: id });
    // Each kind its own limit: subscriptions (a token with `read` can make them) never crowd out the dashboard's terminals.
    const limit = kind === 'terminal' ? MAX_ATTACHMENTS : MAX_SUBSCRIPTIONS;
    const held = [...this.attachments.values()].filter((a) => (a instanceof NodeSubscription) === (kind === 'subscription')).length;
    if (held >= limit) throw new SwitchboardError('LIMIT_EXCEEDED', `node ${this.options.node} holds ${limit} ${kind === 'terminal' ? 'attached terminals' : 'pane subscriptions'} already`, { limit });
  }

  private attach(paneId: string, id: string): ReturnType<NodeAttachment['opened']> {
    this.take(id, 'terminal');
    const terminal = findPaneTerminal({ panes: this.options.panes }, paneId);
    if (!terminal) throw new SwitchboardError('PANE_NOT_FOUND', `pane not found: ${paneId} on node ${this.options.node}`, { pane_id: paneId, node: this.options.node });
    const attachment = new NodeAttachment(paneId, paneOutputSubject(this.options.node, id), (subject, frame) => this.publish(subject, frame), terminal, Date.now());
    this.attachments.set(id, attachment);
    const opened = attachment.opened();
    // A replay the answer could not carry (its JSON past half the server's max_payload): the screen as it is now instead.
    const limit = maxPayload(this.options.nc) / 2;
    if (Buffer.byteLength(JSON.stringify(opened.replay)) <= limit) return opened;
    const drawn = attachment.redraw();
    return { ...opened, replay: drawn.screen, seq: drawn.seq };
  }

  private endAttachmentsOf(paneId: string): void {
    for (const [id, attachment] of this.attachments) {
      if (attachment.paneId !== paneId) continue;
      attachment.end({ code: 'PANE_NOT_FOUND', message: `pane ${paneId} on node ${this.options.node} was removed` });
      this.attachments.delete(id);
    }
  }

  private publish(subject: string, message: unknown): void {
    try {
      this.options.nc.publish(subject, JSON.stringify(message));
    } catch (err) {
      // A closed connection: the controller's renewals fail too, and it ends the attachment.
      this.options.logger.debug('a pane message was not sent', { subject, error: errorMessage(err) });
    }
  }

  private attachment(id: string): NodeAttachment {
    const held = this.attachments.get(id);
    if (!(held instanceof NodeAttachment) || held.ended) throw new SwitchboardError('PANE_NOT_FOUND', `no attachment ${id} on node ${this.options.node}`, { attachment: id });
    return held;
  }

  /** Ends the attachments no controller renewed in time. */
  private sweep(): void {
    const now = Date.now();
    for (const [id, attachment] of this.attachments) {
      if (attachment.ended || now - attachment.lastKept > this.keepForMs) {
        attachment.end({ code: 'TIMEOUT', message: `the attachment was not renewed for ${this.keepForMs} ms` });
        this.attachments.delete(id);
      }
    }
  }
}

/** Resolves at the log's next message, its end, its dropping the listener, `ms` from now, or the signal, whichever is first. */
function nextMessage(log: NodeLog, ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const wait: { settled: boolean; stop?: () => void } = { settled: false };
    const settle = (): void => {
      if (wait.settled) return;
      wait.settled = true;
      clearTimeout(timer);
      signal.removeEventListener('abort', settle);
      wait.stop?.();
      resolve();
    };
    const timer = setTimeout(settle, ms);
    signal.addEventListener('abort', settle, { once: true });
    // MsgStore calls a subscriber back only at its next flush, never while it subscribes.
    wait.stop = log.store.subscribe(() => settle(), { history: false, onFinished: settle, onDropped: settle });
  });
}

/**
 * A pane's folder on this node as the controller gave it: `~` is the node's home, a relative one is
 * under the default folder (never this process's own, which its caller cannot know).
 */
function nodeFolder(given: string | undefined, defaultCwd: string): string {
  if (given === undefined) return defaultCwd;
  if (given === '~' || given.startsWith('~/') || given.startsWith(`~${path.sep}`)) return path.join(homedir(), given.slice(1));
  return path.resolve(defaultCwd, given);
}
