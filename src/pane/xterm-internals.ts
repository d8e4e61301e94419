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
  return new terminalClass(options);
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
