/**
 * One pane's terminal I/O over `/ws/pane/<id>`: binary frames of output (a replay of recent
 * output first, then live) and JSON control messages; input goes back as binary frames, size
 * changes as JSON. Every (re)connect replays the screen, so the owner resets its terminal on
 * `reset` and nothing is doubled. After the program exits there is nothing more to read, so a
 * close then is final.
 */
import type { Unsubscribe } from '../rpc/emitter.js';
import { ReconnectingSocket, type ConnectionStatus } from '../rpc/reconnecting-socket.js';
import { socketUrl } from '../rpc/socket-url.js';
import type { PaneControlMessage } from '../rpc/wire.js';

export interface PaneSocketHandlers {
  output(bytes: Uint8Array): void;
  /** Clear the terminal: a replay (after a reconnect) or a repaint (the server asked) follows. */
  reset(): void;
  exit(exitCode: number | null, signal: string | null): void;
  /** The server refused a frame this client sent (a size out of range, say). */
  error(message: string): void;
}

const encoder = new TextEncoder();
/**
 * Flow control: the server keeps at most this much output in flight that the terminal has not
 * processed yet; past it, it skips to a repaint. Bounded work per pane keeps the page (and every
 * other pane in it) responsive while one program floods.
 */
const FLOW_WINDOW = 512 * 1024;
/** Acknowledgements go out in steps this big (one small frame per step). */
const ACK_STEP = 64 * 1024;

function parseControl(text: string): PaneControlMessage | undefined {
  try {
    const message = JSON.parse(text) as unknown;
    if (typeof message === 'object' && message !== null && 'type' in message) return message as PaneControlMessage;
  } catch {
    // Not JSON: not a message this client knows.
  }
  return undefined;
}

export class PaneSocket {
  private readonly socket: ReconnectingSocket;
  private size: { cols: number; rows: number } | undefined;
  private exited = false;
  private processed = 0;

  constructor(paneId: string, handlers: PaneSocketHandlers) {
    this.socket = new ReconnectingSocket(socketUrl(`/ws/pane/${encodeURIComponent(paneId)}`), 'arraybuffer');
    this.socket.onOpen(() => {
      this.processed = 0;
      this.socket.send(JSON.stringify({ type: 'flow', window: FLOW_WINDOW }));
      handlers.reset();
      if (this.size) this.sendSize(this.size);
    });
    this.socket.onMessage((event) => {
      if (event.data instanceof ArrayBuffer) {
        handlers.output(new Uint8Array(event.data));
        return;
      }
      if (typeof event.data !== 'string') return;
      const control = parseControl(event.data);
      if (control?.type === 'reset') handlers.reset();
      else if (control?.type === 'exit') {
        this.exited = true;
        handlers.exit(control.exit_code, control.signal);
      } else if (control?.type === 'error') handlers.error(control.message);
    });
    this.socket.onClose(() => {
      if (this.exited) this.socket.stop();
    });
  }

  get status(): ConnectionStatus {
    return this.socket.status;
  }

  onStatus(listener: (status: ConnectionStatus) => void): Unsubscribe {
    return this.socket.onStatus(listener);
  }

  retryNow(): void {
    this.socket.retryNow();
  }

  /** The terminal has processed `bytes` more of the output (xterm's write callback). */
  processedOutput(bytes: number): void {
    this.processed += bytes;
    if (this.processed < ACK_STEP) return;
    this.socket.send(JSON.stringify({ type: 'ack', bytes: this.processed }));
    this.processed = 0;
  }

  /** Typed text, as xterm's onData gives it. */
  sendText(data: string): void {
    this.socket.send(encoder.encode(data));
  }

  /** Raw bytes, as xterm's onBinary gives them: one character per byte (mouse reports in X10 mode). */
  sendBinary(data: string): void {
    const bytes = new Uint8Array(data.length);
    for (let i = 0; i < data.length; i++) bytes[i] = data.charCodeAt(i) & 0xff;
    this.socket.send(bytes);
  }

  /** The terminal's size; remembered and sent again after every reconnect. */
  resize(cols: number, rows: number): void {
    this.size = { cols, rows };
    this.sendSize(this.size);
  }

  dispose(): void {
    this.socket.stop();
  }

  private sendSize(size: { cols: number; rows: number }): void {
    this.socket.send(JSON.stringify({ type: 'resize', cols: size.cols, rows: size.rows }));
  }
}
