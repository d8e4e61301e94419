/**
 * A pane's terminal over one WebSocket: output as binary frames (a replay of recent output first,
 * then live, joined without a gap: the attach operation, api/terminal-attach.ts), keystrokes back
 * as binary frames, resize and exit as small JSON text frames. A browser that reads too slowly is
 * never queued for without bound: past the high mark, output stops; once the socket drains, the
 * client is told to reset and gets the screen as it is now, so it catches up with nothing doubled.
 */
import type { WebSocket } from 'ws';
import type { Logger } from '../../core/logger.js';
import type { PaneTerminal, TerminalAttachment } from '../../api/index.js';

/** Output waiting in the socket above this stops; below LOW_WATER it resumes with a repaint. */
const PANE_SOCKET_HIGH_WATER = 4 * 1024 * 1024;
const LOW_WATER = 1024 * 1024;
/** Input frames larger than this are refused (a paste this big is a mistake). */
export const MAX_INPUT_FRAME = 1024 * 1024;

/** The most a client may ask to have in flight unacknowledged (its flow window). */
const MAX_FLOW_WINDOW = 16 * 1024 * 1024;

export class PaneSocket {
  private pending = 0;
  private overflowed = false;
  /**
   * Flow control by the client's own pace, when it asks for it (`{"type":"flow","window":N}`):
   * output it has not yet acknowledged as processed (`{"type":"ack","bytes":N}`) is held to the
   * window. A browser terminal that parses slower than a program writes then skips to a repaint
   * instead of falling seconds behind with its page's main thread busy.
   */
  private flowWindow: number | undefined;
  private unacked = 0;
  private readonly attachment: TerminalAttachment;

  constructor(
    private readonly ws: WebSocket,
    terminal: PaneTerminal,
    private readonly logger: Logger,
  ) {
    this.attachment = terminal.attach({
      output: (text) => this.sendOutput(text),
      exit: (exit) => this.control({ type: 'exit', exit_code: exit.exit_code, signal: exit.signal }),
      // A pane on another host that is gone (or its node): said, and the socket closed, as a 404 would have been.
      fail: (error) => {
        this.control({ type: 'error', code: error.code, message: error.message });
        this.ws.close(4404, error.code);
      },
      reset: () => this.control({ type: 'reset' }),
    });
    ws.on('message', (data, isBinary) => this.receive(data as Buffer, isBinary));
    ws.on('close', () => this.dispose());
    ws.on('error', () => this.dispose());
  }

  dispose(): void {
    this.attachment.dispose();
  }

  private receive(data: Buffer, isBinary: boolean): void {
    try {
      if (isBinary) {
        if (data.length > MAX_INPUT_FRAME) return this.error('input frame too large');
        this.attachment.write(data);
        return;
      }
      const message = JSON.parse(data.toString('utf8')) as unknown;
      if (typeof message !== 'object' || message === null) return this.error('control frames are JSON objects');
      const { type, cols, rows, window, bytes } = message as { type?: unknown; cols?: unknown; rows?: unknown; window?: unknown; bytes?: unknown };
      if (type === 'flow' && typeof window === 'number' && Number.isInteger(window) && window >= 64 * 1024 && window <= MAX_FLOW_WINDOW) {
        this.flowWindow = window;
        return;
      }
      if (type === 'ack' && typeof bytes === 'number' && Number.isInteger(bytes) && bytes >= 0) {
        this.unacked = Math.max(0, this.unacked - bytes);
        if (this.overflowed && this.caughtUp()) this.repaint();
        return;
      }
      if (type === 'resize' && typeof cols === 'number' && typeof rows === 'number') {
        this.attachment.resize(cols, rows);
        return;
      }
      this.error(`unknown control frame: ${JSON.stringify(type)}`);
    } catch (err) {
      // A bad frame from one browser tab is that tab's problem: say so, keep the pane and socket.
      this.error((err as Error).message);
    }
  }

  private error(message: string): void {
    this.logger.debug('pane socket: bad frame', { pane_id: this.attachment.paneId, message });
    this.control({ type: 'error', message });
  }

  private control(message: Record<string, unknown>): void {
    if (this.ws.readyState !== this.ws.OPEN) return;
    this.ws.send(JSON.stringify(message));
  }

  private sendOutput(text: string): void {
    if (this.ws.readyState !== this.ws.OPEN) return;
    if (this.overflowed) return;
    if (this.pending > PANE_SOCKET_HIGH_WATER || (this.flowWindow !== undefined && this.unacked > this.flowWindow)) {
      this.overflowed = true;
      return;
    }
    const bytes = Buffer.from(text, 'utf8');
    this.pending += bytes.length;
    this.unacked += bytes.length;
    this.ws.send(bytes, { binary: true }, () => {
      this.pending -= bytes.length;
      if (this.overflowed && this.caughtUp()) this.repaint();
    });
  }

  /** Both the socket and (with flow control) the client's terminal have room again. */
  private caughtUp(): boolean {
    return this.pending < LOW_WATER && (this.flowWindow === undefined || this.unacked < this.flowWindow / 2);
  }

  /** After an overflow: the client resets, and the screen as it is now is drawn afresh. */
  private repaint(): void {
    this.overflowed = false;
    this.control({ type: 'reset' });
    this.attachment.redraw();
  }
}
