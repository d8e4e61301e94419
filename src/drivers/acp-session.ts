/**
 * One ACP session (acp-driver.ts opens it): the agent's process, the ACP SDK's client connection
 * over its stdio, and the turns. A module of its own, loaded by the first ACP session, so that a
 * daemon that runs no ACP agent does not hold the SDK and its schemas.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { Readable, Writable } from 'node:stream';
import { client, methods, ndJsonStream, PROTOCOL_VERSION, RequestError, type AnyMessage, type ClientConnection, type RequestPermissionRequest, type RequestPermissionResponse, type Stream } from '@agentclientprotocol/sdk';
import { errorMessage, SwitchboardError } from '../core/errors.js';
import { switchboardVersion } from '../core/version.js';
import { asRecord, asString, type NormalizedEntry } from '../output/entry.js';
import { MsgStore, type MsgStoreOptions } from '../output/msg-store.js';
import { AcpUpdateNormalizer, describeAcpError } from '../output/normalize-acp.js';
import { isWindows, terminateProcessTree } from '../platform/index.js';
import type { ApprovalPolicy } from '../approvals/policy/index.js';
import { describeSubject, outcomeFor, permissionRequestFor } from './acp-permission.js';
import { decidePermission, type PermissionJudge, type PermissionRequest } from './permission.js';
import type { Conversation, ReplyPiece, TurnResult } from './conversation.js';
import { Emitter } from '../core/emitter.js';
import type { PrivateTemp } from '../agents/index.js';
import { describeExit, stderrSuffix, type ProcessExit } from './agent-process.js';
import { cancelledBeforeStart, newSessionId, recordEntries, resumeRefused, SESSION_MARKER, Turn } from './conversation-turn.js';

/** How long an agent has to stop a cancelled turn before its process is ended. */
const CANCEL_GRACE_MS = 15_000;
const TERMINATE_GRACE_MS = 2_000;
/** After the process exits, how long to wait for its stdout (a grandchild may hold the pipe). */
const DRAIN_AFTER_EXIT_MS = 1_000;
/** After the process exits mid-turn, how long an answer already read may take to be delivered. */
const ANSWER_AFTER_EXIT_MS = 200;
const STDERR_TAIL_CHARS = 4_096;
/** ACP's error code for "authenticate first". */
const AUTH_REQUIRED = -32000;

export interface SessionSetup {
  name: string;
  binary: string;
  args: string[];
  env: Record<string, string>;
  /** The process's private temporary folder, released when the session ends. */
  temp: PrivateTemp;
  cwd: string;
  policy: ApprovalPolicy;
  onPermission: ((request: PermissionRequest) => Promise<'allow' | 'deny'>) | undefined;
  judge: PermissionJudge | undefined;
  home: string | undefined;
  store: MsgStoreOptions<NormalizedEntry> | undefined;
  onMessage: ((direction: 'to_agent' | 'from_agent', message: unknown) => void) | undefined;
  signal: AbortSignal | undefined;
  /** The agent's id of an earlier session to load (`session/load`) instead of opening a new one. */
  resume: string | undefined;
}

/**
 * Agents whose `session/load` destroys the session it is asked to load, so that Switchboard does
 * not ask them. Found on Gemini CLI 0.61.0: its load starts recording the session anew in the very
 * file it then reads (a `$set` of the messages to the startup context alone), finds nothing to
 * resume ("No previous sessions found for this project."), and the CLI's own `--list-sessions`
 * and `--resume` lose the session too. A later version is tried.
 */
const LOAD_LOSES_HISTORY: readonly { name: string; upTo: readonly [number, number]; why: string }[] = [
  { name: 'gemini-cli', upTo: [0, 61], why: 'its session/load overwrites the session\'s history before it reads it (found on 0.61.0), which would lose the conversation' },
];

/** Why this agent's session/load must not be tried, or undefined. */
function loadLosesHistory(name: string | undefined, version: string | undefined): string | undefined {
  const [major, minor] = (version ?? '').split('.').map(Number);
  if (major === undefined || minor === undefined || Number.isNaN(major) || Number.isNaN(minor)) return undefined;
  const known = LOAD_LOSES_HISTORY.find((k) => k.name === name && (major < k.upTo[0] || (major === k.upTo[0] && minor <= k.upTo[1])));
  return known ? `${name ?? ''} ${version ?? ''}: ${known.why}` : undefined;
}

/**
 * A `session/load` under way: the agent replays the loaded session's history as session/update
 * notifications before it answers, and those are counted here instead of recorded. `over` once
 * the answer went past (the only request waiting then), so that what follows it is this session's.
 */
type Replay = { updates: number; over: boolean };

type PromptOutcome = { kind: 'answered'; stopReason: string } | { kind: 'error'; error: unknown } | { kind: 'exited' };

export class AcpSession implements Conversation {
  readonly id = newSessionId();
  readonly entries: MsgStore<NormalizedEntry>;
  private acpSessionId: string | null = null;
  private readonly normalizer = new AcpUpdateNormalizer(Date.now, { pieces: true });
  private readonly pieceEmitter = new Emitter<ReplyPiece>();
  readonly pieces = this.pieceEmitter.event;
  private readonly child: ChildProcess;
  private readonly connection: ClientConnection;
  private readonly exited: Promise<ProcessExit>;
  private exit: ProcessExit | undefined;
  private stderr = '';
  private turn: Turn | undefined;
  private replay: Replay | undefined;
  private closing: Promise<void> | undefined;
  private readonly onAbort = (): void => void this.close();

  constructor(private readonly setup: SessionSetup) {
    this.entries = new MsgStore<NormalizedEntry>(setup.store);
    // Its own process group (not on Windows, where there are none), so that closing the session
    // ends everything the agent started; PWD too, since OpenCode takes its project from $PWD.
    this.child = spawn(setup.binary, setup.args, { cwd: setup.cwd, env: { ...setup.env, PWD: setup.cwd, [SESSION_MARKER]: this.id }, stdio: ['pipe', 'pipe', 'pipe'], detached: !isWindows, windowsHide: true });
    // A write to an agent that died is an EPIPE here; the turn learns of it from the exit.
    this.child.stdin?.on('error', () => undefined);
    this.child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      this.stderr = (this.stderr + chunk).slice(-STDERR_TAIL_CHARS);
    });
    this.exited = new Promise<ProcessExit>((resolve) => {
      const finish = (exit: ProcessExit): void => {
        if (this.exit) return;
        this.exit = exit;
        this.exitedUnasked();
        resolve(exit);
      };
      this.child.once('error', (error) => finish({ code: null, signal: null, error }));
      this.child.once('exit', (code, signal) => {
        const timer = setTimeout(() => finish({ code, signal }), DRAIN_AFTER_EXIT_MS);
        this.child.once('close', () => {
          clearTimeout(timer);
          finish({ code, signal });
        });
      });
    });
    this.connection = client({ name: 'switchboard' })
      .onRequest(methods.client.session.requestPermission, ({ params, signal }) => this.answerPermission(params, signal))
      .connect(this.stream());
  }

  get agentSessionId(): string | null {
    return this.acpSessionId;
  }

  /** Initializes ACP and opens the session; on any failure the process is ended and the error says why. */
  async start(timeoutMs: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), timeoutMs);
    });
    const handshake = this.handshake().then(
      () => 'ready' as const,
      (error: unknown) => ({ error }),
    );
    const signal = this.setup.signal;
    let stopWaiting = (): void => undefined;
    const aborted = new Promise<'aborted'>((resolve) => {
      stopWaiting = () => resolve('aborted');
      signal?.addEventListener('abort', stopWaiting, { once: true });
    });
    try {
      let outcome = await Promise.race([handshake, timeout, aborted, this.exited.then(() => 'exited' as const)]);
      // A request broken off (neither answered nor refused) means the agent is going: say how it went.
      if (typeof outcome === 'object' && isBrokenOff(outcome.error)) outcome = await Promise.race([this.exited.then(() => 'exited' as const), delay(DRAIN_AFTER_EXIT_MS * 2).then(() => outcome)]);
      if (outcome === 'ready') {
        signal?.addEventListener('abort', this.onAbort, { once: true });
        if (!signal?.aborted) return;
      }
      await this.close();
      if (outcome === 'ready' || outcome === 'aborted') throw new SwitchboardError('INVALID_REQUEST', 'the session was aborted while it opened');
      throw this.startError(outcome === 'timeout' || outcome === 'exited' ? outcome : outcome.error, timeoutMs);
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', stopWaiting);
    }
  }

  async prompt(text: string, options: { signal?: AbortSignal } = {}): Promise<TurnResult> {
    if (text.trim() === '') throw new SwitchboardError('INVALID_PARAMS', 'the prompt is empty');
    if (this.closing) throw new SwitchboardError('INVALID_REQUEST', 'the session is closed', { session: this.id });
    if (this.turn) throw new SwitchboardError('INVALID_REQUEST', 'a turn is under way: one prompt at a time', { session: this.id });
    if (this.exit) throw new SwitchboardError('INVALID_REQUEST', `the session has ended: ${this.setup.name} ${describeExit(this.exit)}`, { session: this.id, stderr: this.stderr });
    if (options.signal?.aborted) return cancelledBeforeStart();
    const turn = new Turn();
    this.turn = turn;
    this.emit(this.normalizer.userPrompt(text));
    const onAbort = (): void => void this.cancelTurn();
    options.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      const answered: Promise<PromptOutcome> = this.connection.agent.request(methods.agent.session.prompt, { sessionId: this.sessionId(), prompt: [{ type: 'text', text }] }).then(
        (response) => ({ kind: 'answered', stopReason: response.stopReason }),
        (error: unknown) => ({ kind: 'error', error }),
      );
      // An answer the agent wrote just before it exited still counts.
      const exited = this.exited.then(() => Promise.race([answered, delay(ANSWER_AFTER_EXIT_MS).then((): PromptOutcome => ({ kind: 'exited' }))]));
      let outcome = await Promise.race([answered, exited]);
      // A request broken off (not answered with an error) means the connection is gone: say why.
      if (outcome.kind === 'error' && isBrokenOff(outcome.error)) outcome = await Promise.race([exited, delay(DRAIN_AFTER_EXIT_MS * 2).then(() => outcome)]);
      return this.endTurn(turn, outcome);
    } finally {
      options.signal?.removeEventListener('abort', onAbort);
      // Whatever went wrong above, no one waiting on this turn waits forever.
      turn.finish('failed', null);
      this.turn = undefined;
    }
  }

  async cancelTurn(): Promise<void> {
    const turn = this.turn;
    if (!turn) return;
    if (turn.requestCancel() && !this.exit) {
      this.connection.agent.notify(methods.agent.session.cancel, { sessionId: this.sessionId() }).catch(() => undefined);
      turn.cancelTimer = setTimeout(() => {
        this.emit([this.normalizer.note(`${this.setup.name} did not stop the turn within ${CANCEL_GRACE_MS / 1000} s of session/cancel: its process is ended`)]);
        void this.terminate();
      }, CANCEL_GRACE_MS);
    }
    await turn.done;
  }

  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  private async shutdown(): Promise<void> {
    this.setup.signal?.removeEventListener('abort', this.onAbort);
    const turn = this.turn;
    turn?.requestCancel();
    await this.terminate();
    this.connection.close();
    if (turn) await turn.done;
    this.setup.temp.release();
    this.emit(this.normalizer.end());
    this.entries.finish();
    this.pieceEmitter.dispose();
  }

  /** Ends the process tree and whatever else carries the session's marker, then waits for the exit. */
  private async terminate(): Promise<void> {
    const pid = this.child.pid;
    if (pid !== undefined) {
      try {
        await terminateProcessTree(pid, { graceMs: TERMINATE_GRACE_MS, marker: { name: SESSION_MARKER, value: this.id }, rootExited: this.exit !== undefined });
      } catch {
        // Best effort: a process that cannot be looked at or signalled is not ours to end.
      }
    }
    await this.exited;
  }

  /** The ACP session's id: there is one once `start` resolved, which is before any prompt. */
  private sessionId(): string {
    if (this.acpSessionId === null) throw new SwitchboardError('INTERNAL_ERROR', 'the ACP session is not open yet', { session: this.id });
    return this.acpSessionId;
  }

  private async handshake(): Promise<void> {
    const agent = this.connection.agent;
    const init = await agent.request(methods.agent.initialize, {
      protocolVersion: PROTOCOL_VERSION,
      clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
      clientInfo: { name: 'switchboard', version: switchboardVersion() },
    });
    if (init.protocolVersion !== PROTOCOL_VERSION) throw new SwitchboardError('CONNECTION_FAILED', `${this.setup.name} speaks ACP version ${String(init.protocolVersion)}; Switchboard speaks version ${String(PROTOCOL_VERSION)}`, { agent: this.setup.name });
    const info = init.agentInfo;
    const agentName = [info?.title ?? info?.name ?? this.setup.name, info?.version].filter(Boolean).join(' ');
    this.emit([this.normalizer.note(`session started: ${agentName} over ACP v${String(init.protocolVersion)}`)]);
    const resume = this.setup.resume;
    try {
      if (resume !== undefined) await this.load(resume, init.agentCapabilities?.loadSession === true, loadLosesHistory(info?.name, info?.version));
      else this.acpSessionId = (await agent.request(methods.agent.session.new, { cwd: this.setup.cwd, mcpServers: [] })).sessionId;
    } catch (error) {
      if (error instanceof RequestError && error.code === AUTH_REQUIRED) {
        const offered = (init.authMethods ?? []).map((m) => m.id).join(', ') || 'none';
        throw new SwitchboardError('CONNECTION_FAILED', `${this.setup.name} wants to be logged in before it opens a session (it offers: ${offered}); log in with the CLI itself or give it its API key`, { agent: this.setup.name, authMethods: offered });
      }
      throw error;
    }
  }

  /**
   * Continues the caller's earlier session (`session/load`, with what `session/new` gets). Its
   * replayed history is the agent's context, not this session's entries: a run fed from a new
   * session would take the old one's turns for its own (see stream). One note says what was resumed.
   * An agent that cannot load it fails the open; it never opens a new session in its place.
   */
  private async load(sessionId: string, advertised: boolean, losesHistory: string | undefined): Promise<void> {
    const cannot = (why: string): SwitchboardError => resumeRefused(this.setup.name, `${this.setup.name} cannot resume a conversation: ${why}`, sessionId, why);
    if (!advertised) throw cannot('it does not advertise agentCapabilities.loadSession in its initialize answer');
    if (losesHistory !== undefined) throw cannot(losesHistory);
    const replay: Replay = { updates: 0, over: false };
    this.replay = replay;
    try {
      await this.connection.agent.request(methods.agent.session.load, { sessionId, cwd: this.setup.cwd, mcpServers: [] });
    } catch (error) {
      // Logging in is the same problem as for a new session: handshake says it.
      if (error instanceof RequestError && error.code !== AUTH_REQUIRED) {
        // The agent's own words are often in the error's data, its message being "Internal error".
        const said = asString(asRecord(error.data)?.details);
        throw cannot(`session/load of ${sessionId} was refused: ${describeAcpError({ code: error.code, message: error.message })}${said ? `: ${said}` : ''}`);
      }
      throw error;
    } finally {
      this.replay = undefined;
    }
    this.acpSessionId = sessionId;
    this.emit([this.normalizer.note(`resumed session ${sessionId} (${this.setup.name} replayed ${String(replay.updates)} updates of its history, not recorded here)`)]);
  }

  private startError(cause: unknown, timeoutMs: number): SwitchboardError {
    const details = { agent: this.setup.name, stderr: this.stderr };
    if (cause === 'timeout') return new SwitchboardError('TIMEOUT', `${this.setup.name} did not open an ACP session within ${String(timeoutMs / 1000)} s${stderrSuffix(this.stderr)}`, details);
    if (cause === 'exited') return new SwitchboardError('SPAWN_FAILED', `${this.setup.name} ${this.exit ? describeExit(this.exit) : 'exited'} before its ACP session was open${stderrSuffix(this.stderr)}`, details);
    if (cause instanceof SwitchboardError) return cause;
    if (cause instanceof RequestError) return new SwitchboardError('CONNECTION_FAILED', `${this.setup.name} refused to open an ACP session: ${describeAcpError({ code: cause.code, message: cause.message })}${stderrSuffix(this.stderr)}`, details, { cause });
    return new SwitchboardError('SPAWN_FAILED', `${this.setup.name} could not open an ACP session: ${errorMessage(cause)}${stderrSuffix(this.stderr)}`, details, { cause });
  }

  private endTurn(turn: Turn, outcome: PromptOutcome): TurnResult {
    if (outcome.kind === 'answered') {
      this.emit(this.normalizer.turnEnded());
      if (outcome.stopReason === 'cancelled') return turn.finish('cancelled', outcome.stopReason);
      if (outcome.stopReason === 'refusal') {
        this.emit(this.normalizer.turnFailed(`${this.setup.name} refused to go on (stopReason "refusal")`));
        return turn.finish('failed', outcome.stopReason);
      }
      // end_turn, and max_tokens or max_turn_requests: the agent ended its turn; stopReason says how.
      return turn.finish('completed', outcome.stopReason);
    }
    if (turn.cancelRequested) {
      this.emit(this.normalizer.turnEnded());
      return turn.finish('cancelled', 'cancelled');
    }
    if (outcome.kind === 'error' && outcome.error instanceof RequestError) {
      const { code, message } = outcome.error;
      this.emit(this.normalizer.turnFailed(describeAcpError({ code, message })));
      return turn.finish('failed', null);
    }
    const why = this.exit ? describeExit(this.exit) : `lost its connection (${errorMessage(outcome.kind === 'error' ? outcome.error : 'closed')})`;
    this.emit(this.normalizer.turnFailed(`${this.setup.name} ${why} during the turn${stderrSuffix(this.stderr)}`));
    return turn.finish('failed', null);
  }

  /**
   * Judges a permission request: the policy, then the caller's callback, else deny. A cancel of
   * the turn (or the agent withdrawing the request) answers "cancelled", as ACP asks.
   */
  private async answerPermission(params: RequestPermissionRequest, signal: AbortSignal): Promise<RequestPermissionResponse> {
    const turn = this.turn;
    const request = permissionRequestFor(params.toolCall);
    const cancelled = (why: string): RequestPermissionResponse => {
      this.emit([this.normalizer.note(`permission request for ${describeSubject(request.subject)} withdrawn: ${why}`, request.toolCallId)]);
      return { outcome: { outcome: 'cancelled' } };
    };
    if (!turn) return cancelled('no turn is under way');
    if (turn.cancelRequested) return cancelled('the turn is being cancelled');
    const withdrawn = new Promise<undefined>((resolve) => {
      if (signal.aborted) resolve(undefined);
      else signal.addEventListener('abort', () => resolve(undefined), { once: true });
    });
    const answer = await Promise.race([decidePermission(request, { policy: this.setup.policy, workdir: this.setup.cwd, home: this.setup.home, onPermission: this.setup.onPermission, judge: this.setup.judge }), turn.cancelled, withdrawn]);
    if (!answer) return cancelled(signal.aborted ? `${this.setup.name} withdrew it` : 'the turn was cancelled');
    turn.permissions.push(answer);
    const outcome = outcomeFor(params.options, answer.decision);
    const verb = answer.decision === 'allow' ? 'allowed' : 'denied';
    const unanswerable = outcome.outcome === 'cancelled' ? ` (${this.setup.name} offered no option to ${answer.decision}: answered "cancelled")` : '';
    this.emit([this.normalizer.note(`permission ${verb} for ${describeSubject(request.subject)} by ${answer.decidedBy}: ${answer.reason}${unanswerable}`, request.toolCallId)]);
    return { outcome };
  }

  /**
   * The ACP stream over the child's stdio, tapped: every message goes past `onMessage`, and
   * `session/update` notifications become entries here, in the order they arrive, rather than in
   * the SDK (whose schema check would drop an update kind newer than itself, with a console
   * message). Permission requests pass on to the SDK, their tool call first made an entry here
   * for the same reason of order.
   */
  private stream(): Stream {
    const { stdin, stdout } = this.child;
    if (!stdin || !stdout) throw new SwitchboardError('SPAWN_FAILED', `${this.setup.name}: no stdio pipes`);
    const wire = ndJsonStream(Writable.toWeb(stdin) as WritableStream<Uint8Array>, Readable.toWeb(stdout) as ReadableStream<Uint8Array>);
    const onMessage = this.setup.onMessage;
    const trace = (direction: 'to_agent' | 'from_agent', message: AnyMessage): void => {
      try {
        onMessage?.(direction, message);
      } catch {
        // A tracer's bug must not break the connection it watches.
      }
    };
    const incoming = new TransformStream<AnyMessage, AnyMessage>({
      transform: (message, controller) => {
        trace('from_agent', message);
        const fields = asRecord(message);
        const replay = this.replay;
        if (replay && !replay.over) {
          if (fields?.method === methods.client.session.update && !('id' in fields)) {
            replay.updates++;
            return;
          }
          if (fields && 'id' in fields && !('method' in fields)) replay.over = true;
        }
        if (fields?.method === methods.client.session.update && !('id' in fields)) {
          this.emit(this.normalizer.update(fields.params));
          // After the update's entries, so that a reader puts each piece after what came before it.
          for (const text of this.normalizer.takePieces()) if (!this.entries.finished) this.pieceEmitter.fire({ text, afterSeq: this.entries.stats().lastSeq });
          return;
        }
        if (fields?.method === methods.client.session.requestPermission) this.emit(this.normalizer.permissionAsked(asRecord(fields.params)?.toolCall));
        controller.enqueue(message);
      },
    });
    const outgoing = new TransformStream<AnyMessage, AnyMessage>({
      transform: (message, controller) => {
        trace('to_agent', message);
        controller.enqueue(message);
      },
    });
    outgoing.readable.pipeTo(wire.writable).catch(() => undefined);
    return { readable: wire.readable.pipeThrough(incoming), writable: outgoing.writable };
  }

  /** Entries go into the session's store and the turn under way (none once the session is closed). */
  private emit(entries: NormalizedEntry[]): void {
    if (this.entries.finished) return;
    recordEntries(this.entries, this.turn, entries);
  }

  /** The agent exited on its own between turns: the log says so (a turn under way says it itself). */
  private exitedUnasked(): void {
    if (this.closing || this.turn || !this.acpSessionId || !this.exit) return;
    this.emit(this.normalizer.turnFailed(`${this.setup.name} ${describeExit(this.exit)} between turns${stderrSuffix(this.stderr)}`));
  }
}

/** A request that got no answer at all (the connection closed), rather than a refusal from the agent or from Switchboard. */
function isBrokenOff(error: unknown): boolean {
  return !(error instanceof RequestError) && !(error instanceof SwitchboardError);
}

const delay = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
