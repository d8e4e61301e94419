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
 */
import xtermHeadless from '@xterm/headless';

export const { Terminal } = xtermHeadless;
export type HeadlessTerminal = InstanceType<typeof Terminal>;

interface ListenerHandle {
  dispose(): void;
}

interface CircularListInternals {
  onTrim(listener: (amount: number) => void): ListenerHandle;
}

interface BufferInternals {
  lines: CircularListInternals;
}

/** The internal surface of an xterm headless Terminal that Switchboard uses. */
export interface CoreInternals {
  writeSync(data: string | Uint8Array): void;
  buffers: {
    normal: BufferInternals;
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
  if (typeof (buffers.normal as Partial<BufferInternals> | undefined)?.lines?.onTrim !== 'function') fail('CircularList.onTrim');
  if (typeof core.coreService?.isCursorHidden !== 'boolean') fail('CoreService.isCursorHidden');
  return core as CoreInternals;
}
