/**
 * Codex as a multi-turn session through `codex app-server` (protocol v2 over stdio, JSON lines):
 * one process per session, one Codex thread, a `turn/start` per prompt. Found by running the
 * pinned 0.171.0 against the scripted model (the facts the code relies on):
 *
 * - With the thread's `approvalPolicy: "untrusted"` every shell command and every patch waits for
 *   `item/commandExecution/requestApproval` or `item/fileChange/requestApproval` before it runs,
 *   even `ls`; `decline` leaves the file system as it was. Switchboard's policy answers each one
 *   (accept or decline, never `acceptForSession`, which would stop the questions). The value is
 *   refused in config.toml but taken in the protocol: the driver sends it on every thread and turn
 *   and refuses a thread whose answer does not echo it, so a Codex that stops asking fails closed.
 *   A command or patch that ran without a question is a broken promise: the turn fails for it.
 * - The reply streams as `item/agentMessage/delta`; `turn/completed` ends every turn (completed,
 *   interrupted or failed); `turn/interrupt` stops one and the thread goes on.
 * - A process that died is started again at the next prompt and resumes the thread by its id
 *   (`thread/resume`), so the conversation survives it. A session opened with `resume` does the
 *   same with the caller's thread at open; Codex refuses an id it has no rollout for with an RPC
 *   error, and the open fails with it (never a new thread in its place).
 *
 * `args` go to `codex app-server`: `-c key=value` overrides, `--enable`/`--disable` features.
 */
import { SwitchboardError, errorMessage } from '../core/errors.js';
import { switchboardVersion } from '../core/version.js';
import { Emitter } from '../core/emitter.js';
import { asRecord, asString, type NormalizedEntry } from '../output/entry.js';
import { MsgStore } from '../output/msg-store.js';
import { CodexAppServerNormalizer, describeError } from '../output/normalize-codex-app-server.js';
import { SCHEMA_VERSIONS } from '../output/stream-events.js';
import { ASK_POLICY } from '../approvals/policy/index.js';
import { AgentProcess, describeExit, stderrSuffix, type ProcessExit } from './agent-process.js';
import { AgentProgram, type SessionDriverOptions, type SessionLaunch } from './agent-program.js';
import type { AgentCapabilities, AgentHealth } from './capabilities.js';
import type { Conversation, ConversationOptions, ConversationDriver, ReplyPiece, TurnResult } from './conversation.js';
import { cancelledBeforeStart, newSessionId, recordEntries, resumeIdOf, resumeRefused, SESSION_MARKER, Turn } from './conversation-turn.js';
import { LineRpc, METHOD_NOT_FOUND, RpcError, type IncomingRequest } from './line-rpc.js';
import { decidePermission, subjectForTool, type PermissionRequest } from './permission.js';

/** The app server on stdio; plugins off, or it reaches for GitHub and chatgpt.com at every start. */
export const CODEX_APP_SERVER_ARGS = ['app-server', '--disable', 'plugins'];
/** The approval setting under which Codex asks before every command and patch (see above). */
const ASK_BEFORE_EVERY_ACT = 'untrusted';
const SANDBOX = 'workspace-write';
/** What a thread is opened with (and every turn started with): ask before every act, in the workspace sandbox. */
export const CODEX_THREAD_SETTINGS = { approvalPolicy: ASK_BEFORE_EVERY_ACT, sandbox: SANDBOX } as const;
const START_TIMEOUT_MS = 120_000;
/** How long Codex has to end an interrupted turn before its process is ended. */
const CANCEL_GRACE_MS = 15_000;
const TERMINATE_GRACE_MS = 2_000;

export class CodexConversationDriver implements ConversationDriver {
  private readonly program: AgentProgram;

  constructor(options: SessionDriverOptions = {}) {
    this.program = new AgentProgram('codex', options);
  }

  get name(): string {
    return this.program.name;
  }

  capabilities(): AgentCapabilities {
    return { format: 'codex-app-server', streaming: true, followUps: true, permissionRequests: true, schemaVersions: SCHEMA_VERSIONS };
  }

  health(): Promise<AgentHealth> {
    return this.program.health();
  }

  /** Starts `codex app-server` and opens a thread in `cwd`; resolves once it takes prompts. */
  async open(options: ConversationOptions): Promise<Conversation> {
    if (options.signal?.aborted) throw new SwitchboardError('INVALID_REQUEST', 'the session was aborted before it opened');
    resumeIdOf(options);
    const session = new CodexSession(this.program.launch(options), options);
    try {
      await session.connect();
    } catch (err) {
      await session.close();
      throw err;
    }
    return session;
  }
}

/** One app-server process and the RPC over its stdio. */
interface Connection {
  process: AgentProcess;
  rpc: LineRpc;
}

/** How a turn ended, as Codex said it (or its process did). */
/** The turn under way: Codex's id for it, the items Codex asked about, and a broken promise if one was seen. */
interface OpenTurn {
  turn: Turn;
  codexTurnId: string | undefined;
  asked: Set<string>;
  broken: string | undefined;
  ended: (ending: TurnEnding) => void;
}

type TurnEnding = { kind: 'completed'; status: string; error: unknown } | { kind: 'exited'; exit: ProcessExit } | { kind: 'refused'; error: unknown };

class CodexSession implements Conversation {
  readonly id = newSessionId();
  readonly entries: MsgStore<NormalizedEntry>;
  private readonly pieceEmitter = new Emitter<ReplyPiece>();
  readonly pieces = this.pieceEmitter.event;
  private readonly normalizer = new CodexAppServerNormalizer();
  /** Set before the first start when the caller resumes a thread, so that the start resumes it. */
  private threadId: string | null;
  /** The thread the caller asked to resume, until it has been: a refusal of it fails the open. */
  private resumeAsked: string | undefined;
  private connection: Connection | undefined;
  private connecting: Promise<Connection> | undefined;
  private turn: OpenTurn | undefined;
  private closing: Promise<void> | undefined;
  private readonly onAbort = (): void => void this.close();

  constructor(
    private readonly launch: SessionLaunch,
    private readonly options: ConversationOptions,
  ) {
    this.entries = new MsgStore<NormalizedEntry>(options.store);
    this.threadId = options.resume ?? null;
    this.resumeAsked = options.resume;
    options.signal?.addEventListener('abort', this.onAbort, { once: true });
  }

  get agentSessionId(): string | null {
    return this.threadId;
  }

  async prompt(text: string, options: { signal?: AbortSignal } = {}): Promise<TurnResult> {
    if (text.trim() === '') throw new SwitchboardError('INVALID_PARAMS', 'the prompt is empty');
    if (this.closing) throw new SwitchboardError('INVALID_REQUEST', 'the session is closed', { session: this.id });
    if (this.turn) throw new SwitchboardError('INVALID_REQUEST', 'a turn is under way: one prompt at a time', { session: this.id });
    if (options.signal?.aborted) return cancelledBeforeStart();
    const turn = new Turn();
    let ended: (ending: TurnEnding) => void = () => undefined;
    const ending = new Promise<TurnEnding>((resolve) => {
      ended = resolve;
    });
    const current: OpenTurn = { turn, codexTurnId: undefined, asked: new Set(), broken: undefined, ended };
    this.turn = current;
    const onAbort = (): void => void this.cancelTurn();
    options.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      this.emit([this.normalizer.userPrompt(text)]);
      let connection: Connection;
      try {
        connection = await this.connect();
      } catch (err) {
        if (turn.cancelRequested) return turn.finish('cancelled', 'cancelled while codex started');
        this.emit([this.normalizer.error(`codex could not be started again for this turn: ${errorMessage(err)}`)]);
        return turn.finish('failed', null);
      }
      if (turn.cancelRequested) return turn.finish('cancelled', 'cancelled while codex started');
      void connection.process.exited.then((exit) => ended({ kind: 'exited', exit }));
      connection.rpc
        .request('turn/start', { threadId: this.threadId, input: [{ type: 'text', text, text_elements: [] }], approvalPolicy: ASK_BEFORE_EVERY_ACT })
        .then(
          (result) => {
            current.codexTurnId = asString(asRecord(asRecord(result)?.turn)?.id);
            // A cancel that came while the turn was being started.
            if (turn.cancelRequested) this.interrupt(connection, current.codexTurnId);
          },
          (error: unknown) => ended({ kind: 'refused', error }),
        );
      const how = await ending;
      return this.endTurn(current, how, connection);
    } finally {
      options.signal?.removeEventListener('abort', onAbort);
      turn.finish('failed', null);
      this.turn = undefined;
    }
  }

  async cancelTurn(): Promise<void> {
    const current = this.turn;
    if (!current) return;
    if (current.turn.requestCancel()) {
      const connection = this.connection;
      if (connection && current.codexTurnId !== undefined) this.interrupt(connection, current.codexTurnId);
      current.turn.cancelTimer = setTimeout(() => {
        this.emit([this.normalizer.note(`codex did not end the turn within ${CANCEL_GRACE_MS / 1000} s of turn/interrupt: its process is ended`)]);
        void this.connection?.process.terminate(TERMINATE_GRACE_MS);
      }, CANCEL_GRACE_MS);
    }
    await current.turn.done;
  }

  close(): Promise<void> {
    this.closing ??= this.shutDown();
    return this.closing;
  }

  /** The running app server, started (and the thread opened or resumed) when there is none. */
  connect(): Promise<Connection> {
    // One being opened is not ready yet (it is `connection` already, before its handshake).
    if (this.connecting) return this.connecting;
    if (this.connection?.process.running) return Promise.resolve(this.connection);
    this.connecting = this.start().finally(() => {
      this.connecting = undefined;
    });
    return this.connecting;
  }

  private async shutDown(): Promise<void> {
    this.options.signal?.removeEventListener('abort', this.onAbort);
    const current = this.turn;
    current?.turn.requestCancel();
    // The connection being opened too: it is set before its handshake.
    const connection = this.connection;
    if (connection) {
      // Closing its input ends the app server; the marker finds whatever it left running.
      connection.process.endInput();
      await connection.process.terminate(TERMINATE_GRACE_MS);
      connection.rpc.close();
    }
    await this.connecting?.catch(() => undefined);
    if (current) await current.turn.done;
    this.launch.temp.release();
    this.entries.finish();
    this.pieceEmitter.dispose();
  }

  private async start(): Promise<Connection> {
    if (this.closing) throw new SwitchboardError('INVALID_REQUEST', 'the session is closed', { session: this.id });
    const previous = this.connection;
    if (previous) {
      // Ended for good first: what it started (the native binary under the npm launcher) would hold the thread.
      const exit = await previous.process.terminate(TERMINATE_GRACE_MS);
      this.emit([this.normalizer.note(`codex ${describeExit(exit)}; starting it again and resuming thread ${this.threadId ?? '(none)'}`)]);
    }
    const rpc: LineRpc = new LineRpc((line) => child.writeLine(line), {
      onRequest: (request) => this.answer(request),
      onNotification: (method, params) => this.notified(method, params),
      onGarbage: (line) => this.emit([this.normalizer.note(`codex wrote a line that is not JSON-RPC: ${line.slice(0, 200)}`)]),
    });
    const { binary, env, args } = this.launch;
    const child = new AgentProcess({ binary, args: [...CODEX_APP_SERVER_ARGS, ...args], cwd: this.options.cwd, env, marker: { name: SESSION_MARKER, value: this.id }, input: true, onLine: (line) => rpc.receive(line) });
    void child.exited.then((exit) => {
      rpc.close();
      // Between turns nobody else would say so (a turn under way says it itself).
      if (!this.closing && !this.turn && this.connection === connection) this.emit([this.normalizer.note(`codex ${describeExit(exit)} between turns; the next prompt starts it again and resumes thread ${this.threadId ?? '(none)'}${stderrSuffix(child.stderrTail)}`)]);
    });
    const connection = { process: child, rpc };
    this.connection = connection;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new SwitchboardError('TIMEOUT', `codex app-server did not open its thread within ${START_TIMEOUT_MS / 1000} s${stderrSuffix(child.stderrTail)}`)), START_TIMEOUT_MS);
    });
    try {
      await Promise.race([this.handshake(rpc), timeout]);
      return connection;
    } catch (err) {
      await child.terminate(TERMINATE_GRACE_MS);
      if (err instanceof SwitchboardError) throw err;
      const exit = await child.exited;
      throw new SwitchboardError('SPAWN_FAILED', `codex app-server ${describeExit(exit)} before its thread was open (${errorMessage(err)})${stderrSuffix(child.stderrTail)}`, { agent: 'codex' });
    } finally {
      clearTimeout(timer);
    }
  }

  /** initialize, then a new thread in the session's folder or the session's thread resumed; fails closed on the approval setting. */
  private async handshake(rpc: LineRpc): Promise<void> {
    await rpc.request('initialize', { clientInfo: { name: 'switchboard', title: 'Switchboard', version: switchboardVersion() }, capabilities: { experimentalApi: false } });
    rpc.notify('initialized');
    const settings = CODEX_THREAD_SETTINGS;
    const resuming = this.threadId;
    const result = asRecord(resuming ? await this.resumeThread(rpc, resuming) : await rpc.request('thread/start', { cwd: this.options.cwd, ...settings }));
    const policy = result?.approvalPolicy;
    if (policy !== ASK_BEFORE_EVERY_ACT) {
      throw new SwitchboardError('AGENT_ERROR', `codex opened its thread with approvalPolicy ${JSON.stringify(policy)} instead of "${ASK_BEFORE_EVERY_ACT}": it would not ask before it acts, so Switchboard's policy could not decide; refusing to run it (this Codex version is not supported in structured mode)`, { agent: 'codex', approvalPolicy: policy });
    }
    const threadId = asString(asRecord(result?.thread)?.id);
    if (!threadId) throw new SwitchboardError('AGENT_ERROR', 'codex opened a thread without an id', { agent: 'codex' });
    this.threadId = threadId;
    this.resumeAsked = undefined;
    this.emit([this.normalizer.note(resuming ? `thread resumed: ${threadId}` : `session started: ${threadId}`)]);
  }

  /** `thread/resume`; Codex's refusal of the caller's own thread is the open's failure, in its words. */
  private async resumeThread(rpc: LineRpc, threadId: string): Promise<unknown> {
    try {
      return await rpc.request('thread/resume', { threadId, cwd: this.options.cwd, ...CODEX_THREAD_SETTINGS, excludeTurns: true });
    } catch (err) {
      if (!(err instanceof RpcError) || threadId !== this.resumeAsked) throw err;
      throw resumeRefused('codex', `codex could not resume thread ${threadId} (${err.message})`, threadId, err.message);
    }
  }

  private notified(method: string, params: unknown): void {
    const current = this.turn;
    const p = asRecord(params);
    if (method === 'turn/completed') {
      const turn = asRecord(p?.turn);
      current?.ended({ kind: 'completed', status: asString(turn?.status) ?? 'completed', error: turn?.error });
      return;
    }
    if (method === 'item/completed' && current) this.checkAsked(current, asRecord(p?.item));
    this.emit(this.normalizer.notification(method, params));
    // After the notification's entries, so that a reader puts each piece after what came before it.
    for (const text of this.normalizer.takePieces()) if (!this.entries.finished) this.pieceEmitter.fire({ text, afterSeq: this.entries.stats().lastSeq });
  }

  /** A command or patch carried out with no question before it: Codex is not asking, so the turn fails. */
  private checkAsked(current: OpenTurn, item: Record<string, unknown> | undefined): void {
    const id = asString(item?.id);
    if (!item || !id || current.asked.has(id)) return;
    const ran = (item.type === 'commandExecution' && (item.status === 'completed' || (item.status === 'failed' && item.exitCode !== null))) || (item.type === 'fileChange' && item.status === 'completed');
    if (!ran) return;
    const what = item.type === 'commandExecution' ? `the command ${JSON.stringify(asString(item.command) ?? '')}` : 'a patch';
    current.broken ??= `codex carried out ${what} without asking Switchboard first, although its thread was opened to ask before every act`;
    this.emit([this.normalizer.error(current.broken)]);
  }

  /** Codex's questions: approvals judged by the policy; anything else refused (nobody here answers it). */
  private async answer(request: IncomingRequest): Promise<unknown> {
    const params = asRecord(request.params) ?? {};
    const itemId = asString(params.itemId);
    if (request.method === 'item/commandExecution/requestApproval') {
      const command = asString(params.command) ?? '';
      const input = { command, cwd: asString(params.cwd) ?? this.options.cwd };
      return { decision: await this.judge(itemId, [{ toolName: 'shell', subject: subjectForTool('shell', input), input, ...(itemId !== undefined ? { toolCallId: itemId } : {}) }]) };
    }
    if (request.method === 'item/fileChange/requestApproval') {
      const changes = itemId !== undefined ? this.normalizer.changesOf(itemId) : [];
      // A patch whose changes were not listed is judged as a write to nowhere in particular: the policy asks, so it is declined.
      const requests: PermissionRequest[] = (changes.length > 0 ? changes : [{ path: undefined, kind: 'update' }]).map((c) => {
        const input = { ...(c.path !== undefined ? { path: c.path } : {}), kind: c.kind };
        return { toolName: 'apply_patch', subject: { tool: c.kind === 'add' ? 'file_write' : 'file_edit', toolName: 'apply_patch', ...(c.path !== undefined ? { path: c.path } : {}) }, input, ...(itemId !== undefined ? { toolCallId: itemId } : {}) };
      });
      return { decision: await this.judge(itemId, requests) };
    }
    this.emit([this.normalizer.note(`codex asked ${request.method}, which Switchboard does not answer: refused`)]);
    throw new RpcError(METHOD_NOT_FOUND, `Switchboard does not answer ${request.method}`);
  }

  /** Every request must be allowed for the act to go ahead; a cancel on the way declines it. */
  private async judge(itemId: string | undefined, requests: PermissionRequest[]): Promise<'accept' | 'decline'> {
    const current = this.turn;
    if (itemId !== undefined) current?.asked.add(itemId);
    if (!current || current.turn.cancelRequested) return 'decline';
    for (const request of requests) {
      const answer = await Promise.race([decidePermission(request, { policy: this.options.policy ?? ASK_POLICY, workdir: this.options.cwd, home: this.options.sandbox?.home, onPermission: this.options.onPermission, judge: this.options.judge }), current.turn.cancelled]);
      if (!answer) return 'decline';
      current.turn.permissions.push(answer);
      this.emit([this.normalizer.note(`${answer.decision} ${request.toolName}: ${answer.reason}`, { toolName: request.toolName, toolInput: request.input, toolCallId: itemId })]);
      if (answer.decision !== 'allow') return 'decline';
    }
    return 'accept';
  }

  private interrupt(connection: Connection, codexTurnId: string | undefined): void {
    if (codexTurnId === undefined) return;
    connection.rpc.request('turn/interrupt', { threadId: this.threadId, turnId: codexTurnId }).catch(() => undefined);
  }

  private endTurn(current: OpenTurn, ending: TurnEnding, connection: Connection): TurnResult {
    this.emit(this.normalizer.closeOpenItems('the turn ended before the command did'));
    const { turn, broken: tripped } = current;
    if (ending.kind === 'completed') {
      if (ending.status === 'interrupted' && turn.cancelRequested) return turn.finish('cancelled', 'interrupted');
      if (tripped) return turn.finish('failed', 'asked too late');
      if (ending.status === 'completed') return turn.finish('completed', 'completed');
      if (!turn.entries.some((e) => e.type === 'error')) this.emit([this.normalizer.error(ending.status === 'interrupted' ? 'codex interrupted the turn itself' : describeError(ending.error))]);
      return turn.finish('failed', ending.status);
    }
    if (turn.cancelRequested) return turn.finish('cancelled', 'cancelled');
    if (ending.kind === 'refused') {
      this.emit([this.normalizer.error(`codex refused the turn: ${errorMessage(ending.error)}`)]);
      return turn.finish('failed', null);
    }
    this.emit([this.normalizer.error(`codex ${describeExit(ending.exit)} during the turn${stderrSuffix(connection.process.stderrTail)}`)]);
    return turn.finish('failed', null);
  }

  private emit(entries: NormalizedEntry[]): void {
    if (this.entries.finished) return;
    recordEntries(this.entries, this.turn?.turn, entries);
  }
}
