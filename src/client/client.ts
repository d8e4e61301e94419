import net from 'node:net';
import { DisposableStore } from '../core/disposable.js';
import { Emitter, type Event } from '../core/emitter.js';
import { SwitchboardError, type ErrorCode } from '../core/errors.js';
import { errorCodeFromRpc } from '../protocol/rpc-codes.js';
import type { JsonRpcResponse } from '../protocol/json-rpc.js';
import { LineTransport } from '../protocol/line-transport.js';
import type { MessageTransport, TransportInput } from '../protocol/transport.js';
import type { MethodName, NotificationName, Notifications, ParamsInput, Result } from '../protocol/methods.js';
import { NO_DAEMON_MESSAGE, resolveEndpoint, type Endpoint, type EndpointOptions } from './endpoint.js';

/** An error the daemon answered with: the stable `code`, plus the JSON-RPC number and data. */
export class RpcError extends SwitchboardError {
  constructor(
    code: ErrorCode,
    message: string,
    readonly rpcErrorCode: number,
    readonly data: unknown,
  ) {
    super(code, message, typeof data === 'object' && data !== null ? (data as Record<string, unknown>) : undefined);
  }
}

export interface ConnectOptions extends EndpointOptions {
  /** Prefer TCP even when a local socket is known. */
  preferTcp?: boolean;
  /** Default time to wait for a reply (long calls such as waitFor and kill add their own time). */
  requestTimeoutMs?: number;
}

type Handlers = { [N in NotificationName]?: (params: Notifications[N]) => void };

/** A live subscription: its notifications as events, and a way to end it. */
export class ClientSubscription {
  private readonly disposables = new DisposableStore();
  private readonly emitters = {
    output: this.disposables.add(new Emitter<Notifications['output']>()),
    exit: this.disposables.add(new Emitter<Notifications['exit']>()),
    screen: this.disposables.add(new Emitter<Notifications['screen']>()),
    overflow: this.disposables.add(new Emitter<Notifications['overflow']>()),
    pane_created: this.disposables.add(new Emitter<Notifications['pane_created']>()),
    subscription_ended: this.disposables.add(new Emitter<Notifications['subscription_ended']>()),
    state: this.disposables.add(new Emitter<Notifications['state']>()),
    log_message: this.disposables.add(new Emitter<Notifications['log_message']>()),
    log_finished: this.disposables.add(new Emitter<Notifications['log_finished']>()),
    log_dropped: this.disposables.add(new Emitter<Notifications['log_dropped']>()),
    run_event: this.disposables.add(new Emitter<Notifications['run_event']>()),
    run_stream_end: this.disposables.add(new Emitter<Notifications['run_stream_end']>()),
  };
  readonly onOutput: Event<Notifications['output']> = this.emitters.output.event;
  readonly onExit: Event<Notifications['exit']> = this.emitters.exit.event;
  readonly onScreen: Event<Notifications['screen']> = this.emitters.screen.event;
  readonly onOverflow: Event<Notifications['overflow']> = this.emitters.overflow.event;
  readonly onPaneCreated: Event<Notifications['pane_created']> = this.emitters.pane_created.event;
  /** A subscription to a pane on another host ended (its node lost the pane or stopped answering): nothing follows. */
  readonly onSubscriptionEnded: Event<Notifications['subscription_ended']> = this.emitters.subscription_ended.event;
  /** An agent pane's state changed (events ['state']). */
  readonly onState: Event<Notifications['state']> = this.emitters.state.event;
  /** A session log subscription's messages, in order. */
  readonly onLogMessage: Event<Notifications['log_message']> = this.emitters.log_message.event;
  readonly onLogFinished: Event<Notifications['log_finished']> = this.emitters.log_finished.event;
  readonly onLogDropped: Event<Notifications['log_dropped']> = this.emitters.log_dropped.event;
  /** A followed run's events, in order (runSubscribe). */
  readonly onRunEvent: Event<Notifications['run_event']> = this.emitters.run_event.event;
  /** The followed run's stream ended: after its `done`, or on an error. */
  readonly onRunStreamEnd: Event<Notifications['run_stream_end']> = this.emitters.run_stream_end.event;

  constructor(
    readonly id: string,
    private readonly client: SwitchboardClient,
    handlers: Handlers,
  ) {
    for (const [name, handler] of Object.entries(handlers) as [NotificationName, (p: never) => void][]) {
      (this.emitters[name] as Emitter<unknown>).event(handler as (p: unknown) => void);
    }
  }

  /** Delivers a notification (called by the client). */
  deliver(method: string, params: unknown): void {
    if (!Object.hasOwn(this.emitters, method)) return;
    (this.emitters[method as NotificationName] as unknown as Emitter<unknown>).fire(params);
  }

  /** Ends the subscription. */
  async unsubscribe(): Promise<void> {
    this.client.forgetSubscription(this.id);
    this.dispose();
    await this.client.request('unsubscribe', { subscription: this.id });
  }

  dispose(): void {
    this.disposables.dispose();
  }
}

interface Pending {
  resolve: (value: unknown) => void;
  reject: (err: Error) => void;
  /** Undefined for a call that waits as long as the daemon takes (it bounds the call itself). */
  timer: NodeJS.Timeout | undefined;
  /** Runs synchronously with the result, before any later message is handled. */
  onResult?: (result: unknown) => void;
}

const DEFAULT_TIMEOUT_MS = 10_000;
/** The longest reply line the client takes (a batch of get_text can be large; the daemon bounds what it sends). */
const MAX_REPLY_BYTES = 256 * 1024 * 1024;

/** A connection to a Switchboard daemon with one typed method per RPC method. */
export class SwitchboardClient {
  private readonly pending = new Map<number, Pending>();
  private readonly subscriptions = new Map<string, ClientSubscription>();
  private nextId = 1;
  private closedError: Error | undefined;
  private readonly closeEmitter = new Emitter<Error | undefined>();
  /** The connection closed (with the reason, when it was not `close()`). */
  readonly onClose: Event<Error | undefined> = this.closeEmitter.event;

  private constructor(
    private readonly transport: MessageTransport,
    readonly endpoint: Endpoint,
    private readonly timeoutMs: number,
  ) {
    transport.start({
      receive: (inputs) => this.receive(inputs),
      endOfInput: () => undefined,
      drained: () => undefined,
      closed: (err) => this.handleClosed(new SwitchboardError('CONNECTION_FAILED', err ? `connection error: ${err.message}` : 'connection closed by the daemon')),
    });
  }

  /**
   * A client over a transport already connected to a daemon (in-memory tests connect both ends,
   * protocol/memory-transport.ts); `token` goes with every request.
   */
  static over(transport: MessageTransport, options: { token: string; requestTimeoutMs?: number }): SwitchboardClient {
    return new SwitchboardClient(transport, { token: options.token, source: 'transport' }, options.requestTimeoutMs ?? DEFAULT_TIMEOUT_MS);
  }

  /** Connects to `endpoint` (see resolveEndpoint for how one is found). */
  static async open(endpoint: Endpoint, options: { preferTcp?: boolean; requestTimeoutMs?: number } = {}): Promise<SwitchboardClient> {
    const useSocket = endpoint.socketPath !== undefined && !(options.preferTcp && endpoint.port !== undefined);
    const socket = await new Promise<net.Socket>((resolve, reject) => {
      const s = useSocket ? net.connect(endpoint.socketPath as string) : net.connect(endpoint.port ?? 0, endpoint.host ?? '127.0.0.1');
      s.once('connect', () => {
        s.removeAllListeners('error');
        resolve(s);
      });
      s.once('error', (err: NodeJS.ErrnoException) => {
        const refused = err.code === 'ECONNREFUSED' || err.code === 'ENOENT';
        reject(new SwitchboardError('CONNECTION_FAILED', refused ? NO_DAEMON_MESSAGE : `cannot connect to the daemon: ${err.message}`));
      });
    });
    const client = new SwitchboardClient(new LineTransport(socket, { maxLineBytes: MAX_REPLY_BYTES }), endpoint, options.requestTimeoutMs ?? DEFAULT_TIMEOUT_MS);
    await client.showToken();
    return client;
  }

  /**
   * Shows the token at once, with a ping. The daemon closes a connection that makes no authenticated
   * request within its limit (10 s), so a client that connects now and calls later (an MCP server
   * started with its CLI, called a turn later) would find the connection gone; and a wrong token is
   * an error of connect(), where it was given. A token without the `read` scope is still a good one.
   */
  private async showToken(): Promise<void> {
    try {
      await this.request('ping', {});
    } catch (err) {
      if (err instanceof RpcError && err.code === 'FORBIDDEN') return;
      this.close();
      throw err;
    }
  }

  /**
   * Calls `method` with `params` (the token is added); rejects with RpcError on an error reply, and
   * with TIMEOUT after `timeoutMs` (the client's default; Infinity: no limit of the client's own).
   */
  request<M extends MethodName>(method: M, params: ParamsInput<M>, options: { timeoutMs?: number; onResult?: (result: Result<M>) => void } = {}): Promise<Result<M>> {
    if (this.closedError) return Promise.reject(this.closedError);
    const id = this.nextId++;
    const message = JSON.stringify({ jsonrpc: '2.0', id, method, params: { ...params, token: this.endpoint.token } });
    return new Promise<Result<M>>((resolve, reject) => {
      const timeoutMs = options.timeoutMs ?? this.timeoutMs;
      const timer = Number.isFinite(timeoutMs)
        ? setTimeout(() => {
            this.pending.delete(id);
            reject(new SwitchboardError('TIMEOUT', `${method} got no reply within ${timeoutMs} ms`));
          }, timeoutMs)
        : undefined;
      this.pending.set(id, {
        resolve: resolve as (v: unknown) => void,
        reject,
        timer,
        onResult: options.onResult as ((r: unknown) => void) | undefined,
      });
      this.transport.send(message);
    });
  }

  /** Creates a pane; with `agent`, starts that agent CLI and resolves once it is at its idle prompt. */
  createPane(params: ParamsInput<'create_pane'> = {}): Promise<Result<'create_pane'>> {
    const timeoutMs = params.agent ? (params.ready_timeout_ms ?? 90_000) + 30_000 : undefined;
    return this.request('create_pane', params, { timeoutMs });
  }

  /** Gives an agent pane a prompt the way that agent's CLI needs it typed, then presses Enter. */
  sendPrompt(paneId: string, text: string): Promise<Result<'send_prompt'>> {
    return this.request('send_prompt', { pane_id: paneId, text }, { timeoutMs: 30_000 });
  }

  /** The agent profiles the daemon knows and where their programs are. */
  agents(): Promise<Result<'agents'>> {
    return this.request('agents', {});
  }

  sendText(paneId: string, text: string, options: { addNewline?: boolean } = {}): Promise<Result<'send_text'>> {
    return this.request('send_text', { pane_id: paneId, text, add_newline: options.addNewline });
  }

  /** Presses keys; with `intervalMs`, one write per key (TUI menus read a burst as one event). */
  sendKeys(paneId: string, keys: string[], options: { intervalMs?: number } = {}): Promise<Result<'send_keys'>> {
    const timeoutMs = options.intervalMs ? keys.length * options.intervalMs + 10_000 : undefined;
    return this.request('send_keys', { pane_id: paneId, keys, interval_ms: options.intervalMs }, { timeoutMs });
  }

  paste(paneId: string, text: string, options: { bracketed?: 'auto' | 'always' | 'never' } = {}): Promise<Result<'paste'>> {
    return this.request('paste', { pane_id: paneId, text, bracketed: options.bracketed });
  }

  isAlive(paneId: string): Promise<Result<'is_alive'>> {
    return this.request('is_alive', { pane_id: paneId });
  }

  getText(paneId: string, options: { lines?: number; joinWrapped?: boolean } = {}): Promise<Result<'get_text'>> {
    return this.request('get_text', { pane_id: paneId, lines: options.lines, join_wrapped: options.joinWrapped });
  }

  getScreen(paneId: string, options: { ansi?: boolean } = {}): Promise<Result<'get_screen'>> {
    return this.request('get_screen', { pane_id: paneId, ansi: options.ansi });
  }

  list(): Promise<Result<'list'>> {
    return this.request('list', {});
  }

  kill(paneId: string, options: { signal?: ParamsInput<'kill'>['signal']; graceMs?: number } = {}): Promise<Result<'kill'>> {
    return this.request('kill', { pane_id: paneId, signal: options.signal, grace_ms: options.graceMs }, { timeoutMs: (options.graceMs ?? 3_000) + 10_000 });
  }

  remove(paneId: string, options: { graceMs?: number } = {}): Promise<Result<'remove'>> {
    return this.request('remove', { pane_id: paneId, grace_ms: options.graceMs }, { timeoutMs: (options.graceMs ?? 3_000) + 10_000 });
  }

  resize(paneId: string, cols: number, rows: number): Promise<Result<'resize'>> {
    return this.request('resize', { pane_id: paneId, cols, rows });
  }

  /** Waits until `pattern` is on the screen and/or the screen is still for `idleMs`. */
  waitFor(paneId: string, options: { pattern?: string; flags?: string; idleMs?: number; timeoutMs?: number; lines?: number }): Promise<Result<'wait_for'>> {
    const timeoutMs = options.timeoutMs ?? 30_000;
    return this.request(
      'wait_for',
      { pane_id: paneId, pattern: options.pattern, flags: options.flags, idle_ms: options.idleMs, timeout_ms: timeoutMs, lines: options.lines },
      { timeoutMs: timeoutMs + 10_000 },
    );
  }

  /**
   * Subscribes to output, exit and/or screen frames of one pane (or all panes). Handlers given here
   * are attached before any notification can arrive.
   */
  async subscribe(
    options: { paneId?: string; events?: ('output' | 'exit' | 'screen' | 'state')[]; replay?: boolean } = {},
    handlers: Handlers = {},
  ): Promise<ClientSubscription> {
    let created: ClientSubscription | undefined;
    await this.request(
      'subscribe',
      { pane_id: options.paneId, events: options.events, replay: options.replay },
      {
        onResult: (result) => {
          created = new ClientSubscription(result.subscription, this, handlers);
          this.subscriptions.set(result.subscription, created);
        },
      },
    );
    if (!created) throw new SwitchboardError('INTERNAL_ERROR', 'subscribe returned no subscription');
    return created;
  }

  /**
   * Asks the agent in `target` (a pane id or title, or an agent name) a question. With `wait`
   * (default) resolves with the finished ask (done, failed, timed_out or cancelled); without, at
   * once with its id (the reply is delivered into `fromPaneId` when given).
   */
  ask(target: string, question: string, options: { wait?: boolean; deliver?: boolean; timeoutMs?: number; fromPaneId?: string; cwd?: string; fromName?: string } = {}): Promise<Result<'ask'>> {
    const wait = options.wait ?? true;
    return this.request(
      'ask',
      { target, question, wait, deliver: options.deliver, timeout_ms: options.timeoutMs, from_pane_id: options.fromPaneId, cwd: options.cwd, from_name: options.fromName },
      // The daemon answers by the ask's own timeout (default 10 minutes); the reply gets a little more.
      { timeoutMs: wait ? (options.timeoutMs ?? 10 * 60_000) + 30_000 : undefined },
    );
  }

  /** The ask once it is final, or after `timeoutMs` as it stands then (the ask goes on). */
  askWait(askId: string, options: { timeoutMs?: number } = {}): Promise<Result<'ask_wait'>> {
    const timeoutMs = options.timeoutMs ?? 60_000;
    return this.request('ask_wait', { ask_id: askId, timeout_ms: timeoutMs }, { timeoutMs: timeoutMs + 10_000 });
  }

  askGet(askId: string): Promise<Result<'ask_get'>> {
    return this.request('ask_get', { ask_id: askId });
  }

  askCancel(askId: string): Promise<Result<'ask_cancel'>> {
    return this.request('ask_cancel', { ask_id: askId });
  }

  askList(options: { limit?: number } = {}): Promise<Result<'ask_list'>> {
    return this.request('ask_list', { limit: options.limit });
  }

  /** The agent panes an ask can name. */
  askTargets(): Promise<Result<'ask_targets'>> {
    return this.request('ask_targets', {});
  }

  setAskable(paneId: string, askable: boolean): Promise<Result<'set_askable'>> {
    return this.request('set_askable', { pane_id: paneId, askable });
  }

  /** A fresh one-time login URL for the web dashboard. */
  dashboardLogin(): Promise<Result<'dashboard_login'>> {
    return this.request('dashboard_login', {});
  }

  /** The state of every agent pane now, with the approval each waits on. */
  paneStates(): Promise<Result<'pane_states'>> {
    return this.request('pane_states', {});
  }

  /** Answers the approval an agent pane waits on (the option meaning allow-once, or deny). */
  answerApproval(paneId: string, decision: 'allow' | 'deny', approvalId?: string): Promise<Result<'answer_approval'>> {
    // The daemon waits for the prompt to hold still and for the keys to show an effect (a repeat
    // after 3 s without one): seconds on a loaded machine, more than the default wait allows for.
    return this.request('answer_approval', { pane_id: paneId, decision, approval_id: approvalId }, { timeoutMs: 30_000 });
  }

  /** Every session with a log: each pane's, and each structured run's. */
  logSessions(): Promise<Result<'log_sessions'>> {
    return this.request('log_sessions', {});
  }

  /**
   * Seed 001's logStream:subscribe: the session's retained history (unless `history` is false),
   * then every new message, as `log_message` batches; `log_finished` when the session ends.
   */
  async logSubscribe(sessionId: string, options: { history?: boolean } = {}, handlers: Handlers = {}): Promise<ClientSubscription> {
    let created: ClientSubscription | undefined;
    await this.request(
      'log_subscribe',
      { session_id: sessionId, history: options.history },
      {
        onResult: (result) => {
          created = new ClientSubscription(result.subscription, this, handlers);
          this.subscriptions.set(result.subscription, created);
        },
      },
    );
    if (!created) throw new SwitchboardError('INTERNAL_ERROR', 'log_subscribe returned no subscription');
    return created;
  }

  /** Seed 001's logStream:getHistory: retained messages after `afterSeq`, oldest first. */
  logGetHistory(sessionId: string, options: { afterSeq?: number; limit?: number } = {}): Promise<Result<'log_get_history'>> {
    return this.request('log_get_history', { session_id: sessionId, after_seq: options.afterSeq, limit: options.limit });
  }

  /** Writes the session's whole log as JSONL to a private file in the daemon's home; returns its path. */
  logExport(sessionId: string): Promise<Result<'log_export'>> {
    return this.request('log_export', { session_id: sessionId }, { timeoutMs: 120_000 });
  }

  /** Runs a prompt on an agent's structured headless mode; follow it with logSubscribe(session_id). */
  runAgent(params: ParamsInput<'run_agent'>): Promise<Result<'run_agent'>> {
    return this.request('run_agent', params, { timeoutMs: 30_000 });
  }

  /**
   * Runs a task to its end in a daemon pane (listed, on the dashboard, answerable through
   * answerApproval while it runs); resolves with the result. The task is a run of the daemon's run
   * service: it may wait in line for a place first, and the daemon ends it past its limits, so the
   * client sets none of its own (closing the client cancels the task).
   */
  agentExecute(params: ParamsInput<'agent_execute'>): Promise<Result<'agent_execute'>> {
    return this.request('agent_execute', params, { timeoutMs: Infinity });
  }

  /** Opens a multi-turn session on an agent's structured mode; its entries are the session's log. */
  agentSessionOpen(params: ParamsInput<'agent_session_open'>): Promise<Result<'agent_session_open'>> {
    return this.request('agent_session_open', params, { timeoutMs: 90_000 });
  }

  /** Gives an open session a prompt; resolves when the agent ends its turn (at most `timeoutMs`, default 10 minutes). */
  agentSessionPrompt(sessionId: string, prompt: string, options: { timeoutMs?: number } = {}): Promise<Result<'agent_session_prompt'>> {
    return this.request('agent_session_prompt', { session_id: sessionId, prompt }, { timeoutMs: options.timeoutMs ?? 600_000 });
  }

  agentSessionCancel(sessionId: string): Promise<Result<'agent_session_cancel'>> {
    return this.request('agent_session_cancel', { session_id: sessionId }, { timeoutMs: 30_000 });
  }

  agentSessionClose(sessionId: string): Promise<Result<'agent_session_close'>> {
    return this.request('agent_session_close', { session_id: sessionId }, { timeoutMs: 30_000 });
  }

  cancelRun(sessionId: string): Promise<Result<'cancel_run'>> {
    return this.request('cancel_run', { session_id: sessionId });
  }

  /** Submits a run to the agent bridge (seed 004); follow it with runSubscribe(run.id). */
  runSubmit(params: ParamsInput<'run_submit'>): Promise<Result<'run_submit'>> {
    return this.request('run_submit', params, { timeoutMs: 30_000 });
  }

  /** A run of the agent bridge, from its ledger. */
  runGet(runId: string): Promise<Result<'run_get'>> {
    return this.request('run_get', { run_id: runId });
  }

  /** The bridge's runs, newest first. */
  runList(params: ParamsInput<'run_list'> = {}): Promise<Result<'run_list'>> {
    return this.request('run_list', params);
  }

  /** Cancels a run: its process tree ends, and it ends `cancelled`. */
  runCancel(runId: string): Promise<Result<'run_cancel'>> {
    return this.request('run_cancel', { run_id: runId }, { timeoutMs: 30_000 });
  }

  /** Ends a run's turn and keeps its conversation for a follow-up. */
  runInterrupt(runId: string): Promise<Result<'run_interrupt'>> {
    return this.request('run_interrupt', { run_id: runId }, { timeoutMs: 30_000 });
  }

  /** A run's recorded events after `after` (a replay from the ledger). */
  runEvents(runId: string, options: { after?: number; limit?: number; schemaVersion?: string } = {}): Promise<Result<'run_events'>> {
    return this.request('run_events', { run_id: runId, after: options.after, limit: options.limit, schema_version: options.schemaVersion });
  }

  /** Follows a run: its recorded events after `after`, then live ones, as `run_event`, ending with `run_stream_end`. */
  async runSubscribe(runId: string, options: { after?: number; schemaVersion?: string } = {}, handlers: Handlers = {}): Promise<ClientSubscription> {
    let created: ClientSubscription | undefined;
    await this.request(
      'run_subscribe',
      { run_id: runId, after: options.after, schema_version: options.schemaVersion },
      {
        onResult: (result) => {
          created = new ClientSubscription(result.subscription, this, handlers);
          this.subscriptions.set(result.subscription, created);
        },
      },
    );
    if (!created) throw new SwitchboardError('INTERNAL_ERROR', 'run_subscribe returned no subscription');
    return created;
  }

  /** The bridge's backends: modes, capabilities and health. */
  runBackends(): Promise<Result<'run_backends'>> {
    return this.request('run_backends', {}, { timeoutMs: 60_000 });
  }

  /** The cluster's live nodes, where the daemon is a controller (`up --cluster`). */
  runNodes(): Promise<Result<'run_nodes'>> {
    return this.request('run_nodes', {});
  }

  /** Every team preset: the user's own and the built-ins they have not replaced (seed 003). */
  teamPresetList(): Promise<Result<'team_preset_list'>> {
    return this.request('team_preset_list', {});
  }

  /** One team preset by name, every default filled in. */
  teamPresetGet(name: string): Promise<Result<'team_preset_get'>> {
    return this.request('team_preset_get', { name });
  }

  /** Checks a preset without keeping it; INVALID_PARAMS names the field of each problem. */
  teamPresetValidate(preset: Record<string, unknown>): Promise<Result<'team_preset_validate'>> {
    return this.request('team_preset_validate', { preset });
  }

  /** Keeps a preset (sealed in the daemon's home), in place of one of the same name. */
  teamPresetSave(preset: Record<string, unknown>): Promise<Result<'team_preset_save'>> {
    return this.request('team_preset_save', { preset });
  }

  /** Removes one of the user's presets (a built-in it replaced comes back). */
  teamPresetRemove(name: string): Promise<Result<'team_preset_remove'>> {
    return this.request('team_preset_remove', { name });
  }

  /** A preset as plain JSON text, to share. */
  teamPresetExport(name: string): Promise<Result<'team_preset_export'>> {
    return this.request('team_preset_export', { name });
  }

  /** Presets from JSON or YAML text; CONFLICT for a name the user has already unless `replace`. */
  teamPresetImport(text: string, options: { replace?: boolean } = {}): Promise<Result<'team_preset_import'>> {
    return this.request('team_preset_import', { text, replace: options.replace });
  }

  /** Starts a team run from a preset (by name, or whole) and a goal; answers at once with its board (starting). */
  teamRunStart(params: ParamsInput<'team_run_start'>): Promise<Result<'team_run_start'>> {
    return this.request('team_run_start', params);
  }

  /** Every team run kept, the newest first. */
  teamRunList(): Promise<Result<'team_run_list'>> {
    return this.request('team_run_list', {});
  }

  /**
   * A team run's board; with `afterVersion`, once it has changed past that version (or after
   * `waitMs`, default 30 s): call it again with the board's version for a live board.
   */
  teamRunGet(runId: string, options: { afterVersion?: number; waitMs?: number } = {}): Promise<Result<'team_run_get'>> {
    const waiting = options.afterVersion !== undefined;
    return this.request('team_run_get', { run_id: runId, after_version: options.afterVersion, wait_ms: options.waitMs }, waiting ? { timeoutMs: (options.waitMs ?? 30_000) + 30_000 } : {});
  }

  /** Holds the planner's tool calls until resumed. */
  teamRunPause(runId: string): Promise<Result<'team_run_pause'>> {
    return this.request('team_run_pause', { run_id: runId });
  }

  teamRunResume(runId: string): Promise<Result<'team_run_resume'>> {
    return this.request('team_run_resume', { run_id: runId });
  }

  /** Ends the run; `closeAgents` closes its agents' panes too (else they stay, for a person to go on with). */
  teamRunEnd(runId: string, options: { closeAgents: boolean }): Promise<Result<'team_run_end'>> {
    return this.request('team_run_end', { run_id: runId, close_agents: options.closeAgents }, { timeoutMs: 60_000 });
  }

  /** Lets a text the risk gate holds through to its worker, or not. */
  teamRunAnswer(runId: string, confirmationId: string, decision: 'allow' | 'deny'): Promise<Result<'team_run_answer'>> {
    return this.request('team_run_answer', { run_id: runId, confirmation_id: confirmationId, decision });
  }

  /** Marks a worker done, blocked (stuck) or needing input; null clears the mark. */
  teamRunMark(runId: string, workerId: string, mark: 'completed' | 'stuck' | 'needs_input' | null): Promise<Result<'team_run_mark'>> {
    return this.request('team_run_mark', { run_id: runId, worker_id: workerId, mark });
  }

  /**
   * A person's text to one worker, or to every running worker (no `workerId`). A text the risk gate
   * judges medium or high is held (`held`, nothing sent) unless `confirmed`.
   */
  teamRunSend(runId: string, text: string, options: { workerId?: string; confirmed?: boolean } = {}): Promise<Result<'team_run_send'>> {
    return this.request('team_run_send', { run_id: runId, text, worker_id: options.workerId, confirmed: options.confirmed }, { timeoutMs: 120_000 });
  }

  /** The run's report, as markdown. */
  teamRunReport(runId: string): Promise<Result<'team_run_report'>> {
    return this.request('team_run_report', { run_id: runId });
  }

  /** Restarts a stuck worker (or one whose CLI ended): a new pane for it, within the preset's cap. */
  teamRunRestart(runId: string, workerId: string): Promise<Result<'team_run_restart'>> {
    return this.request('team_run_restart', { run_id: runId, worker_id: workerId });
  }

  /** Types call `callId`'s result into the planner again (it was undelivered or unconfirmed). */
  teamRunResend(runId: string, callId: string): Promise<Result<'team_run_resend'>> {
    return this.request('team_run_resend', { run_id: runId, call_id: callId });
  }

  /** A team run's record from the ledger (every call, decision, held text and change), a page after `afterSeq`. */
  teamRunEvents(runId: string, options: { afterSeq?: number; limit?: number } = {}): Promise<Result<'team_run_events'>> {
    return this.request('team_run_events', { run_id: runId, ...(options.afterSeq !== undefined ? { after_seq: options.afterSeq } : {}), ...(options.limit !== undefined ? { limit: options.limit } : {}) });
  }

  /** Runs one tmux command line through the daemon's tmux front end (as the `tmux` launcher does). */
  tmuxCommand(params: ParamsInput<'tmux_command'>): Promise<Result<'tmux_command'>> {
    return this.request('tmux_command', params, { timeoutMs: 120_000 });
  }

  info(): Promise<Result<'info'>> {
    return this.request('info', {});
  }

  ping(): Promise<Result<'ping'>> {
    return this.request('ping', {});
  }

  /** Asks the daemon to shut down (it ends every pane). */
  shutdown(): Promise<Result<'shutdown'>> {
    return this.request('shutdown', {});
  }

  /** Closes the connection; pending calls fail with CONNECTION_FAILED. */
  close(): void {
    this.transport.close(false);
    this.handleClosed(undefined);
  }

  /** @internal */
  forgetSubscription(id: string): void {
    this.subscriptions.delete(id);
  }

  private receive(inputs: readonly TransportInput[]): void {
    for (const input of inputs) {
      if (input.kind !== 'message') continue;
      let message: unknown;
      try {
        message = JSON.parse(input.data.toString('utf8'));
      } catch {
        continue;
      }
      const replies = Array.isArray(message) ? message : [message];
      for (const reply of replies) this.handleMessage(reply);
    }
  }

  private handleMessage(message: unknown): void {
    if (typeof message !== 'object' || message === null) return;
    const m = message as Partial<JsonRpcResponse> & { method?: string; params?: { subscription?: string } };
    if (typeof m.method === 'string') {
      const sub = m.params?.subscription ? this.subscriptions.get(m.params.subscription) : undefined;
      sub?.deliver(m.method, m.params);
      return;
    }
    if (typeof m.id !== 'number') return;
    const pending = this.pending.get(m.id);
    if (!pending) return;
    this.pending.delete(m.id);
    clearTimeout(pending.timer);
    if ('error' in m && m.error) {
      const data = m.error.data as { code?: ErrorCode } | undefined;
      const code = data?.code ?? errorCodeFromRpc(m.error.code);
      pending.reject(new RpcError(code, m.error.message, m.error.code, m.error.data));
      return;
    }
    const result = (m as { result?: unknown }).result;
    pending.onResult?.(result);
    pending.resolve(result);
  }

  private handleClosed(reason: Error | undefined): void {
    if (this.closedError) return;
    this.closedError = reason ?? new SwitchboardError('CONNECTION_FAILED', 'connection closed');
    for (const [id, pending] of this.pending) {
      clearTimeout(pending.timer);
      pending.reject(this.closedError);
      this.pending.delete(id);
    }
    for (const sub of this.subscriptions.values()) sub.dispose();
    this.subscriptions.clear();
    this.closeEmitter.fire(reason);
    this.closeEmitter.dispose();
  }
}

/** Connects to the daemon found by resolveEndpoint (options, pane environment, or runtime file). */
export async function connect(options: ConnectOptions = {}): Promise<SwitchboardClient> {
  const endpoint = resolveEndpoint(options);
  return SwitchboardClient.open(endpoint, { preferTcp: options.preferTcp, requestTimeoutMs: options.requestTimeoutMs });
}
