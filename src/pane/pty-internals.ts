/**
 * node-pty internals Switchboard relies on (node-pty is pinned to an exact version; pane tests
 * exercise every access here, and `checkPtyInternals` looks at each on the first pane, so an
 * upgrade that moves one fails loudly):
 * - `_writeStream._writeQueue` / `dispose`: node-pty queues writes the program has not read yet,
 *   retrying without bound; Switchboard caps that queue, and drops it when the program is gone so
 *   no retry writes to a closed descriptor.
 * - `_fd` (POSIX): the PTY's master descriptor, which node-pty 1.1.0 leaves inheritable
 *   (microsoft/node-pty#657); Switchboard marks it close-on-exec so no later program gets it.
 * - `_socket.destroy()`: closes the master, so a removed pane's terminal is released even while
 *   a process that escaped the pane still holds the other side. node-pty itself destroys it 200 ms
 *   after the program exits (`DESTROY_SOCKET_TIMEOUT_MS`), read or not, and its stream can end with
 *   bytes still in the terminal; `keepLastOutput` takes what is unread first.
 */
import { readSync } from 'node:fs';
import type { IPty } from 'node-pty';
import { isWindows } from '../platform/index.js';

interface WriteTask {
  buffer: Buffer;
  offset: number;
}

interface WriteStreamInternals {
  _writeQueue?: WriteTask[];
  dispose?: () => void;
}

interface SocketInternals {
  destroy?: (...args: unknown[]) => unknown;
  destroyed?: boolean;
  readableLength?: number;
  read?: () => unknown;
}

interface PtyInternals {
  _writeStream?: WriteStreamInternals;
  _fd?: unknown;
  _socket?: SocketInternals;
}

/** The master's own destroy, for `releaseMaster`: a pane let go of reads nothing more. */
const plainDestroy = new WeakMap<SocketInternals, (...args: unknown[]) => unknown>();

/**
 * At most this much is taken from a terminal at its release: a terminal holds far less unread
 * (about 13 KB here), so more can only come from a process that escaped the pane and still writes;
 * the pane parses it all at its exit, at once.
 */
const LAST_OUTPUT_LIMIT = 256 * 1024;

function internals(pty: IPty | undefined): PtyInternals | undefined {
  return pty as unknown as PtyInternals | undefined;
}

function writeStreamOf(pty: IPty | undefined): WriteStreamInternals | undefined {
  return internals(pty)?._writeStream;
}

/** Throws when a fresh PTY lacks an internal this module relies on (checked on the first pane). */
export function checkPtyInternals(pty: IPty): void {
  const fail = (what: string): never => {
    throw new Error(`unsupported node-pty version: ${what} is missing (Switchboard pins 1.1.0)`);
  };
  if (isWindows) return;
  const inner = internals(pty);
  if (!Array.isArray(inner?._writeStream?._writeQueue) || typeof inner._writeStream.dispose !== 'function') fail('UnixTerminal._writeStream');
  if (typeof inner?._fd !== 'number') fail('UnixTerminal._fd');
  if (typeof inner?._socket?.destroy !== 'function') fail('UnixTerminal._socket');
}

/** The PTY's master descriptor (POSIX), or undefined (Windows: ConPTY has handles, not descriptors). */
export function masterFd(pty: IPty | undefined): number | undefined {
  const fd = internals(pty)?._fd;
  return typeof fd === 'number' && fd >= 0 ? fd : undefined;
}

/** Closes the PTY's master (idempotent): the terminal is released and nothing more is read from it. */
export function releaseMaster(pty: IPty | undefined): void {
  const socket = internals(pty)?._socket;
  if (!socket || socket.destroyed === true) return;
  const destroy = plainDestroy.get(socket) ?? socket.destroy;
  destroy?.call(socket);
}

/**
 * Makes sure a program's last output is read before node-pty closes the terminal. The stream can
 * end while the terminal still holds a few KB (seen on Linux 6.18: the stream's end came with up
 * to 9 KB unread in most panes whose program wrote a burst and exited), and node-pty closes it
 * 200 ms after the program exits whether or not it was read, so a pane that had stopped reading
 * (its unparsed output over its share of memory) lost its program's last output every time. So
 * the master's destroy first hands over what is left, in order: the stream's buffer (through its
 * ordinary 'data' listeners), then the terminal's, read here until it is empty (the descriptor is
 * non-blocking, as libuv keeps every stream it polls) or closed. `deliver` gets the latter; the
 * destroy happens whatever the hand-over threw (`failed` hears it). On Windows ConPTY has no such
 * descriptor and nothing changes.
 */
export function keepLastOutput(pty: IPty, deliver: (chunk: Buffer) => void, failed: (err: unknown) => void): void {
  if (isWindows) return;
  const socket = internals(pty)?._socket;
  const fd = masterFd(pty);
  const destroy = socket?.destroy;
  if (!socket || fd === undefined || typeof destroy !== 'function') return;
  plainDestroy.set(socket, destroy);
  let handingOver = false;
  socket.destroy = (...args: unknown[]): unknown => {
    // Once: a destroy from inside the hand-over (a stream error on the way) just destroys.
    if (socket.destroyed !== true && !handingOver) {
      handingOver = true;
      try {
        takeUnread(socket, fd, deliver);
      } catch (err) {
        failed(err);
      }
    }
    return destroy.apply(socket, args);
  };
}

function takeUnread(socket: SocketInternals, fd: number, deliver: (chunk: Buffer) => void): void {
  // A paused stream's read() hands its buffer to the 'data' listeners, as flowing would have.
  while (socket.destroyed !== true && (socket.readableLength ?? 0) > 0 && socket.read?.() !== null);
  const buffer = Buffer.allocUnsafe(64 * 1024);
  let taken = 0;
  // Never a descriptor closed meanwhile (its number may be another file's by now).
  while (taken < LAST_OUTPUT_LIMIT && socket.destroyed !== true) {
    let bytes: number;
    try {
      bytes = readSync(fd, buffer);
    } catch {
      // EAGAIN: nothing more for now (a process that escaped the pane holds it open); EIO: closed.
      return;
    }
    if (bytes <= 0) return;
    deliver(Buffer.from(buffer.subarray(0, bytes)));
    taken += bytes;
  }
}

/** Bytes written to the PTY that the program has not taken yet (0 when unknown). */
export function pendingInputBytes(pty: IPty | undefined): number {
  const queue = writeStreamOf(pty)?._writeQueue;
  if (!Array.isArray(queue)) return 0;
  let total = 0;
  for (const task of queue) total += task.buffer.length - task.offset;
  return total;
}

/**
 * Takes back the input node-pty still holds for the program (typing that is withdrawn): of the
 * write under way only the character it is in the middle of is finished, so no half of a UTF-8
 * character is left for the program to read; the writes after it are dropped. The head task stays
 * in the queue, shortened in place: node-pty may have a write of it in flight, whose callback
 * shifts the queue. Returns the bytes taken back.
 */
export function withdrawQueuedInput(pty: IPty | undefined): number {
  const queue = writeStreamOf(pty)?._writeQueue;
  if (!Array.isArray(queue) || queue.length === 0) return 0;
  let dropped = 0;
  for (const task of queue.splice(1)) dropped += task.buffer.length - task.offset;
  const head = queue[0];
  if (head) {
    let end = head.offset;
    // UTF-8 continuation bytes (10xxxxxx) belong to the character already begun.
    while (end < head.buffer.length && ((head.buffer[end] ?? 0) & 0xc0) === 0x80) end++;
    dropped += head.buffer.length - end;
    head.buffer = head.buffer.subarray(0, end);
  }
  return dropped;
}

/** Forgets queued input and stops node-pty's retries (the program has exited). */
export function discardPendingInput(pty: IPty | undefined): void {
  const stream = writeStreamOf(pty);
  if (Array.isArray(stream?._writeQueue)) stream._writeQueue.length = 0;
  stream?.dispose?.();
}

/** The terminal device's name (/dev/pts/N) on Unix, or '' (node-pty keeps it in `_pty`). */
export function ptyDeviceName(pty: IPty | undefined): string {
  const name = (pty as unknown as { _pty?: unknown } | undefined)?._pty;
  return typeof name === 'string' ? name : '';
}
