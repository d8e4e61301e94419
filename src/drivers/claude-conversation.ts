/**
 * Claude Code as a multi-turn session: one `claude -p` process for the whole session, reading
 * prompts as stream-json lines on stdin and asking its permission questions on stdout
 * (`--permission-prompt-tool stdio`), which Switchboard's approval policy answers. It asks about
 * every tool call, not only those its own rules leave open (claude-ask-all.ts); a caller's
 * arguments that would turn that off are refused at open.
 *
 * The protocol as Claude Code 2.1.197 speaks it (tried against the real CLI):
 * - A prompt is `{"type":"user","message":{"role":"user","content":[{"type":"text","text":…}]},
 *   "parent_tool_use_id":null,"session_id":…}`. Each turn opens with a `system`/`init` line and
 *   ends with one `result` line; the process then waits for the next prompt.
 * - An `initialize` control request is not needed (a prompt alone works). It is sent at open all
 *   the same, so that `open()` resolves only once the CLI is up and reading the protocol.
 * - A permission question is a `control_request` of subtype `can_use_tool` (tool_name, input,
 *   tool_use_id), answered by a `control_response` carrying `{behavior:"allow",updatedInput}` or
 *   `{behavior:"deny",message}`. The CLI withdraws a question it no longer needs answered with a
 *   `control_cancel_request` (after an interrupt); a late answer is then ignored.
 * - An `interrupt` control request stops the turn: the CLI answers it, writes "[Request interrupted
 *   by user]" and a `result` of subtype error_during_execution, and takes the next prompt as usual.
 * - A control subtype the other side does not know is answered with subtype "error" (the CLI does
 *   the same to ours), so neither side waits for an answer that never comes.
 * - `--resume <id>` (2.1.332) continues a conversation of the same HOME and folder, under the same
 *   id; an id without a transcript ends the process before the handshake with a `result` whose
 *   errors say "No conversation found with session ID: <id>". A turn's prompt reaches the
 *   transcript (~/.claude/projects/<cwd>/<id>.jsonl) moments after the model request goes out,
 *   and after the CLI said the id: a process killed in between leaves nothing to resume.
 */
import { SwitchboardError, errorMessage } from '../core/errors.js';
import { asRecord, asString, EntryFactory, parseObjectLine, type NormalizedEntry, type Normalizer } from '../output/entry.js';
import { MsgStore } from '../output/msg-store.js';
import { ClaudeStreamJsonNormalizer } from '../output/normalize-claude.js';
import { SCHEMA_VERSIONS } from '../output/stream-events.js';
import { ASK_POLICY } from '../approvals/policy/index.js';
import { AgentProcess, describeExit, stderrSuffix, type ProcessExit } from './agent-process.js';
import { AgentProgram, type SessionDriverOptions, type SessionLaunch } from './agent-program.js';
import type { AgentCapabilities, AgentHealth } from './capabilities.js';
import { decidePermission, subjectForTool, type PermissionAnswer, type PermissionRequest } from './permission.js';
import { CLAUDE_ASK_ALL_ARGS, refuseArgsThatSilenceQuestions } from './claude-ask-all.js';
import type { Conversation, ConversationOptions, ConversationDriver, ReplyPiece, TurnResult } from './conversation.js';
import { Emitter } from '../core/emitter.js';
import { cancelledBeforeStart, newSessionId, recordEntries, resumeIdOf, resumeRefused, SESSION_MARKER, Turn } from './conversation-turn.js';

/**
 * The profile's headless arguments (`-p … --output-format stream-json --verbose`) without a prompt
 * of their own, plus stream-json input and permission questions on stdio.
 */
// --include-partial-messages: the reply's text deltas as the model writes them (stream_event lines).
// CLAUDE_ASK_ALL_ARGS: every tool call is a permission question first (claude-ask-all.ts).
export const CLAUDE_SESSION_ARGS = ['-p', '--input-format', 'stream-json', '--output-format', 'stream-json', '--verbose', '--include-partial-messages', '--permission-prompt-tool', 'stdio', ...CLAUDE_ASK_ALL_ARGS];
/** Generous: a cold start on a loaded machine takes seconds. */
const INITIALIZE_TIMEOUT_MS = 60_000;
/** A CLI that has not ended the turn this long after an interrupt is ended itself. */
const INTERRUPT_GRACE_MS = 15_000;
/** At close, how long an idle CLI gets to exit by itself once its input ends. */
const EXIT_ON_EOF_MS = 2_000;
const TERMINATE_GRACE_MS = 2_000;
/**
 * A CLI that ended before its handshake is started once more after this pause. It has done nothing
 * yet, and the usual cause passes: Claude Code reads ~/.claude.json as it starts and ends (code 1,
 * "configuration file … corrupted: JSON Parse error") when another Claude process of the same HOME
 * is writing it at that moment, as one run ending beside another's start does under load.
 */
const START_RETRY_PAUSE_MS = 500;

type Json = Record<string, unknown>;
type ControlAnswer = 'success' | 'error' | 'unanswered';
/** A process between its spawn and its handshake; `refused` is set when it ended refusing a resume. */
type Starting = { proc: AgentProcess; resuming: boolean; refused: string | undefined };

/** The error texts of a `result` line (`errors`, newer versions), joined. */
function resultErrors(result: Json): string {
  return Array.isArray(result.errors) ? result.errors.filter((e): e is string => typeof e === 'string').join('; ') : '';
}

export class ClaudeConversationDriver implements ConversationDriver {
  private readonly program: AgentProgram;

  constructor(options: SessionDriverOptions = {}) {
    this.program = new AgentProgram('claude', options);
  }

  get name(): string {
    return this.program.name;
  }

  capabilities(): AgentCapabilities {
    return { format: 'claude-stream-json', streaming: true, followUps: true, permissionRequests: true, schemaVersions: SCHEMA_VERSIONS };
  }

  health(): Promise<AgentHealth> {
    return this.program.health();
  }

  /** Starts the CLI and resolves once it answered the handshake. */
  async open(options: ConversationOptions): Promise<Conversation> {
    if (options.signal?.aborted) throw new SwitchboardError('INVALID_REQUEST', 'the session was aborted before it opened');
    refuseArgsThatSilenceQuestions(options.args ?? []);
    resumeIdOf(options);
    const session = new ClaudeSession(this.program.launch(options), options);
    await session.start();
    return session;
  }
}

class ClaudeSession implements Conversation {
  readonly id = newSessionId();
  readonly entries: MsgStore<NormalizedEntry>;
  private cliSessionId: string | null = null;
  /** One for the whole session, across respawns: its entry ids stay unique in the MsgStore. */
  private readonly normalizer: Normalizer = new ClaudeStreamJsonNormalizer();
  private readonly pieceEmitter = new Emitter<ReplyPiece>();
  readonly pieces = this.pieceEmitter.event;
  /** Entries the driver writes itself (the prompt, permission answers, a process that died). */
  private readonly own = new EntryFactory('claude-session');
  private process: AgentProcess | undefined;
  private lastProcess: AgentProcess | undefined;
  private turn: Turn | undefined;
  /** The CLI has written something since the turn's prompt, so it has begun the turn. */
  private turnBegun = false;
  private interruptWhenBegun = false;
  /** Our control requests waiting for the CLI's answer, by request id. */
  private readonly awaitingAnswer = new Map<string, (answer: ControlAnswer) => void>();
  /** The CLI's permission questions being decided, by request id. */
  private readonly deciding = new Map<string, { withdrawn: boolean }>();
  private requests = 0;
  /** The process being started, until it answers its handshake (or ends). */
  private starting: Starting | undefined;
  private closing: Promise<void> | undefined;
  private readonly onAbort = (): void => void this.close();

  constructor(
    private readonly launchSpec: SessionLaunch,
    private readonly options: ConversationOptions,
  ) {
    this.entries = new MsgStore<NormalizedEntry>(options.store);
  }

  get agentSessionId(): string | null {
    return this.cliSessionId;
  }

  async start(): Promise<void> {
    try {
      if (this.options.resume === undefined) await this.launch();
      else await this.launchResumed(this.options.resume);
    } catch (err) {
      await this.close();
      throw err;
    }
    this.options.signal?.addEventListener('abort', this.onAbort, { once: true });
    if (this.options.signal?.aborted) {
      await this.close();
      throw new SwitchboardError('INVALID_REQUEST', 'the session was aborted while it opened');
    }
  }

  async prompt(text: string, options: { signal?: AbortSignal } = {}): Promise<TurnResult> {
    if (text.trim() === '') throw new SwitchboardError('INVALID_PARAMS', 'the prompt is empty');
    if (this.closing) throw new SwitchboardError('INVALID_REQUEST', 'the session is closed', { session: this.id });
    if (this.turn) throw new SwitchboardError('INVALID_REQUEST', 'a turn is under way: one prompt at a time', { session: this.id });
    if (options.signal?.aborted) return cancelledBeforeStart();
    const turn = new Turn();
    this.turn = turn;
    this.turnBegun = false;
    this.interruptWhenBegun = false;
    // The process died since the last turn (it crashed, or an interrupt had to be forced): a new
    // one picks the conversation up where the CLI saved it.
    if (!this.process) {
      try {
        await this.launch();
      } catch (err) {
        // A process that died while starting has already ended the turn, with the reason.
        if (turn.over) return turn.done;
        this.turn = undefined;
        turn.finish('failed', null);
        throw err;
      }
    }
    const onAbort = (): void => void this.cancelTurn();
    options.signal?.addEventListener('abort', onAbort, { once: true });
    this.emit([this.own.make('user_message', text)]);
    const message = { type: 'user', message: { role: 'user', content: [{ type: 'text', text }] }, parent_tool_use_id: null, session_id: this.cliSessionId ?? '' };
    // A write that fails means the process is gone or going: its exit ends the turn as failed.
    const proc = this.process;
    if (proc && !proc.writeLine(JSON.stringify(message))) void proc.terminate(TERMINATE_GRACE_MS);
    try {
      return await turn.done;
    } finally {
      options.signal?.removeEventListener('abort', onAbort);
    }
  }

  async cancelTurn(): Promise<void> {
    const turn = this.turn;
    if (!turn) return;
    if (!turn.cancelRequested) {
      turn.cancelRequested = true;
      // An interrupt that arrives before the CLI began the turn would stop nothing.
      if (this.turnBegun) this.interrupt();
      else this.interruptWhenBegun = true;
      this.stopIfStuck(turn);
    }
    await turn.done;
  }

  close(): Promise<void> {
    this.closing ??= this.shutDown();
    return this.closing;
  }

  private async shutDown(): Promise<void> {
    this.options.signal?.removeEventListener('abort', this.onAbort);
    if (this.turn) this.turn.cancelRequested = true;
    const proc = this.process;
    try {
      if (proc) {
        proc.endInput();
        // Idle, the CLI ends by itself when its input ends (and saves the conversation as it does);
        // a turn under way is not waited for.
        if (!this.turn) await Promise.race([proc.exited, delay(EXIT_ON_EOF_MS)]);
      }
      // Also after a clean exit: the marker finds anything the CLI left running.
      await this.lastProcess?.terminate(TERMINATE_GRACE_MS);
    } catch {
      // Ending the processes is best effort; the session is closed either way.
    }
    this.launchSpec.temp.release();
    this.emit(this.normalizer.end?.() ?? []);
    this.entries.finish();
    this.pieceEmitter.dispose();
  }

  /**
   * Starts a CLI process (resuming the conversation if there is one) and waits for its handshake.
   * Claude Code writes its transcript only as the turn goes on, so a process killed early leaves no
   * conversation to resume: the CLI then ends at once with a `result` and no handshake. The prompt
   * starts a new conversation instead, and says so, as a new ACP session does.
   */
  private async launch(): Promise<void> {
    const resumed = this.cliSessionId;
    const refused = await this.launchStartingAgain(resumed);
    if (refused === undefined || resumed === null) return;
    this.cliSessionId = null;
    this.emit([this.own.make('system_message', `claude could not resume conversation ${resumed} (${refused}); starting a new conversation without its earlier context`)]);
    const again = await this.launchStartingAgain(null);
    if (again !== undefined) throw new SwitchboardError('SPAWN_FAILED', `claude ended before it was ready: ${again}`, { stderr: this.lastProcess?.stderrTail ?? '' });
  }

  /**
   * The first process of a session opened to continue an earlier conversation. Unlike a resume
   * after a death (launch), a refusal is not followed by a new conversation: the caller asked for
   * that one, so the open fails with the CLI's reason. The id is the conversation's until the
   * CLI's first turn says its own (the same one: 2.1.332 keeps it).
   */
  private async launchResumed(id: string): Promise<void> {
    const refused = await this.launchStartingAgain(id);
    if (refused !== undefined) throw resumeRefused('claude', `claude could not resume conversation ${id} (${refused})`, id, refused);
    this.cliSessionId = id;
    this.emit([this.own.make('system_message', `resumed conversation ${id}`)]);
  }

  private isClosing(): boolean {
    return this.closing !== undefined;
  }

  /** launchProcess, and once more when the CLI ended before its handshake (see START_RETRY_PAUSE_MS). */
  private async launchStartingAgain(resume: string | null): Promise<string | undefined> {
    try {
      return await this.launchProcess(resume);
    } catch (err) {
      if (!(err instanceof SwitchboardError) || err.code !== 'SPAWN_FAILED' || this.isClosing()) throw err;
      this.emit([this.own.make('system_message', `${errorMessage(err)}; starting it once more`)]);
      await delay(START_RETRY_PAUSE_MS);
      // Closed during the pause: nothing to start for.
      if (this.isClosing()) throw err;
      return await this.launchProcess(resume);
    }
  }

  /** One process and its handshake; resolves with the CLI's reason when it refused to resume (see launch). */
  private async launchProcess(resume: string | null): Promise<string | undefined> {
    const { binary, env, args } = this.launchSpec;
    // The last process may still be being ended (its input lost): its marker would find this one too.
    await this.lastProcess?.terminated;
    // Closed meanwhile: a process started now would outlive the session.
    if (this.isClosing()) throw new SwitchboardError('INVALID_REQUEST', 'the session was closed while it started claude', { session: this.id });
    const proc = new AgentProcess({
      binary,
      args: [...CLAUDE_SESSION_ARGS, ...(resume ? ['--resume', resume] : []), ...args],
      cwd: this.options.cwd,
      env,
      marker: { name: SESSION_MARKER, value: this.id },
      input: true,
      onLine: (line) => this.onLine(proc, line),
    });
    const starting: Starting = { proc, resuming: resume !== null, refused: undefined };
    this.starting = starting;
    this.process = proc;
    this.lastProcess = proc;
    void proc.exited.then((exit) => this.onExit(proc, exit));
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), INITIALIZE_TIMEOUT_MS);
    });
    // Any answer will do, even an error: it proves the CLI reads the protocol.
    const answered = this.control(proc, { subtype: 'initialize' }).then((answer) => (answer === 'unanswered' ? 'exited' : 'ready'));
    const outcome = await Promise.race([answered, timedOut]);
    clearTimeout(timer);
    if (this.starting === starting) this.starting = undefined;
    if (outcome === 'ready') return undefined;
    const exit = await proc.terminate(TERMINATE_GRACE_MS);
    if (starting.refused !== undefined) return starting.refused;
    if (outcome === 'timeout') throw new SwitchboardError('TIMEOUT', `claude did not answer its handshake within ${INITIALIZE_TIMEOUT_MS / 1000} s`, { stderr: proc.stderrTail });
    throw new SwitchboardError('SPAWN_FAILED', `claude ${describeExit(exit)} before it was ready${stderrSuffix(proc.stderrTail)}`, { binary, stderr: proc.stderrTail });
  }

  private onLine(proc: AgentProcess, line: string): void {
    const obj = parseObjectLine(line);
    // Control lines are the conversation between driver and CLI, not the agent's work.
    switch (obj?.type) {
      case 'control_request':
        this.onControlRequest(proc, obj);
        return;
      case 'control_response':
        this.onControlResponse(obj);
        return;
      case 'control_cancel_request': {
        const pending = this.deciding.get(asString(obj.request_id) ?? '');
        if (pending) pending.withdrawn = true;
        return;
      }
      case 'keep_alive':
        return;
    }
    const starting = this.starting;
    if (obj?.type === 'result' && starting?.proc === proc && starting.resuming) {
      // A result before the handshake is the CLI refusing the resume, not the end of a turn.
      starting.refused = resultErrors(obj) || asString(obj.subtype) || 'no reason given';
      return;
    }
    const sessionId = asString(obj?.session_id);
    if (sessionId) this.cliSessionId = sessionId;
    const turn = this.turn;
    if (turn && !this.turnBegun && line.trim() !== '') {
      this.turnBegun = true;
      if (this.interruptWhenBegun) this.interrupt();
    }
    if (obj?.type === 'result' && turn?.cancelRequested && obj.is_error === true) {
      // The CLI reports an interrupt as an execution error; it is the cancel the caller asked for.
      this.emit([this.own.make('system_message', `turn cancelled (${asString(obj.terminal_reason) ?? asString(obj.subtype) ?? 'interrupted'})`)]);
    } else this.emit(this.normalizer.line(line));
    const piece = replyPiece(obj);
    if (piece !== undefined && !this.entries.finished) this.pieceEmitter.fire({ text: piece, afterSeq: this.entries.stats().lastSeq });
    if (obj?.type === 'result') this.endTurn(obj);
  }

  private endTurn(result: Json): void {
    const turn = this.turn;
    if (!turn) return;
    this.turn = undefined;
    const failed = result.is_error === true || (typeof result.subtype === 'string' && result.subtype.startsWith('error'));
    turn.finish(failed ? (turn.cancelRequested ? 'cancelled' : 'failed') : 'completed', stopReasonOf(result));
  }

  private onExit(proc: AgentProcess, exit: ProcessExit): void {
    if (this.process === proc) this.process = undefined;
    for (const answer of this.awaitingAnswer.values()) answer('unanswered');
    this.awaitingAnswer.clear();
    for (const pending of this.deciding.values()) pending.withdrawn = true;
    // A refused resume is for whoever started it: launch starts afresh (the turn goes on), launchResumed fails the open.
    if (this.starting?.proc === proc && this.starting.refused !== undefined) return;
    const turn = this.turn;
    if (!turn) {
      if (!this.closing) this.emit([this.own.make('system_message', `claude ${describeExit(exit)} between turns; the next prompt starts it again${stderrSuffix(proc.stderrTail)}`)]);
      return;
    }
    const cancelled = turn.cancelRequested || this.closing !== undefined;
    if (cancelled) this.emit([this.own.make('system_message', `turn cancelled: claude ${describeExit(exit)}`)]);
    else {
      const how = proc.inputLost ? `stopped reading its input and ${describeExit(exit)}` : describeExit(exit);
      this.emit([this.own.make('error', `claude ${how} in the middle of the turn${stderrSuffix(proc.stderrTail)}`, { status: 'failed' })]);
    }
    this.turn = undefined;
    turn.finish(cancelled ? 'cancelled' : 'failed', cancelled ? 'cancelled' : 'exited');
  }

  /** Sends a control request; resolves with the CLI's answer, or 'unanswered' once it cannot come. */
  private control(proc: AgentProcess, request: Json): Promise<ControlAnswer> {
    const requestId = `sb-${++this.requests}`;
    return new Promise((resolve) => {
      this.awaitingAnswer.set(requestId, resolve);
      if (!proc.writeLine(JSON.stringify({ type: 'control_request', request_id: requestId, request }))) {
        this.awaitingAnswer.delete(requestId);
        resolve('unanswered');
      }
    });
  }

  private onControlResponse(obj: Json): void {
    const response = asRecord(obj.response);
    const requestId = asString(response?.request_id) ?? '';
    const answer = this.awaitingAnswer.get(requestId);
    this.awaitingAnswer.delete(requestId);
    answer?.(response?.subtype === 'success' ? 'success' : 'error');
  }

  private interrupt(): void {
    if (this.process) void this.control(this.process, { subtype: 'interrupt' });
  }

  /**
   * A CLI that does not stop when interrupted is stopped: the turn ends with its process, and the
   * next prompt resumes the conversation in a new one.
   */
  private stopIfStuck(turn: Turn): void {
    const timer = setTimeout(() => {
      if (this.turn === turn) void this.process?.terminate(TERMINATE_GRACE_MS);
    }, INTERRUPT_GRACE_MS);
    void turn.done.then(() => clearTimeout(timer));
  }

  private onControlRequest(proc: AgentProcess, obj: Json): void {
    const requestId = asString(obj.request_id);
    const request = asRecord(obj.request);
    if (!requestId) return; // nothing to answer to
    if (request?.subtype === 'can_use_tool') {
      void this.answerPermission(proc, requestId, request);
      return;
    }
    const subtype = asString(request?.subtype) ?? 'unknown';
    proc.writeLine(JSON.stringify({ type: 'control_response', response: { subtype: 'error', request_id: requestId, error: `Switchboard does not handle ${subtype} requests` } }));
  }

  /** Judges a permission question (policy, then callback, then deny) and answers it. */
  private async answerPermission(proc: AgentProcess, requestId: string, request: Json): Promise<void> {
    const toolName = asString(request.tool_name) ?? 'unknown';
    const input = asRecord(request.input) ?? {};
    const toolCallId = asString(request.tool_use_id);
    const question: PermissionRequest = { toolName, subject: subjectForTool(toolName, input), input, ...(toolCallId ? { toolCallId } : {}) };
    const pending = { withdrawn: false };
    this.deciding.set(requestId, pending);
    const turn = this.turn;
    let answer: PermissionAnswer;
    try {
      answer = await decidePermission(question, { policy: this.options.policy ?? ASK_POLICY, workdir: this.options.cwd, home: this.options.sandbox?.home, onPermission: this.options.onPermission, judge: this.options.judge });
    } catch (err) {
      answer = { request: question, decision: 'deny', reason: `denied: the request could not be judged (${errorMessage(err)})`, decidedBy: 'default' };
    }
    this.deciding.delete(requestId);
    // Withdrawn (an interrupt, the process gone): the CLI no longer waits for this answer.
    if (pending.withdrawn) return;
    turn?.permissions.push(answer);
    this.emit([this.own.make('system_message', `${answer.decision} ${toolName}: ${answer.reason}`, { toolName, toolInput: input })]);
    const response = answer.decision === 'allow' ? { behavior: 'allow', updatedInput: input } : { behavior: 'deny', message: answer.reason };
    proc.writeLine(JSON.stringify({ type: 'control_response', response: { subtype: 'success', request_id: requestId, response } }));
  }

  private emit(entries: NormalizedEntry[]): void {
    recordEntries(this.entries, this.turn, entries);
  }
}

/** Why the turn ended: how it ended where that is not plain completion, else the model's stop reason. */
function stopReasonOf(result: Json): string | null {
  const terminal = asString(result.terminal_reason);
  if (terminal && terminal !== 'completed') return terminal;
  return asString(result.stop_reason) ?? terminal ?? asString(result.subtype) ?? null;
}



const delay = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The text a `stream_event` line adds to the main agent's reply (a `text_delta` of a content block),
 * or undefined: a subagent's deltas (they name their parent tool call) are not the reply.
 */
export function replyPiece(obj: Record<string, unknown> | undefined): string | undefined {
  if (obj?.type !== 'stream_event' || (obj.parent_tool_use_id !== null && obj.parent_tool_use_id !== undefined)) return undefined;
  const event = asRecord(obj.event);
  const delta = asRecord(event?.delta);
  if (event?.type !== 'content_block_delta' || delta?.type !== 'text_delta') return undefined;
  const text = asString(delta.text);
  return text === undefined || text === '' ? undefined : text;
}
