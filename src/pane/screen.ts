import type { IBufferCell, IBufferLine, IBufferNamespace } from '@xterm/headless';
import { Emitter, type Event } from '../core/emitter.js';
import { DisposableStore, type Disposable } from '../core/disposable.js';
import { RowStore, type StoredRow } from './row-store.js';
import { serializeRowAnsi } from './ansi-row.js';
import { coreOf, newTerminal, type BufferInternals, type CoreInternals, type HeadlessTerminal } from './xterm-internals.js';
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

/**
 * Rows xterm itself keeps above the screen. Every scroll is harvested as it happens (xterm fires
 * onScroll synchronously, after recycling only the oldest row), so one row would do; a few more
 * cost little. A reflow gets room of its own (resize). Each row here is 12 bytes per column of
 * typed arrays, so with 200 rows a flooding 120-column pane held 330 KiB here, rows that history
 * already had.
 */
const XTERM_HEADROOM_ROWS = 16;

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
/** A cell's colour: the terminal's default, one of the 16 (SGR 30-37/90-97), one of 256 (38;5;n), or RGB (0xRRGGBB). */
export interface CellColour {
  mode: 'default' | 'p16' | 'p256' | 'rgb';
  value: number;
}

/** One cell of a captured row, as drawn: its characters, width and style. */
export interface CapturedCell {
  chars: string;
  width: number;
  fg: CellColour;
  bg: CellColour;
  bold: boolean;
  dim: boolean;
  italic: boolean;
  underline: boolean;
  blink: boolean;
  inverse: boolean;
  invisible: boolean;
  strikethrough: boolean;
  overline: boolean;
}

/** One row as captureRows returns it. */
export interface CapturedRow {
  text: string;
  wrapped: boolean;
  /** The row's cells up to the last one written; only when asked for and still held by xterm. */
  cells?: CapturedCell[];
}

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
  private readonly disposables = new DisposableStore();
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
    this.term = newTerminal({
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
    this.disposables.addAll(
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

  /**
   * Rows that have scrolled off the top of the normal screen since it was created (or last
   * cleared), whatever history keeps: with a screen row added, that row's place in the output.
   */
  get scrolledRows(): number {
    return this.core.buffers.normal.ybase + this.trimmed;
  }

  /** Number of history rows held (excluding the screen). */
  get historyLength(): number {
    return this.history.length;
  }

  /** Approximate bytes of history text held. */
  get historyBytes(): number {
    return this.history.approximateBytes;
  }

  /**
   * The visible screen, one string per row, trailing blanks trimmed. With `joinWrapped`, a row the
   * terminal soft-wrapped (its text ran past the right edge) is joined to the row before it, whose
   * blanks up to the edge are kept, so that a word cut at the edge comes back whole: one string per
   * line the program wrote, fewer than the rows.
   */
  screenLines(options: { joinWrapped?: boolean } = {}): string[] {
    const buffer = this.core.buffers.active;
    // Untrimmed (the spaces the program wrote kept), so that a row and its continuation join as written.
    const raw: string[] = [];
    for (let y = 0; y < this.term.rows; y++) {
      const line = buffer.lines.get(buffer.ybase + y);
      const text = line ? rowText(line) : '';
      const above = raw.at(-1);
      if (options.joinWrapped === true && line?.isWrapped === true && above !== undefined) raw[raw.length - 1] = above + text;
      else raw.push(text);
    }
    return raw.map(trimRowEnd);
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

  /**
   * Rows [from, to) of history then screen, 0 being the oldest history row held: each row's text
   * (never-written cells at the end left out, written blanks kept), whether it continues the row
   * above, and with `styled` its cells' colours and attributes where xterm still holds the row (the
   * screen, and the tail of history it mirrors); older history rows come as text only.
   */
  captureRows(from: number, to: number, styled: boolean): CapturedRow[] {
    const historyLength = this.history.length;
    const total = historyLength + this.term.rows;
    const start = Math.max(0, from);
    const end = Math.min(total, to);
    const out: CapturedRow[] = [];
    if (start >= end) return out;
    const normal = this.core.buffers.normal;
    const mirrored = Math.min(this.buffers.normal.baseY, this.harvestedSinceReset, historyLength);
    if (start < historyLength) {
      const rows = this.history.slice(start, Math.min(end, historyLength));
      rows.forEach((row, i) => {
        const index = start + i;
        const fromXterm = styled && index >= historyLength - mirrored ? this.buffers.normal.getLine(normal.ybase - (historyLength - index)) : undefined;
        out.push({ text: row.text, wrapped: row.wrapped, ...(fromXterm ? { cells: readCells(fromXterm, this.cell) } : {}) });
      });
    }
    const active = this.core.buffers.active;
    for (let y = Math.max(0, start - historyLength); y < end - historyLength; y++) {
      const line = active.lines.get(active.ybase + y);
      const text = line ? rowText(line) : '';
      const row: CapturedRow = { text, wrapped: line?.isWrapped ?? false };
      if (styled) {
        const publicLine = this.buffers.active.getLine(this.buffers.active.baseY + y);
        if (publicLine) row.cells = readCells(publicLine, this.cell);
      }
      out.push(row);
    }
    return out;
  }

  /** Forgets every history row (the screen stays), as tmux's clear-history does. */
  clearHistory(): void {
    this.history.clear();
    this.harvestedSinceReset = 0;
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
    this.disposables.dispose();
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

function colourOf(mode: number, value: number): CellColour {
  // @xterm/headless's colour modes: 0 default, 0x1000000 the 16 colours, 0x2000000 the 256, 0x3000000 RGB.
  if (mode === 0x1000000) return { mode: 'p16', value };
  if (mode === 0x2000000) return { mode: 'p256', value };
  if (mode === 0x3000000) return { mode: 'rgb', value };
  return { mode: 'default', value: 0 };
}

/** A row's cells up to the last one holding anything (a character, or a visible style on a blank). */
function readCells(line: IBufferLine, scratch: IBufferCell | undefined): CapturedCell[] {
  let last = -1;
  let cell = scratch;
  for (let x = line.length - 1; x >= 0; x--) {
    cell = line.getCell(x, cell);
    if (!cell) break;
    if (cell.getCode() !== 0 || cell.getChars() !== '' || !cell.isBgDefault()) {
      last = x;
      break;
    }
  }
  const cells: CapturedCell[] = [];
  for (let x = 0; x <= last; x++) {
    cell = line.getCell(x, cell);
    if (!cell) break;
    const width = cell.getWidth();
    if (width === 0) continue;
    cells.push({
      chars: cell.getChars() || ' ',
      width,
      fg: colourOf(cell.getFgColorMode(), cell.getFgColor()),
      bg: colourOf(cell.getBgColorMode(), cell.getBgColor()),
      bold: cell.isBold() !== 0,
      dim: cell.isDim() !== 0,
      italic: cell.isItalic() !== 0,
      underline: cell.isUnderline() !== 0,
      blink: cell.isBlink() !== 0,
      inverse: cell.isInverse() !== 0,
      invisible: cell.isInvisible() !== 0,
      strikethrough: cell.isStrikethrough() !== 0,
      overline: cell.isOverline() !== 0,
    });
  }
  return cells;
}
