/**
 * Panes on other hosts (issue 26): on a cluster controller, the panes of its nodes are named
 * `<node>/<pane>` (a node's name is a subject token, a local pane id never holds a `/`), listed
 * beside the controller's own, read, typed into, waited on and resized by the same methods, and
 * attached to as terminals. How they are reached (NATS request and reply, a stream of output per
 * attached terminal) is the cluster's pane surface's; here is only what the operations need of it,
 * and the slot the daemon puts it in once its cluster side has started.
 */
import type { Disposable } from '../core/disposable.js';
import { Emitter, type Event } from '../core/emitter.js';
import { SwitchboardError } from '../core/errors.js';
import type { Notifications, PaneInfo, Params, Result, SessionInfo } from '../protocol/methods.js';
import type { PaneTerminal } from './terminal.js';

/** A pane of a node, as the controller names it. */
export interface NodePaneRef {
  readonly node: string;
  /** The pane's id on its node. */
  readonly pane: string;
}

const SEPARATOR = '/';
/** A node's name as the cluster takes it (one NATS subject token: cluster/topology.ts checkName), checked here so a bad one is refused at once. */
const NODE_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** The node and pane of a node-qualified id, or undefined for an id of this daemon's own panes. */
export function parseNodePaneId(id: string): NodePaneRef | undefined {
  const at = id.indexOf(SEPARATOR);
  if (at < 0) return undefined;
  const node = id.slice(0, at);
  const pane = id.slice(at + 1);
  if (!NODE_NAME.test(node) || pane === '' || pane.includes(SEPARATOR)) throw new SwitchboardError('INVALID_PARAMS', `pane id '${id}' is neither a pane of this daemon nor <node>/<pane> (a node's name is 1 to 64 letters, digits, '_' or '-')`, { pane_id: id });
  return { node, pane };
}

export function nodePaneId(ref: NodePaneRef): string {
  return `${ref.node}${SEPARATOR}${ref.pane}`;
}

/** The pane methods a node answers for its own panes through `call` (opening one is `create`, on a node that allows it). */
export const NODE_PANE_METHODS = ['get_text', 'get_screen', 'send_text', 'send_keys', 'send_prompt', 'paste', 'resize', 'is_alive', 'wait_for', 'answer_approval', 'kill', 'remove'] as const;
export type NodePaneMethod = (typeof NODE_PANE_METHODS)[number];

/** The events a subscription to a node's pane carries: all a subscription can. */
export type NodePaneEvent = NonNullable<Params<'subscribe'>['events']>[number];

/** What a subscription to a node's pane tells, without the subscription and pane (the caller's names for them). */
export type NodePaneNotice =
  | { method: 'output'; params: Omit<Notifications['output'], 'subscription' | 'pane_id'> }
  | { method: 'exit'; params: Omit<Notifications['exit'], 'subscription' | 'pane_id'> }
  | { method: 'screen'; params: Omit<Notifications['screen'], 'subscription' | 'pane_id'> }
  | { method: 'overflow'; params: Omit<Notifications['overflow'], 'subscription' | 'pane_id'> }
  | { method: 'state'; params: Omit<Notifications['state'], 'subscription' | 'pane_id'> };

/** An agent pane of a node changed state (named `<node>/<pane>`). */
export type NodePaneState = Omit<Notifications['state'], 'subscription'>;

/** Where a subscription to a node's pane delivers. */
export interface NodePaneListener {
  /** The pane's notifications, in the order the node made them (a lost one is made good: a full screen frame, an `overflow` before the output after it). */
  notice(notice: NodePaneNotice): void;
  /** It cannot go on (the pane or its node is gone): nothing more comes. */
  ended(error: { code: string; message: string }): void;
}

/** A subscription to a node's pane, held by the controller. */
export interface NodePaneFollow extends Disposable {
  /** Asks the node for the screen again as a full frame (the caller's peer missed some). */
  repaint(): void;
}

/** How a controller reaches its nodes' panes. */
export interface RemotePanes {
  /** Every live node's panes, named `<node>/<pane>` with `node` set. A node that does not answer in time is left out, and logged. */
  list(signal: AbortSignal): Promise<PaneInfo[]>;
  /** Every live node's agent panes' states now, as `pane_states` gives a daemon's own (a node that does not answer in time is left out). */
  states(signal: AbortSignal): Promise<Result<'pane_states'>['states']>;
  /** Opens a pane on `node` (create_pane's params, checked here; a program, not an agent): its result with the pane named `<node>/<pane>`. */
  create(node: string, params: Omit<Params<'create_pane'>, 'node'>): Promise<Result<'create_pane'>>;
  /** `method` on the pane on its node; params already checked here, with the node's own pane id. */
  call<M extends NodePaneMethod>(ref: NodePaneRef, method: M, params: Params<M>, signal: AbortSignal): Promise<Result<M>>;
  /** The pane as a terminal to attach to (an unknown pane or node fails the attachment, not this call). */
  terminal(ref: NodePaneRef): PaneTerminal;
  /**
   * A page of a session log on the node (a pane's, by its id there): as `log_get_history` answers,
   * after `after_seq` (none: after its last message now). With `wait_ms`, a page that would be
   * empty waits on the node that long for a message or the log's end; when `signal` aborts, the
   * node is told to stop waiting. `waited` is false when the node could not wait (it holds as many
   * waits as it takes) and answered at once.
   */
  readLog(ref: NodePaneRef, read: { after_seq?: number; limit: number; wait_ms: number }, signal?: AbortSignal): Promise<NodeLogPage>;
  /** Every live node's session logs, named `<node>/<session>` with `node` set (a node that does not answer in time is left out, and logged). */
  logSessions(signal: AbortSignal): Promise<SessionInfo[]>;
  /** Follows the pane's output, exit and screen frames, as `subscribe` does a pane here; resolves once the node took it (PANE_NOT_FOUND and the like reject). */
  subscribe(ref: NodePaneRef, options: { events: readonly NodePaneEvent[]; replay: boolean }, listener: NodePaneListener): Promise<NodePaneFollow>;
  /** A node started a pane (named `<node>/<pane>`). */
  readonly onPaneCreated: Event<{ pane_id: string; title: string }>;
  /** The program of a node's pane ended (named `<node>/<pane>`). */
  readonly onPaneExited: Event<NodePaneExit>;
  /** An agent pane of a node changed state (named `<node>/<pane>`); a change lost on the way is told once the controller next looks at its node's states. */
  readonly onPaneState: Event<NodePaneState>;
}

/** A page of a node's session log. */
export type NodeLogPage = Omit<Result<'log_get_history'>, 'session_id'> & { waited: boolean };

export interface NodePaneExit {
  pane_id: string;
  exit_code: number | null;
  signal: string | null;
}

/** Where the controller's RemotePanes is, once its cluster side has started (none on a daemon that is no controller). */
export class NodePanesSlot implements Disposable {
  private current: RemotePanes | undefined;
  private told: Disposable[] = [];
  private readonly createdEmitter = new Emitter<{ pane_id: string; title: string }>();
  private readonly exitedEmitter = new Emitter<NodePaneExit>();
  private readonly stateEmitter = new Emitter<NodePaneState>();
  /** A node started a pane, whichever RemotePanes is attached now (a subscription made before the cluster side started hears it too). */
  readonly onPaneCreated = this.createdEmitter.event;
  /** The program of a node's pane ended, whichever RemotePanes is attached now. */
  readonly onPaneExited = this.exitedEmitter.event;
  /** An agent pane of a node changed state, whichever RemotePanes is attached now. */
  readonly onPaneState = this.stateEmitter.event;

  get remote(): RemotePanes | undefined {
    return this.current;
  }

  attach(remote: RemotePanes): void {
    this.detach();
    this.current = remote;
    this.told = [remote.onPaneCreated((created) => this.createdEmitter.fire(created)), remote.onPaneExited((exited) => this.exitedEmitter.fire(exited)), remote.onPaneState((state) => this.stateEmitter.fire(state))];
  }

  detach(): void {
    for (const listener of this.told) listener.dispose();
    this.told = [];
    this.current = undefined;
  }

  dispose(): void {
    this.detach();
    this.createdEmitter.dispose();
    this.exitedEmitter.dispose();
    this.stateEmitter.dispose();
  }

  /** The RemotePanes for `ref`, or PANE_NOT_FOUND saying why there is none. */
  require(ref: NodePaneRef): RemotePanes {
    if (this.current) return this.current;
    throw new SwitchboardError('PANE_NOT_FOUND', `pane ${nodePaneId(ref)} is on node ${ref.node}, and this daemon is not a cluster controller`, { pane_id: nodePaneId(ref), node: ref.node });
  }

  /** The nodes' panes, to open one on `node`; INVALID_PARAMS on a daemon that is no controller. */
  requireNode(node: string): RemotePanes {
    if (this.current) return this.current;
    throw new SwitchboardError('INVALID_PARAMS', `node ${node}: this daemon is not a cluster controller (switchboard up --cluster)`, { node });
  }
}
