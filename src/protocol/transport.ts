/**
 * A connection as a pair of message streams, whatever carries it (a socket's lines, a WebSocket's
 * frames, memory): one end sends whole messages (serialized JSON) and receives the other's, with
 * backpressure both ways. The server's peer (surfaces/rpc/peer.ts) and the client
 * (client/client.ts) speak over this, so a test connects both ends in memory (memory-transport.ts).
 */

/** One incoming unit: a message's bytes, one too large to take (counted, not kept), or one the transport refused (why). */
export type TransportInput = { kind: 'message'; data: Buffer } | { kind: 'oversize'; bytes: number } | { kind: 'refused'; reason: string };

/** What a transport tells the end that owns it. */
export interface TransportReceiver {
  /** Messages from the other end, in order. */
  receive(inputs: readonly TransportInput[]): void;
  /** The other end finished sending (a half-close: it still reads what we send). */
  endOfInput(): void;
  /** The other end took some of what we sent and it had not read. */
  drained(): void;
  /** The connection is gone, closed by either end or failed (`error` when it failed). */
  closed(error?: Error): void;
}

/** One end of a connection carrying whole messages. */
export interface MessageTransport {
  /** Starts delivering to `receiver` (what arrived before is delivered first). */
  start(receiver: TransportReceiver): void;
  /** Sends one message (serialized JSON, without a delimiter: the transport adds its own). */
  send(json: string): void;
  /** Bytes sent that the other end has not taken yet. */
  readonly unreadBytes: number;
  /** Stops reading the other end's messages (backpressure), and starts again. */
  pause(): void;
  resume(): void;
  /** Closes: `graceful` lets what was sent already reach the other end first. */
  close(graceful: boolean): void;
  /** Finishes our side (the other end still sends until it is done). */
  end(): void;
}
