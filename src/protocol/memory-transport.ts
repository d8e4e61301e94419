/**
 * Two ends of a connection in memory, for tests: what one end sends, the other receives, in order
 * and never in the same turn (as with a socket), with the same backpressure: while an end is
 * paused, what it is sent waits and counts as the sender's unread bytes, and the sender hears
 * `drained` once it is taken.
 */
import type { MessageTransport, TransportInput, TransportReceiver } from './transport.js';

export interface MemoryTransportOptions {
  /** Messages larger than this arrive as `oversize` (as a line over the framer's limit does). */
  maxMessageBytes?: number;
}

class MemoryTransport implements MessageTransport {
  other: MemoryTransport | undefined;
  private receiver: TransportReceiver | undefined;
  private readonly inbox: TransportInput[] = [];
  private inboxBytes = 0;
  private paused = false;
  private scheduled = false;
  private inputEnded = false;
  private endDelivered = false;
  private isClosed = false;
  /** A graceful close waiting for what this end was sent to be delivered first. */
  private closeWhenDelivered: (() => void) | undefined;

  constructor(private readonly maxMessageBytes: number) {}

  start(receiver: TransportReceiver): void {
    this.receiver = receiver;
    this.schedule();
  }

  send(json: string): void {
    if (this.isClosed) return;
    this.other?.arrive(json);
  }

  get unreadBytes(): number {
    return this.other?.inboxBytes ?? 0;
  }

  pause(): void {
    this.paused = true;
  }

  resume(): void {
    this.paused = false;
    this.schedule();
  }

  close(graceful: boolean): void {
    const other = this.other;
    if (graceful && other && !other.isClosed && other.inbox.length > 0) {
      other.closeWhenDelivered = () => this.close(false);
      return;
    }
    this.shut();
    other?.shut();
  }

  end(): void {
    const other = this.other;
    if (!other || other.isClosed) return;
    other.inputEnded = true;
    other.schedule();
  }

  private arrive(json: string): void {
    if (this.isClosed) return;
    const data = Buffer.from(json, 'utf8');
    this.inbox.push(data.length > this.maxMessageBytes ? { kind: 'oversize', bytes: data.length } : { kind: 'message', data });
    this.inboxBytes += data.length + 1;
    this.schedule();
  }

  private shut(): void {
    if (this.isClosed) return;
    this.isClosed = true;
    this.inbox.length = 0;
    this.inboxBytes = 0;
    setImmediate(() => this.receiver?.closed());
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.deliver();
    });
  }

  /** Open, started and reading (a receiver's callback may pause or close it mid-delivery). */
  private reading(): boolean {
    return this.receiver !== undefined && !this.isClosed && !this.paused;
  }

  private deliver(): void {
    const receiver = this.receiver;
    if (!receiver || !this.reading()) return;
    if (this.inbox.length > 0) {
      const inputs = this.inbox.splice(0);
      this.inboxBytes = 0;
      receiver.receive(inputs);
      this.other?.receiver?.drained();
      const close = this.closeWhenDelivered;
      this.closeWhenDelivered = undefined;
      close?.();
    }
    if (this.inputEnded && !this.endDelivered && this.inbox.length === 0 && this.reading()) {
      this.endDelivered = true;
      receiver.endOfInput();
    }
  }
}

/** Two connected ends: [a, b], what a sends b receives and back. */
export function memoryTransportPair(options: MemoryTransportOptions = {}): [MessageTransport, MessageTransport] {
  const max = options.maxMessageBytes ?? Number.POSITIVE_INFINITY;
  const a = new MemoryTransport(max);
  const b = new MemoryTransport(max);
  a.other = b;
  b.other = a;
  return [a, b];
}
