/**
 * node-pty internals Switchboard relies on (node-pty is pinned to an exact version; pane tests
 * exercise both). node-pty queues writes the program has not read yet, retrying without bound:
 * Switchboard caps that queue, and drops it when the program is gone so no retry writes to a closed
 * descriptor.
 */
import type { IPty } from 'node-pty';

interface WriteTask {
  buffer: Buffer;
  offset: number;
}

interface WriteStreamInternals {
  _writeQueue?: WriteTask[];
  dispose?: () => void;
}

function writeStreamOf(pty: IPty | undefined): WriteStreamInternals | undefined {
  return (pty as unknown as { _writeStream?: WriteStreamInternals } | undefined)?._writeStream;
}

/** Bytes written to the PTY that the program has not taken yet (0 when unknown). */
export function pendingInputBytes(pty: IPty | undefined): number {
  const queue = writeStreamOf(pty)?._writeQueue;
  if (!Array.isArray(queue)) return 0;
  let total = 0;
  for (const task of queue) total += task.buffer.length - task.offset;
  return total;
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
