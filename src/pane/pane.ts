import { constants as osConstants } from 'node:os';
import { spawn as spawnPty, type IPty } from 'node-pty';
import { Emitter, type Event } from '../core/emitter.js';
import { Utf8Stream, incompleteUtf8Tail, leadingContinuationBytes } from '../core/utf8.js';
import { SwitchboardError, errorMessage } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import { killMarkedNow, killProcessGroupNow, setCloseOnExec, signalProcessTree, terminateProcessTree, type EnvMarker } from '../platform/index.js';
import { Screen, type CapturedRow, type CursorState, type TailResult } from './screen.js';
import { RawHistory, type RawRead } from './raw-history.js';
import { encodeKeys } from './keys.js';
import { checkPtyInternals, discardPendingInput, keepLastOutput, masterFd, pendingInputBytes, ptyDeviceName, releaseMaster, withdrawQueuedInput } from './pty-internals.js';
import type { RenderScheduler, Schedulable } from './render-scheduler.js';

/** How a pane's process ended. */
export interface ExitInfo {
  /** The exit status, or null when a signal ended it. */
  exitCode: number | null;
  /** The signal's name (SIGTERM, …), or null. */
  signal: string | null;
}

/** A chunk of output, in the order the screen parsed it. */
export interface PaneOutput {
  data: Buffer;
  /** Stream offset of data[0]. */
  offset: number;
  /**
   * The output decoded as UTF-8. A character split across chunks is held back and comes with the
   * next chunk, so `text` stands for the stream bytes [textOffset, textOffset + textBytes).
   */
  text: string;
  textOffset: number;
  textBytes: number;
}

/** Text of the raw history that lines up with the live stream (see Pane.readRawText). */
export interface RawText {
  text: string;
  offset: number;
  bytes: number;
  truncated: boolean;
}

/** Which agent CLI a pane runs, when it runs one. */
export interface PaneAgent {
  name: string;
  version: string | undefined;
}

/** Everything needed to start a pane's process; the registry fills in defaults. */
export interface PaneSpawnSpec {
  id: string;
  title: string;
  file: string;
  args: string[];
  /** The command as a person would read it, for listings. */
  commandText: string;
  cwd: string;
  env: Record<string, string>;
  cols: number;
  rows: number;
  scrollbackRows: number;
  rawHistoryBytes: number;
  agent?: PaneAgent;
}

export interface PaneDeps {
  scheduler: RenderScheduler;
  logger: Logger;
}

/** A snapshot of the visible screen. */
export interface ScreenSnapshot {
  lines: string[];
  cols: number;
  rows: number;
  cursor: CursorState;
  altScreen: boolean;
  windowTitle: string;
}

/** Set in every pane's environment to the pane's id; lets a kill find processes that daemonized. */
export const PANE_MARKER_VARIABLE = 'SWITCHBOARD_PANE_ID';

/**
 * Pending output above this pauses reading from the program (it blocks on a full PTY, as under
 * tmux), unless the pane was given a smaller limit (its share of the daemon's memory budget).
 */
const PENDING_HIGH_WATER = 4 * 1024 * 1024;
/** The smallest pending limit: a few parse slices, so parsing always has a batch to take. */
const MIN_PENDING_LIMIT = 128 * 1024;
/** Largest piece parsed in one go, so one pane cannot hold the event loop for long. */
const PARSE_SLICE_BYTES = 32 * 1024;
/** Input the program has not read yet above this is refused (it is not reading its terminal). */
const MAX_PENDING_INPUT = 4 * 1024 * 1024;

/** node-pty's internals are checked on the first pane of the process (pty-internals.ts). */
let internalsChecked = false;

const SIGNAL_NAMES = new Map<number, string>(Object.entries(osConstants.signals).map(([name, num]) => [num, name]));

/**
 * One program in a pseudo-terminal: the process, its rendered screen with bounded history, and a
 * bounded raw-output history. An exited pane keeps its screen for reading until it is removed.
 */
export class Pane implements Schedulable {
  readonly id: string;
  title: string;
  readonly commandText: string;
  readonly file: string;
  readonly args: readonly string[];
  readonly cwd: string;
  readonly createdAt: Date;
  readonly pid: number;
  /** The agent CLI this pane runs, if it was started as one. */
  readonly agent: PaneAgent | undefined;
  /**
   * The environment the program was started with (an agent's isolated HOME, CODEX_HOME…): where
   * its files are, for those that read them (the ask engine reads transcripts under that HOME).
   */
  readonly env: Readonly<Record<string, string>>;
  /** The terminal device (/dev/pts/N on Unix; '' where there is none to name). */
  readonly ttyName: string;

  private readonly screen: Screen;
  private readonly raw: RawHistory;
  private readonly scheduler: RenderScheduler;
  private readonly logger: Logger;
  private pty: IPty | undefined;
  /** The PTY until the pane is disposed (`pty` goes at exit), so disposal can release its master. */
  private master: IPty | undefined;
  private readonly pending: Buffer[] = [];
  private pendingBytes = 0;
  /** Pending output above this pauses reading; below a quarter of it, reading resumes. */
  private pendingLimit = PENDING_HIGH_WATER;
  private readingPaused = false;
  private exitInfo: ExitInfo | undefined;
  private exitedAt: Date | undefined;
  private readonly decoder = new Utf8Stream();
  private lastOutputAt = 0;
  private readonly exitWaiters: ((info: ExitInfo) => void)[] = [];
  private killing: Promise<ExitInfo> | undefined;

  private readonly outputEmitter = new Emitter<PaneOutput>();
  private readonly renderEmitter = new Emitter<void>();
  private readonly exitEmitter = new Emitter<ExitInfo>();
  /** Output, after the screen has parsed it. */
  readonly onOutput: Event<PaneOutput> = this.outputEmitter.event;
  /** The screen changed (fired once per parsed batch). */
  readonly onRender: Event<void> = this.renderEmitter.event;
  /** The process exited; all its output has been parsed by then. */
  readonly onExit: Event<ExitInfo> = this.exitEmitter.event;

  /** Starts `spec.file` in a new PTY; throws SPAWN_FAILED when the OS refuses. */
  constructor(spec: PaneSpawnSpec, deps: PaneDeps) {
    this.id = spec.id;
    this.title = spec.title;
    this.commandText = spec.commandText;
    this.file = spec.file;
    this.args = [...spec.args];
    this.cwd = spec.cwd;
    this.agent = spec.agent;
    this.env = Object.freeze({ ...spec.env });
    this.createdAt = new Date();
    this.scheduler = deps.scheduler;
    this.logger = deps.logger.child({ pane: spec.id });
    this.screen = new Screen({ cols: spec.cols, rows: spec.rows, scrollbackRows: spec.scrollbackRows });
    this.raw = new RawHistory(spec.rawHistoryBytes);
    let pty: IPty;
    try {
      pty = spawnPty(spec.file, spec.args, {
        name: spec.env.TERM ?? 'xterm-256color',
        cols: spec.cols,
        rows: spec.rows,
        cwd: spec.cwd,
        env: spec.env,
        encoding: null,
      });
    } catch (err) {
      this.screen.dispose();
      throw new SwitchboardError('SPAWN_FAILED', `could not start ${spec.file}: ${errorMessage(err)}`, { file: spec.file });
    }
    this.pty = pty;
    this.master = pty;
    this.pid = pty.pid;
    try {
      if (!internalsChecked) checkPtyInternals(pty);
      internalsChecked = true;
      // Before anything else can fork (this thread is the only one that spawns): no program started
      // from now on, later panes included, may inherit this pane's terminal and type into it.
      const fd = masterFd(pty);
      if (fd !== undefined) setCloseOnExec(fd);
    } catch (err) {
      killProcessGroupNow(pty.pid);
      releaseMaster(pty);
      this.screen.dispose();
      throw new SwitchboardError('SPAWN_FAILED', `could not start ${spec.file}: ${errorMessage(err)}`, { file: spec.file });
    }
    this.ttyName = ptyDeviceName(pty);
    // node-pty rethrows unexpected stream errors unless someone else listens: keep them from
    // taking the daemon down, and log them instead.
    (pty as unknown as { on(event: 'error', listener: (err: Error) => void): void }).on('error', (err) => {
      // EIO is how a PTY reports that its program is gone; anything else is worth a warning.
      if ((err as NodeJS.ErrnoException).code === 'EIO') this.logger.debug('pty closed', { error: err.message });
      else this.logger.warn('pty stream error', { error: err.message });
    });
    // Bytes on POSIX (encoding: null); the Windows backend always hands over strings.
    pty.onData((data: string | Buffer) => this.receive(typeof data === 'string' ? Buffer.from(data, 'utf8') : data));
    // What the program wrote last is read before node-pty closes the terminal, however it closes it.
    keepLastOutput(
      pty,
      (data) => this.receive(data),
      (err) => this.logger.warn('the last output of a pane was not all read', { error: errorMessage(err) }),
    );
    pty.onExit(({ exitCode, signal }) => this.handleExit(exitCode, signal));
    this.screen.onReply((reply) => {
      // The program asked the terminal something (cursor position, device attributes): answer it.
      if (this.pty && !this.exitInfo) this.pty.write(reply);
    });
  }

  /** True until the process has exited. */
  get alive(): boolean {
    return this.exitInfo === undefined;
  }

  get exit(): ExitInfo | undefined {
    return this.exitInfo;
  }

  get exitTime(): Date | undefined {
    return this.exitedAt;
  }

  get cols(): number {
    return this.screen.cols;
  }

  get rows(): number {
    return this.screen.rows;
  }

  /** The title the program set with OSC 0/2 (not the pane's own title). */
  get windowTitle(): string {
    return this.screen.title;
  }

  /** Bytes written by the program so far. */
  get outputBytes(): number {
    return this.raw.endOffset;
  }

  /** Stream offset of the oldest byte the raw history still holds (where a replay starts, give or take a split character). */
  get historyStart(): number {
    return this.raw.firstOffset;
  }

  /** Bytes received but not yet parsed. */
  get pendingOutputBytes(): number {
    return this.pendingBytes;
  }

  /** Bytes written to the program that the terminal has not taken yet (a program slow to read its input). */
  get pendingInputBytes(): number {
    return pendingInputBytes(this.pty);
  }

  /**
   * Stops input the terminal has not taken yet from going in (typing that is withdrawn): it is
   * dropped, save the rest of a character already half written. Input the terminal took stays:
   * the program reads it. Returns the bytes dropped.
   */
  withdrawUnsentInput(): number {
    return withdrawQueuedInput(this.pty);
  }

  /**
   * Sets how much unparsed output the pane may hold before it stops reading from the program (its
   * share of the daemon's memory; between 128 KiB and 4 MiB).
   */
  setPendingLimit(bytes: number): void {
    this.pendingLimit = Math.max(MIN_PENDING_LIMIT, Math.min(PENDING_HIGH_WATER, Math.floor(bytes)));
  }

  /** Milliseconds since the epoch at which output was last parsed, or 0. */
  get lastOutputTime(): number {
    return this.lastOutputAt;
  }

  get bracketedPaste(): boolean {
    return this.screen.bracketedPaste;
  }

  get inputModes(): Screen['inputModes'] {
    return this.screen.inputModes;
  }

  /** Writes raw input (as typed, escape sequences included); bytes go as they are (legacy mouse reports are not UTF-8). */
  write(data: string | Buffer): void {
    this.writable(data.length).write(data);
  }

  /** Types `text`; with `addNewline`, presses Enter as a separate write (TUIs treat one burst as a paste). */
  sendText(text: string, addNewline = false): void {
    const pty = this.writable(text.length + 1);
    if (text.length > 0) pty.write(text);
    if (addNewline) pty.write('\r');
  }

  /** Presses named keys (`Enter`, `C-c`, `Up`, …), honouring the program's cursor-key mode. */
  sendKeys(keys: readonly string[]): void {
    const encoded = encodeKeys(keys, this.screen.keyModes);
    this.writable(encoded.length).write(encoded);
  }

  /**
   * Pastes text as a terminal would: newlines become carriage returns, and the text is wrapped in
   * bracketed-paste markers when the program asked for them (or `mode` forces it). Returns whether
   * the paste was bracketed.
   */
  paste(text: string, mode: 'auto' | 'always' | 'never' = 'auto'): boolean {
    const pty = this.writable(text.length + 12);
    const bracketed = mode === 'always' || (mode === 'auto' && this.screen.bracketedPaste);
    // A pasted end marker would let the text escape the paste and run as typed input. Removing one
    // can join the pieces around it into a new one, so remove until none is left.
    let body = text;
    for (let previous = ''; previous !== body; ) {
      previous = body;
      body = body.replace(/\x1b\[20[01]~/g, '');
    }
    body = body.replace(/\r?\n/g, '\r');
    pty.write(bracketed ? `\x1b[200~${body}\x1b[201~` : body);
    return bracketed;
  }

  /** Resizes the PTY (the program gets SIGWINCH) and the rendered screen. */
  resize(cols: number, rows: number): void {
    if (this.pty && this.alive) this.pty.resize(cols, rows);
    this.drainAll();
    this.screen.resize(cols, rows);
  }

  /** The last `lines` lines of history and screen. */
  readText(lines: number, options: { joinWrapped?: boolean } = {}): TailResult {
    return this.screen.tail(lines, options);
  }

  /** The visible screen as plain text rows (cheaper than a snapshot). */
  screenLines(options: { joinWrapped?: boolean } = {}): string[] {
    return this.screen.screenLines(options);
  }

  /** The visible screen, plain or with SGR colours. */
  snapshot(options: { ansi?: boolean } = {}): ScreenSnapshot {
    return {
      lines: options.ansi ? this.screen.screenAnsiLines() : this.screen.screenLines(),
      cols: this.screen.cols,
      rows: this.screen.rows,
      cursor: this.screen.cursor,
      altScreen: this.screen.altScreen,
      windowTitle: this.screen.title,
    };
  }

  /** Rows [from, to) of history then screen, for a capture (see Screen.captureRows); parses pending output first. */
  captureRows(from: number, to: number, styled: boolean): CapturedRow[] {
    this.drainAll();
    return this.screen.captureRows(from, to, styled);
  }

  /** Rows that have scrolled off the top of the normal screen: a screen row's place in the output is this plus the row. */
  get scrolledRows(): number {
    this.drainAll();
    return this.screen.scrolledRows;
  }

  /** Rows of history held (above the screen). */
  get historyLength(): number {
    return this.screen.historyLength;
  }

  /** The cursor's place on the screen, 0-based. */
  get cursor(): CursorState {
    return this.screen.cursor;
  }

  /** True while the program uses the alternate screen. */
  get altScreen(): boolean {
    return this.screen.altScreen;
  }

  /** Forgets the history above the screen (tmux's clear-history). */
  clearHistory(): void {
    this.drainAll();
    this.screen.clearHistory();
  }

  /** Raw output from stream offset `from` (default: all that is held). */
  readRaw(from?: number): RawRead {
    return this.raw.read(from);
  }

  /**
   * The raw history as text that joins the live `onOutput` text without a gap or an overlap: it
   * starts at a character boundary and leaves out a character still waiting for its last bytes
   * (the live stream will carry it).
   */
  readRawText(): RawText {
    const raw = this.raw.read();
    const skip = leadingContinuationBytes(raw.data);
    const end = raw.data.length - incompleteUtf8Tail(raw.data);
    const body = raw.data.subarray(skip, Math.max(skip, end));
    return { text: body.toString('utf8'), offset: raw.from + skip, bytes: body.length, truncated: raw.truncated };
  }

  /** Approximate memory held by this pane's history, in bytes. */
  get historyBytes(): number {
    return this.screen.historyBytes + this.raw.heldBytes;
  }

  /** Resolves when the process has exited (at once if it has). */
  waitForExit(): Promise<ExitInfo> {
    if (this.exitInfo) return Promise.resolve(this.exitInfo);
    return new Promise((resolve) => this.exitWaiters.push(resolve));
  }

  /**
   * Ends the pane's whole process tree: `signal` (TERM by default) to every process in it, then
   * KILL after `graceMs`. Resolves with the exit once the pane's process is gone. For a pane that
   * already exited, ends what it left running in the background (found by its marker variable).
   */
  kill(options: { graceMs: number; signal?: NodeJS.Signals }): Promise<ExitInfo> {
    const exited = this.exitInfo;
    if (exited) {
      return terminateProcessTree(this.pid, { ...options, marker: this.marker, rootExited: true }).then(() => exited);
    }
    this.killing ??= this.terminate(options);
    return this.killing;
  }

  /** SIGKILL to the pane's process group, its tree and everything carrying its marker, at once, without waiting (a last resort). */
  killNow(): void {
    if (this.alive) {
      killProcessGroupNow(this.pid);
      signalProcessTree(this.pid, 'SIGKILL');
    }
    killMarkedNow(this.marker);
  }

  /** The variable every process of this pane inherits. */
  private get marker(): EnvMarker {
    return { name: PANE_MARKER_VARIABLE, value: this.id };
  }

  /** Releases the screen and, if still running, the process (killed at once). */
  dispose(): void {
    discardPendingInput(this.pty);
    if (this.pty && this.alive) killProcessGroupNow(this.pid);
    // The terminal goes with the pane, even while a process that escaped it holds the other side.
    releaseMaster(this.master);
    this.master = undefined;
    // Nothing may write to the descriptor just closed, even before the exit event comes.
    this.pty = undefined;
    this.scheduler.forget(this);
    this.pending.length = 0;
    this.pendingBytes = 0;
    this.outputEmitter.dispose();
    this.renderEmitter.dispose();
    this.exitEmitter.dispose();
    this.screen.dispose();
  }

  /** Parses queued output until `deadline` (performance.now() time); true while some is left. */
  drainUntil(deadline: number): boolean {
    let parsed = false;
    while (this.pending.length > 0) {
      this.parseSlice();
      parsed = true;
      if (performance.now() >= deadline) break;
    }
    if (parsed) this.afterParse();
    return this.pending.length > 0;
  }

  private async terminate(options: { graceMs: number; signal?: NodeJS.Signals }): Promise<ExitInfo> {
    // Input the program never read is moot once it is being ended; dropping it also stops node-pty
    // retrying writes into a descriptor that is about to close.
    if (!options.signal || options.signal === 'SIGKILL' || options.signal === 'SIGTERM' || options.signal === 'SIGHUP') discardPendingInput(this.pty);
    const result = await terminateProcessTree(this.pid, { ...options, marker: this.marker });
    if (result.survivors.length > 0) {
      this.logger.warn('processes survived SIGKILL', { survivors: result.survivors });
    }
    // The PTY reports the exit after its last output is read; don't wait forever if it never does.
    const exited = this.waitForExit();
    const timeout = new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 3_000).unref());
    const info = await Promise.race([exited, timeout]);
    if (info) return info;
    this.logger.warn('no exit event after kill; marking the pane exited');
    // Release the PTY: a survivor holding its other end would otherwise keep it open.
    releaseMaster(this.pty);
    this.handleExit(-1, 9);
    return this.exitInfo ?? { exitCode: null, signal: 'SIGKILL' };
  }

  /** The PTY to write `bytes` more to; throws PANE_EXITED, or LIMIT_EXCEEDED when the program is not reading. */
  private writable(bytes: number): IPty {
    if (!this.pty || this.exitInfo) {
      throw new SwitchboardError('PANE_EXITED', `pane ${this.id} has exited`, { pane_id: this.id });
    }
    // A pane being ended takes no more input: its descriptor closes when the program goes, and a
    // write node-pty still held then would land on a closed descriptor (or one reused since).
    if (this.killing) {
      throw new SwitchboardError('PANE_EXITED', `pane ${this.id} is being closed`, { pane_id: this.id });
    }
    const pending = pendingInputBytes(this.pty);
    if (pending > 0 && pending + bytes > MAX_PENDING_INPUT) {
      throw new SwitchboardError('LIMIT_EXCEEDED', `pane ${this.id} is not reading its input (${pending} bytes waiting)`, { pane_id: this.id, pending_bytes: pending });
    }
    return this.pty;
  }

  /** Fires an event; a throwing listener is logged and does not stop parsing or the scheduler. */
  private fireSafely<T>(emitter: Emitter<T>, event: T, what: string): void {
    try {
      emitter.fire(event);
    } catch (err) {
      this.logger.error(`a ${what} listener failed`, { error: err instanceof Error ? (err.stack ?? err.message) : String(err) });
    }
  }

  private receive(data: Buffer): void {
    if (this.exitInfo) return;
    this.pending.push(data);
    this.pendingBytes += data.length;
    if (!this.readingPaused && this.pendingBytes > this.pendingLimit && this.pty) {
      this.readingPaused = true;
      this.pty.pause();
    }
    this.scheduler.schedule(this);
  }

  private parseSlice(): void {
    const head = this.pending[0];
    if (!head) return;
    let chunk: Buffer;
    if (head.length > PARSE_SLICE_BYTES) {
      chunk = head.subarray(0, PARSE_SLICE_BYTES);
      this.pending[0] = head.subarray(PARSE_SLICE_BYTES);
    } else {
      chunk = head;
      this.pending.shift();
    }
    this.pendingBytes -= chunk.length;
    const offset = this.raw.endOffset;
    this.screen.write(chunk);
    this.raw.append(chunk);
    // Decoded even without listeners, so a subscriber joining later starts in step with the stream.
    const piece = this.decoder.push(chunk, offset);
    if (this.outputEmitter.listenerCount > 0) {
      this.fireSafely(this.outputEmitter, { data: chunk, offset, text: piece.text, textOffset: piece.offset, textBytes: piece.bytes }, 'output');
    }
  }

  private afterParse(): void {
    this.lastOutputAt = Date.now();
    if (this.readingPaused && this.pendingBytes < this.pendingLimit / 4 && this.pty) {
      this.readingPaused = false;
      this.pty.resume();
    }
    this.fireSafely(this.renderEmitter, undefined, 'render');
  }

  /** Parses everything queued, now (before exit, resize and reads that must see all output). */
  drainAll(): void {
    if (this.pending.length === 0) return;
    while (this.pending.length > 0) this.parseSlice();
    this.afterParse();
  }

  private handleExit(exitCode: number, signal: number | undefined): void {
    if (this.exitInfo) return;
    this.drainAll();
    this.scheduler.forget(this);
    const signalName = signal ? (SIGNAL_NAMES.get(signal) ?? `SIG${signal}`) : null;
    this.exitInfo = { exitCode: signalName ? null : exitCode, signal: signalName };
    this.exitedAt = new Date();
    discardPendingInput(this.pty);
    this.pty = undefined;
    this.logger.debug('pane exited', { ...this.exitInfo });
    for (const resolve of this.exitWaiters.splice(0)) resolve(this.exitInfo);
    this.fireSafely(this.exitEmitter, this.exitInfo, 'exit');
  }
}
