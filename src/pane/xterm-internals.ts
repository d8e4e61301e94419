/**
 * The few xterm.js internals Switchboard relies on, checked once at start-up. @xterm/headless is
 * pinned to an exact version in package.json; the unit tests exercise every access here, so an
 * upgrade that moves them fails loudly instead of silently losing rows.
 *
 * - `writeSync`: parse output synchronously, so Switchboard schedules parsing fairly across panes
 *   itself instead of through xterm's per-terminal timers.
 * - the normal buffer's `lines.onTrim`: counts rows dropped from the top of xterm's own small
 *   scrollback, which keeps the harvest of rows into Switchboard's compact history exact.
 * - `buffers.onBufferActivate` / `buffers.normal`: notice when a full reset replaces the buffer.
 * - `coreService.isCursorHidden`: cursor visibility (DECTCEM) for screen snapshots.
 * - the buffers' `ybase` and `lines.get(i)._data`: read rows on hot paths (every row that scrolls
 *   off; the screen on every render while someone waits on it) without the public API's per-call
 *   wrapper objects; see row-text.ts.
 * - the input handler's `_parseBuffer` and its parser's handler tables: trimmed once per terminal
 *   (see trimTerminalSlack), the larger part of what an idle pane costs.
 */
import { createRequire } from 'node:module';
import type * as XtermHeadless from '@xterm/headless';
import type { InternalBufferLine } from './row-text.js';

type TerminalClass = typeof XtermHeadless.Terminal;
export type HeadlessTerminal = InstanceType<TerminalClass>;
export type TerminalOptions = ConstructorParameters<TerminalClass>[0];

let terminalClass: TerminalClass | undefined;

/**
 * A new headless terminal. xterm is loaded at the first one (a CommonJS bundle, so synchronously):
 * a daemon without panes does not hold its code (about 6 MiB of resident memory).
 */
export function newTerminal(options: TerminalOptions): HeadlessTerminal {
  terminalClass ??= (createRequire(import.meta.url)('@xterm/headless') as typeof XtermHeadless).Terminal;
  const terminal = new terminalClass(options);
  trimTerminalSlack(terminal);
  return terminal;
}

/**
 * UTF-32 code points xterm's input handler decodes a write into at first. xterm starts with 4,096
 * (16 KiB per terminal) and grows the buffer to the size of a larger write itself (up to its own
 * 128 Ki cap), so a quiet pane never needs more than its prompt's few hundred.
 */
const INITIAL_PARSE_BUFFER = 256;

interface ParserTablesInternals {
  _inputHandler?: {
    _parseBuffer?: unknown;
    _parser?: {
      _csiHandlers?: Record<number, unknown>;
      _escHandlers?: Record<number, unknown>;
      _oscParser?: { _handlers?: Record<number, unknown> };
      _dcsParser?: { _handlers?: Record<number, unknown> };
    };
  };
}

/**
 * Gives back what a new xterm terminal holds and does not use: measured on 120x30 panes, about
 * 40 KiB of the 187 KiB a terminal costs. xterm registers its ~190 escape-sequence handlers one
 * push each into empty arrays, which V8 grows to 17 slots for one handler (152 bytes, 24 once
 * copied), and decodes output into a 16 KiB buffer that it grows on demand anyway. The lists are
 * copied before anyone else registers a handler (ours, screen.ts, come after this). A dispose
 * closure of one registered before holds the old array: xterm's own are disposed one by one only
 * for its Windows wrapping heuristics (a `windowsPty` option changed after start), so a terminal
 * given one keeps its lists as they are.
 */
function trimTerminalSlack(terminal: HeadlessTerminal): void {
  // xterm's default is an empty object: only one that names a pseudo-terminal backend is a Windows one.
  if ((terminal.options as { windowsPty?: { backend?: unknown } }).windowsPty?.backend !== undefined) return;
  const handler = (terminal as unknown as { _core?: ParserTablesInternals })._core?._inputHandler;
  const parser = handler?._parser;
  if (!handler || !(handler._parseBuffer instanceof Uint32Array)) fail('InputHandler._parseBuffer');
  const tables = [parser?._csiHandlers, parser?._escHandlers, parser?._oscParser?._handlers, parser?._dcsParser?._handlers];
  for (const table of tables) {
    if (!table) fail('EscapeSequenceParser handler tables');
    for (const [key, list] of Object.entries(table)) {
      if (!Array.isArray(list)) fail('EscapeSequenceParser handler lists');
      table[Number(key)] = list.slice();
    }
  }
  if (handler._parseBuffer.length > INITIAL_PARSE_BUFFER) handler._parseBuffer = new Uint32Array(INITIAL_PARSE_BUFFER);
}

interface ListenerHandle {
  dispose(): void;
}

interface CircularListInternals {
  readonly length: number;
  get(index: number): InternalBufferLine | undefined;
  onTrim(listener: (amount: number) => void): ListenerHandle;
}

/** A buffer (normal or alternate): its rows and how many of them are above the screen. */
export interface BufferInternals {
  readonly lines: CircularListInternals;
  readonly ybase: number;
}

/** The internal surface of an xterm headless Terminal that Switchboard uses. */
export interface CoreInternals {
  writeSync(data: string | Uint8Array): void;
  buffers: {
    normal: BufferInternals;
    active: BufferInternals;
    onBufferActivate(listener: () => void): ListenerHandle;
  };
  coreService: { isCursorHidden: boolean };
}

function fail(what: string): never {
  throw new Error(`unsupported @xterm/headless version: ${what} is missing (Switchboard pins 6.0.0)`);
}

/** The checked internals of `terminal`. */
export function coreOf(terminal: HeadlessTerminal): CoreInternals {
  const core = (terminal as unknown as { _core?: Partial<CoreInternals> })._core;
  if (!core) fail('Terminal._core');
  if (typeof core.writeSync !== 'function') fail('CoreTerminal.writeSync');
  const buffers = core.buffers;
  if (!buffers || typeof buffers.onBufferActivate !== 'function') fail('BufferSet.onBufferActivate');
  if (typeof (buffers.active as Partial<BufferInternals> | undefined)?.lines?.get !== 'function') fail('BufferSet.active');
  const normal = buffers.normal as Partial<BufferInternals> | undefined;
  if (typeof normal?.lines?.onTrim !== 'function') fail('CircularList.onTrim');
  if (typeof normal.lines.get !== 'function' || typeof normal.ybase !== 'number') fail('Buffer.lines.get / Buffer.ybase');
  const line = normal.lines.get(0);
  if (!(line?._data instanceof Uint32Array) || typeof line._combined !== 'object') fail('BufferLine._data / _combined');
  if (typeof core.coreService?.isCursorHidden !== 'boolean') fail('CoreService.isCursorHidden');
  return core as CoreInternals;
}
