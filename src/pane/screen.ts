import type { IBufferCell, IBufferNamespace } from '@xterm/headless';
import { Emitter, type Event } from '../core/emitter.js';
import type { Disposable } from '../core/disposable.js';
import { RowStore, type StoredRow } from './row-store.js';
import { serializeRowAnsi } from './ansi-row.js';
import { coreOf, Terminal, type BufferInternals, type CoreInternals, type HeadlessTerminal } from './xterm-internals.js';
import { rowText } from './row-text.js';
import { terminalEmulatorOptions } from '../platform/index.js';
import type { KeyModes } from './keys.js';

/**
 * A pane's rendered terminal: output is parsed by @xterm/headless, and rows leave xterm's (small)
 * scrollback for Switchboard's compact RowStore the moment they scroll off the top of the screen.
 *
 * Invariant: every row that has entered the normal buffer's scrollback is in `history`, in order.
 * Rows still in xterm's own scrollback are also in history's tail ("mirrored"); reads therefore
 * take history plus the visible screen and never xterm's scrollback.
 */

/** Drops trailing spaces, as tmux's capture-pane does: written blanks are no more text than empty cells. */
export function trimRowEnd(text: string): string {
  let end = text.length;
  while (end > 0 && text.charCodeAt(end - 1) === 32) end--;
  return end === text.length ? text : text.slice(0, end);
}

/** Rows xterm itself keeps above the screen: enough to harvest from and to survive a reflow. */
const XTERM_HEADROOM_ROWS = 200;

export interface ScreenOptions {
  cols: number;
  rows: number;
  /** Rows of history kept once they scroll off the screen. */
  scrollbackRows: number;
}

/** Where the cursor is, 0-based, and whether the program shows it. */
export interface CursorState {
  x: number;
  y: number;
  visible: boolean;
}

/** The last `n` rows of history plus screen, and how many rows there are in all. */
export interface TailResult {
  lines: string[];
  totalLines: number;
}

export class Screen implements Disposable {
  private readonly term: HeadlessTerminal;
  private readonly core: CoreInternals;
  /** The public buffer API, fetched once (each `term.buffer` access re-checks the proposed-API flag). */
  private readonly buffers: IBufferNamespace;
  private readonly history: RowStore;
  private readonly cell: IBufferCell | undefined;
  private readonly disposables: Disposable[] = [];
  private trimDisposable: Disposable | undefined;
  private normalBuffer: unknown;
  /** Rows trimmed from the top of the current normal buffer since it was created. */
  private trimmed = 0;
  /** `baseY + trimmed` when rows were last harvested: rows that had entered scrollback by then. */
  private entered = 0;
  /** Rows appended to history since the normal buffer was created or cleared (bounds "mirrored"). */
  private harvestedSinceReset = 0;
  private suspendHarvest = false;
  private windowTitle = '';

  private readonly replyEmitter = new Emitter<string>();
  private readonly titleEmitter = new Emitter<string>();
  /** Bytes the terminal answers to queries (cursor position, device attributes); write them back to the program. */
  readonly onReply: Event<string> = this.replyEmitter.event;
  /** The program set its window title (OSC 0/2). */
  readonly onTitleChange: Event<string> = this.titleEmitter.event;

  constructor(options: ScreenOptions) {
    this.term = new Terminal({
      cols: options.cols,
      rows: options.rows,
      scrollback: XTERM_HEADROOM_ROWS,
      allowProposedApi: true,
      logLevel: 'off',
      ...terminalEmulatorOptions(),
    });
    this.core = coreOf(this.term);
    this.buffers = this.term.buffer;
    this.history = new RowStore(options.scrollbackRows);
    this.cell = this.buffers.active.getNullCell();
    this.watchNormalBuffer();
    this.disposables.push(
      this.core.buffers.onBufferActivate(() => this.watchNormalBuffer()),
      this.term.onScroll(() => this.harvest()),
      this.term.onData((data) => this.replyEmitter.fire(data)),
      this.term.onBinary((data) => this.replyEmitter.fire(data)),
      this.term.onTitleChange((title) => {
        this.windowTitle = title;
        this.titleEmitter.fire(title);
      }),
      // ED3 (`CSI 3 J`, what `clear` sends) erases the scrollback: forget our copy of it too.
      this.term.parser.registerCsiHandler({ final: 'J' }, (params) => {
        if (params[0] === 3 && this.buffers.active.type === 'normal') {
          this.history.clear();
          this.harvestedSinceReset = 0;
        }
        return false;
      }),
    );
  }

  /** Parses program output synchronously. */
  write(data: Uint8Array | string): void {
    this.core.writeSync(data);
  }

  get cols(): number {
    return this.term.cols;
  }

  get rows(): number {
    return this.term.rows;
  }

  /** The title the program last set with OSC 0/2, or ''. */
  get title(): string {
    return this.windowTitle;
  }

  /** True while the program uses the alternate screen (full-screen TUIs). */
  get altScreen(): boolean {
    return this.buffers.active.type === 'alternate';
  }

  /** The program enabled bracketed paste (DECSET 2004). */
  get bracketedPaste(): boolean {
    return this.term.modes.bracketedPasteMode;
  }

  /** Modes that change how keys are encoded. */
  get keyModes(): KeyModes {
    return { applicationCursorKeys: this.term.modes.applicationCursorKeysMode };
  }

  /** Modes a re-rendering client (attach) must mirror so its input matches what the program expects. */
  get inputModes(): { bracketedPaste: boolean; applicationCursorKeys: boolean; mouseTracking: string; sendFocus: boolean } {
    const modes = this.term.modes;
    return {
      bracketedPaste: modes.bracketedPasteMode,
      applicationCursorKeys: modes.applicationCursorKeysMode,
      mouseTracking: modes.mouseTrackingMode,
      sendFocus: modes.sendFocusMode,
    };
  }

  get cursor(): CursorState {
    const buffer = this.buffers.active;
    return { x: buffer.cursorX, y: buffer.cursorY, visible: !this.core.coreService.isCursorHidden };
  }

  /** Number of history rows held (excluding the screen). */
  get historyLength(): number {
    return this.history.length;
  }

  /** Approximate bytes of history text held. */
  get historyBytes(): number {
    return this.history.approximateBytes;
  }

  /** The visible screen, one string per row, trailing blanks trimmed. */
  screenLines(): string[] {
    const buffer = this.core.buffers.active;
    const out: string[] = [];
    for (let y = 0; y < this.term.rows; y++) {
      const line = buffer.lines.get(buffer.ybase + y);
      out.push(line ? trimRowEnd(rowText(line)) : '');
    }
    return out;
  }

  /** The visible screen with SGR colour sequences, one string per row. */
  screenAnsiLines(): string[] {
    const buffer = this.buffers.active;
    const out: string[] = [];
    for (let y = 0; y < this.term.rows; y++) {
      const line = buffer.getLine(buffer.baseY + y);
      out.push(line ? serializeRowAnsi(line, this.term.cols, this.cell) : '');
    }
    return out;
  }

  /**
   * The last `n` lines of history and screen. Blank rows below both the cursor and the last
   * written row are left out. With `joinWrapped`, soft-wrapped rows are joined into one line.
   */
  tail(n: number, options: { joinWrapped?: boolean } = {}): TailResult {
    const screenRows = this.visibleRowsInUse();
    const joinWrapped = options.joinWrapped === true;
    const total = this.history.length + screenRows.length;
    if (!joinWrapped) {
      const want = Math.min(n, total);
      const fromScreen = Math.min(want, screenRows.length);
      const fromHistory = want - fromScreen;
      const lines = this.history.slice(this.history.length - fromHistory).map((r) => trimRowEnd(r.text));
      for (const row of screenRows.slice(screenRows.length - fromScreen)) lines.push(trimRowEnd(row.text));
      return { lines, totalLines: total };
    }
    // Walk backwards from the screen into history; a wrapped row continues the row above it, so
    // pieces gather until a row that starts a line.
    const logical: string[] = [];
    let pieces: string[] = [];
    for (const row of this.rowsBackwards(screenRows)) {
      if (logical.length >= n) break;
      pieces.push(row.text);
      if (!row.wrapped) {
        logical.push(trimRowEnd(pieces.reverse().join('')));
        pieces = [];
      }
    }
    // History may begin with the continuation of a line whose start was evicted.
    if (pieces.length > 0 && logical.length < n) logical.push(trimRowEnd(pieces.reverse().join('')));
    logical.reverse();
    return { lines: logical, totalLines: this.countLogicalLines(screenRows) };
  }

  /** Screen rows then history rows, newest first, read from history in chunks. */
  private *rowsBackwards(screenRows: StoredRow[]): Generator<StoredRow> {
    for (let i = screenRows.length - 1; i >= 0; i--) yield screenRows[i] as StoredRow;
    for (let end = this.history.length; end > 0; end -= 256) {
      const rows = this.history.slice(Math.max(0, end - 256), end);
      for (let i = rows.length - 1; i >= 0; i--) yield rows[i] as StoredRow;
    }
  }

  /** Resizes the screen; xterm reflows its rows and the history tail is re-mirrored without loss. */
  resize(cols: number, rows: number): void {
    if (cols === this.term.cols && rows === this.term.rows) return;
    this.harvest();
    const before = this.buffers.normal;
    const mirrored = Math.min(before.baseY, this.harvestedSinceReset, this.history.length);
    // Give xterm room so the reflow cannot drop rows off the top before we copy them.
    const growth = Math.ceil(this.term.cols / Math.max(1, cols)) + 1;
    const room = Math.min(1_000_000, (before.baseY + this.term.rows) * growth + rows + XTERM_HEADROOM_ROWS);
    this.suspendHarvest = true;
    try {
      this.term.options.scrollback = room;
      this.term.resize(cols, rows);
      this.history.truncate(this.history.length - mirrored);
      const after = this.core.buffers.normal;
      for (let i = 0; i < after.ybase; i++) this.appendFrom(after, i);
      this.harvestedSinceReset = after.ybase;
      this.term.options.scrollback = XTERM_HEADROOM_ROWS;
    } finally {
      this.suspendHarvest = false;
    }
    const normal = this.buffers.normal;
    this.harvestedSinceReset = Math.min(this.harvestedSinceReset, normal.baseY);
    this.entered = normal.baseY + this.trimmed;
  }

  dispose(): void {
    for (const d of this.disposables.splice(0)) d.dispose();
    this.trimDisposable?.dispose();
    this.replyEmitter.dispose();
    this.titleEmitter.dispose();
    this.term.dispose();
  }

  /** Copies rows that entered the normal buffer's scrollback since the last harvest. */
  private harvest(): void {
    if (this.suspendHarvest) return;
    const normal = this.core.buffers.normal;
    const base = normal.ybase;
    const enteredNow = base + this.trimmed;
    const fresh = enteredNow - this.entered;
    if (fresh <= 0) return;
    // Rows that entered are the last `fresh` ones above the screen; with the headroom and a harvest
    // on every scroll, they are all still there.
    for (let i = Math.max(0, base - fresh); i < base; i++) this.appendFrom(normal, i);
    this.entered = enteredNow;
  }

  private appendFrom(buffer: BufferInternals, index: number): void {
    const line = buffer.lines.get(index);
    if (!line) return;
    this.history.append(rowText(line), line.isWrapped);
    this.harvestedSinceReset += 1;
  }

  /** (Re)subscribes to trims of the normal buffer; a full reset (RIS) replaces that buffer. */
  private watchNormalBuffer(): void {
    const normal = this.core.buffers.normal;
    if (normal === this.normalBuffer) return;
    this.trimDisposable?.dispose();
    this.normalBuffer = normal;
    this.trimmed = 0;
    this.entered = this.buffers.normal.baseY;
    this.harvestedSinceReset = 0;
    this.trimDisposable = normal.lines.onTrim((amount) => {
      this.trimmed += amount;
    });
  }

  /** Screen rows up to the last one in use (written or holding the cursor). */
  private visibleRowsInUse(): StoredRow[] {
    const buffer = this.core.buffers.active;
    const rows: StoredRow[] = [];
    let lastUsed = this.buffers.active.cursorY;
    for (let y = 0; y < this.term.rows; y++) {
      const line = buffer.lines.get(buffer.ybase + y);
      const text = line ? rowText(line) : '';
      rows.push({ text, wrapped: line?.isWrapped ?? false });
      if (trimRowEnd(text) !== '') lastUsed = Math.max(lastUsed, y);
    }
    return rows.slice(0, lastUsed + 1);
  }

  private countLogicalLines(screenRows: StoredRow[]): number {
    let count = 0;
    for (const row of this.history.slice(0)) if (!row.wrapped) count += 1;
    for (const row of screenRows) if (!row.wrapped) count += 1;
    return count;
  }
}
