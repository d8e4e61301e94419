/**
 * A run's reply as it streams: the pieces a CLI sends while the model writes (Claude Code's partial
 * messages, ACP's `agent_message_chunk`, Codex's deltas) become `token` events: the first at once,
 * the rest coalesced so that a model writing a character at a time costs at most one event per
 * COALESCE_MS; then the whole
 * message the CLI gives at the end of it adds only what the pieces did not already carry.
 *
 * Seed 004 asks for fine-grained streaming with the bridge batching events and the ledger not
 * drowning in them: this is that batching.
 */

/** At most one token event per this many milliseconds while pieces arrive. */
export const COALESCE_MS = 50;

export interface TokenStreamOptions {
  /** Records one token event with this text. */
  emit: (text: string) => void;
  /** Timers, replaceable in tests. */
  setTimer?: (fn: () => void, ms: number) => { cancel(): void };
}

const realTimer = (fn: () => void, ms: number): { cancel(): void } => {
  const t = setTimeout(fn, ms);
  return { cancel: () => clearTimeout(t) };
};

export class TokenStream {
  /** Text received and not yet emitted. */
  private pending = '';
  /** Everything streamed (emitted or pending) of the message under way. */
  private streamed = '';
  /**
   * Open for COALESCE_MS after each token event: pieces that come while it is open wait for its
   * end. The first piece after a quiet spell goes out at once, so a client sees the reply start
   * as soon as the CLI does, and the events stay at most one per COALESCE_MS.
   */
  private window: { cancel(): void } | undefined;
  private readonly setTimer: NonNullable<TokenStreamOptions['setTimer']>;

  constructor(private readonly options: TokenStreamOptions) {
    this.setTimer = options.setTimer ?? realTimer;
  }

  /** A piece of the reply as the CLI sent it. */
  piece(text: string): void {
    if (text === '') return;
    this.pending += text;
    this.streamed += text;
    if (!this.window) this.emitPending();
  }

  /** Emits what is pending now: before any other event is recorded, so that order is kept. */
  flush(): void {
    this.emitPending();
  }

  private emitPending(): void {
    if (this.pending === '') return;
    const text = this.pending;
    this.pending = '';
    this.options.emit(text);
    this.window?.cancel();
    this.window = this.setTimer(() => {
      this.window = undefined;
      this.emitPending();
    }, COALESCE_MS);
  }

  /**
   * The whole message, as the CLI gives it once it is written: what of it the pieces did not carry
   * (usually nothing), to be recorded as its own token. A message the pieces already went past
   * gives nothing; one that does not match them (a CLI that rewrote it) is given whole: a repeat is
   * better than a loss.
   */
  whole(message: string): string {
    this.flush();
    const streamed = this.streamed;
    if (streamed === '') return message;
    // The message carries all that streamed, and maybe more.
    if (message.startsWith(streamed)) {
      this.streamed = '';
      return message.slice(streamed.length);
    }
    // The pieces already went past it, into the next message (a CLI that gives one block at a time).
    if (streamed.startsWith(message)) {
      this.streamed = streamed.slice(message.length);
      return '';
    }
    this.streamed = '';
    return message;
  }

  /** Stops the timer (the run ended); pending text is emitted first. */
  close(): void {
    this.flush();
    this.window?.cancel();
    this.window = undefined;
  }
}
