/**
 * A message transport over a byte stream (TCP, a Unix socket, a named pipe): newline-delimited
 * JSON, one message per line (framing.ts), for the server and the client alike.
 */
import type { Socket } from 'node:net';
import { LineFramer } from './framing.js';
import type { MessageTransport, TransportReceiver } from './transport.js';

/** How long a graceful close waits for the other end before the socket is destroyed. */
const GRACEFUL_CLOSE_MS = 1_000;

export class LineTransport implements MessageTransport {
  private readonly framer: LineFramer;
  private error: Error | undefined;

  constructor(
    private readonly socket: Socket,
    options: { maxLineBytes: number },
  ) {
    this.framer = new LineFramer(options.maxLineBytes);
    socket.setNoDelay(true);
  }

  /** True while part of a line has arrived and its end has not. */
  get hasPartialLine(): boolean {
    return this.framer.hasPartialLine;
  }

  start(receiver: TransportReceiver): void {
    const socket = this.socket;
    socket.on('data', (chunk: Buffer) => {
      receiver.receive(this.framer.push(chunk).map((event) => (event.kind === 'oversize' ? event : { kind: 'message' as const, data: event.line })));
    });
    socket.on('drain', () => receiver.drained());
    socket.on('end', () => receiver.endOfInput());
    socket.on('error', (err) => {
      this.error ??= err;
    });
    socket.on('close', () => receiver.closed(this.error));
  }

  send(json: string): void {
    if (!this.socket.destroyed) this.socket.write(`${json}\n`);
  }

  get unreadBytes(): number {
    return this.socket.writableLength;
  }

  pause(): void {
    this.socket.pause();
  }

  resume(): void {
    this.socket.resume();
  }

  close(graceful: boolean): void {
    if (graceful) {
      this.socket.end();
      setTimeout(() => this.socket.destroy(), GRACEFUL_CLOSE_MS).unref();
    } else {
      this.socket.destroy();
    }
  }

  end(): void {
    this.socket.end();
  }
}
