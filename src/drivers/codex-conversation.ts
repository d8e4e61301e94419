/**
 * Codex as a multi-turn session: one `codex exec --json` process per turn, the conversation kept
 * by Codex itself. The first turn is the profile's headless command; its `thread.started` line
 * names the thread, and every later turn is `codex exec resume <thread_id> --json … <prompt>`
 * (Codex 0.169.0: resume takes the same `--json` and `--skip-git-repo-check`, each resumed process
 * says `thread.started` again with the same id, and numbers its items from item_0 again).
 *
 * Permission requests never reach Switchboard here: `codex exec` cannot ask anyone, so it runs what
 * its own sandbox and approval settings allow (the sandbox HOME's config.toml, or `-c` overrides in
 * `args`) and refuses the rest itself. Cancelling a turn ends its process tree.
 *
 * `args` go to every turn, so they must be ones `exec resume` takes too: `-c key=value`, `-m`,
 * `--ephemeral`… but not `--sandbox`/`-s` or `--cd` (say `-c sandbox_mode=…` instead).
 */
import { SwitchboardError } from '../core/errors.js';
import { asString, EntryFactory, parseObjectLine, type NormalizedEntry, type Normalizer } from '../output/entry.js';
import { MsgStore } from '../output/msg-store.js';
import { CodexExecJsonNormalizer } from '../output/normalize-codex.js';
import { SCHEMA_VERSIONS } from '../output/stream-events.js';
import { AgentProcess, describeExit, stderrSuffix, type ProcessExit } from './agent-process.js';
import { AgentProgram, type SessionDriverOptions, type SessionLaunch } from './agent-program.js';
import type { DriverCapabilities, DriverHealth } from './headless-driver.js';
import type { Conversation, ConversationOptions, ConversationDriver, TurnResult } from './conversation.js';
import { cancelledBeforeStart, newSessionId, recordEntries, SESSION_MARKER, Turn } from './conversation-turn.js';

const TERMINATE_GRACE_MS = 2_000;

export class CodexConversationDriver implements ConversationDriver {
  private readonly program: AgentProgram;

  constructor(options: SessionDriverOptions = {}) {
    this.program = new AgentProgram('codex', options);
  }

  get name(): string {
    return this.program.name;
  }

  capabilities(): DriverCapabilities {
    // permissionRequests: false, because `codex exec` decides by its own sandbox settings (above).
    return { format: 'codex-exec-json', streaming: true, multiTurn: true, permissionRequests: false, schemaVersions: SCHEMA_VERSIONS };
  }

  health(): Promise<DriverHealth> {
    return this.program.health();
  }

  /** Checks the options and finds the program; no process runs until the first prompt. */
  open(options: ConversationOptions): Promise<Conversation> {
    if (options.signal?.aborted) return Promise.reject(new SwitchboardError('INVALID_REQUEST', 'the session was aborted before it opened'));
    try {
      return Promise.resolve(new CodexSession(this.program.launch(options), this.program.profile.data.headless_args ?? [], options));
    } catch (err) {
      return Promise.reject(err instanceof Error ? err : new Error(String(err)));
    }
  }
}

class CodexSession implements Conversation {
  readonly id = newSessionId();
  readonly entries: MsgStore<NormalizedEntry>;
  private threadId: string | null = null;
  private readonly own = new EntryFactory('codex-session');
  private turns = 0;
  private current: { turn: Turn; process: AgentProcess } | undefined;
  private lastProcess: AgentProcess | undefined;
  private closing: Promise<void> | undefined;
  private readonly onAbort = (): void => void this.close();

  constructor(
    private readonly launchSpec: SessionLaunch,
    private readonly headlessArgs: readonly string[],
    private readonly options: ConversationOptions,
  ) {
    this.entries = new MsgStore<NormalizedEntry>(options.store);
    options.signal?.addEventListener('abort', this.onAbort, { once: true });
  }

  get agentSessionId(): string | null {
    return this.threadId;
  }

  async prompt(text: string, options: { signal?: AbortSignal } = {}): Promise<TurnResult> {
    if (text.trim() === '') throw new SwitchboardError('INVALID_PARAMS', 'the prompt is empty');
    if (this.closing) throw new SwitchboardError('INVALID_REQUEST', 'the session is closed', { session: this.id });
    if (this.current) throw new SwitchboardError('INVALID_REQUEST', 'a turn is under way: one prompt at a time', { session: this.id });
    if (options.signal?.aborted) return cancelledBeforeStart();
    const number = ++this.turns;
    const turn = new Turn();
    // A normalizer per turn: each process numbers its items from item_0 again, and the normalizer
    // pairs commands with their results by those numbers.
    const normalizer: Normalizer = new CodexExecJsonNormalizer();
    let ending: 'turn.completed' | 'turn.failed' | undefined;
    const onLine = (line: string): void => {
      const obj = parseObjectLine(line);
      if (obj?.type === 'thread.started') this.threadId = asString(obj.thread_id) ?? this.threadId;
      if (obj?.type === 'turn.completed' || obj?.type === 'turn.failed') ending = obj.type;
      this.emit(turn, normalizer.line(line).map((e) => inTurn(e, number)));
    };
    this.emit(turn, [this.own.make('user_message', text)]);
    const { binary, env, args } = this.launchSpec;
    const proc = new AgentProcess({ binary, args: this.turnArgs(text, args), cwd: this.options.cwd, env, marker: { name: SESSION_MARKER, value: this.id }, input: false, onLine });
    this.current = { turn, process: proc };
    this.lastProcess = proc;
    const onAbort = (): void => void this.cancelTurn();
    options.signal?.addEventListener('abort', onAbort, { once: true });
    const exit = await proc.exited;
    options.signal?.removeEventListener('abort', onAbort);
    this.emit(turn, (normalizer.end?.() ?? []).map((e) => inTurn(e, number)));
    this.current = undefined;
    turn.finish(this.settle(turn, exit, ending, proc.stderrTail), ending ?? (turn.cancelRequested ? 'cancelled' : 'exited'));
    return turn.done;
  }

  async cancelTurn(): Promise<void> {
    const current = this.current;
    if (!current) return;
    current.turn.cancelRequested = true;
    await current.process.terminate(TERMINATE_GRACE_MS);
    await current.turn.done;
  }

  close(): Promise<void> {
    this.closing ??= this.shutDown();
    return this.closing;
  }

  private async shutDown(): Promise<void> {
    this.options.signal?.removeEventListener('abort', this.onAbort);
    try {
      await this.cancelTurn();
      // The marker finds anything an earlier turn left running.
      await this.lastProcess?.terminate(TERMINATE_GRACE_MS);
    } catch {
      // Ending the processes is best effort; the session is closed either way.
    }
    this.launchSpec.temp.release();
    this.entries.finish();
  }

  /**
   * The first turn is the profile's headless command; later ones resume its thread. Flags first,
   * then `--`, then the positionals: a prompt that starts with "-" is a prompt, not a flag.
   */
  private turnArgs(prompt: string, extra: readonly string[]): string[] {
    const flags = this.headlessArgs.filter((a) => a !== '{prompt}');
    if (!this.threadId) return [...flags, ...extra, '--', prompt];
    // `exec <flags> -- {prompt}` becomes `exec resume <flags> -- <thread_id> <prompt>`.
    return [...flags.flatMap((a) => (a === 'exec' ? ['exec', 'resume'] : [a])), ...extra, '--', this.threadId, prompt];
  }

  /** How the turn went, with an error entry (and the stderr tail) when the CLI did not say why it failed. */
  private settle(turn: Turn, exit: ProcessExit, ending: string | undefined, stderr: string): TurnResult['status'] {
    if (turn.cancelRequested) return 'cancelled';
    const saidError = turn.entries.some((e) => e.type === 'error');
    if (ending === 'turn.completed' && exit.code === 0 && !saidError) return 'completed';
    if (!saidError) {
      this.emit(turn, [this.own.make('error', `codex ${describeExit(exit)} before the turn completed${stderrSuffix(stderr)}`, { status: 'failed' })]);
    }
    return 'failed';
  }

  private emit(turn: Turn, entries: NormalizedEntry[]): void {
    recordEntries(this.entries, turn, entries);
  }
}

/**
 * An entry of turn `n` with ids unique in the session: every turn's normalizer counts from 1 and
 * every Codex process names its items from item_0, so both are qualified by the turn.
 */
function inTurn(entry: NormalizedEntry, n: number): NormalizedEntry {
  const toolCallId = entry.metadata?.toolCallId;
  return { ...entry, id: `t${n}-${entry.id}`, ...(entry.metadata ? { metadata: { ...entry.metadata, ...(toolCallId !== undefined ? { toolCallId: `t${n}-${toolCallId}` } : {}) } } : {}) };
}
