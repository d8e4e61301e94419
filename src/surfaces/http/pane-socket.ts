/**
 * A pane's terminal over one WebSocket: output as binary frames (a replay of recent output first,
 * then live, joined without a gap), keystrokes back as binary frames, resize and exit as small JSON
 * text frames. A browser that reads too slowly is never queued for without bound: past the high
 * mark, output stops; once the socket drains, the client is told to reset and gets the screen as it
 * is now, so it catches up with nothing doubled.
 */
import type { WebSocket } from 'ws';
import type { Disposable } from '../../core/disposable.js';
import { checkPaneSize, type Pane } from '../../pane/index.js';
import type { Logger } from '../../core/logger.js';

/** Output waiting in the socket above this stops; below LOW_WATER it resumes with a repaint. */
export const PANE_SOCKET_HIGH_WATER = 4 * 1024 * 1024;
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
  private readonly disposables: Disposable[] = [];

  constructor(
    private readonly ws: WebSocket,
    private readonly pane: Pane,
    private readonly logger: Logger,
  ) {
    // Captured now, in step with the screen: live output parsed after this moment follows it. All
    // of it when the pane's raw history still holds its whole output (scrollback included); past
    // that bound the kept tail may start inside an escape sequence and miss the modes set before
    // it, so the screen as it is now is drawn instead.
    const history = pane.readRawText();
    if (history.truncated) this.sendOutput(this.screenNow());
    else if (history.bytes > 0) this.sendOutput(history.text + modeSequences(pane));
    this.disposables.push(pane.onOutput((out) => this.sendOutput(out.text)));
    this.disposables.push(pane.onExit((exit) => this.control({ type: 'exit', exit_code: exit.exitCode, signal: exit.signal })));
    if (!pane.alive && pane.exit) this.control({ type: 'exit', exit_code: pane.exit.exitCode, signal: pane.exit.signal });
    ws.on('message', (data, isBinary) => this.receive(data as Buffer, isBinary));
    ws.on('close', () => this.dispose());
    ws.on('error', () => this.dispose());
  }

  dispose(): void {
    for (const d of this.disposables.splice(0)) d.dispose();
  }

  private receive(data: Buffer, isBinary: boolean): void {
    try {
      if (isBinary) {
        if (data.length > MAX_INPUT_FRAME) return this.error('input frame too large');
        // As bytes: a terminal's input is not always UTF-8 (X10 mouse reports carry bytes above 127).
        if (this.pane.alive) this.pane.write(data);
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
        checkPaneSize(cols, rows);
        if (this.pane.alive) this.pane.resize(cols, rows);
        return;
      }
      this.error(`unknown control frame: ${JSON.stringify(type)}`);
    } catch (err) {
      // A bad frame from one browser tab is that tab's problem: say so, keep the pane and socket.
      this.error((err as Error).message);
    }
  }

  private error(message: string): void {
    this.logger.debug('pane socket: bad frame', { pane_id: this.pane.id, message });
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
    this.sendOutput(this.screenNow());
  }

  /** The screen as it is now, for a terminal just reset: its buffer, contents, cursor and input modes. */
  private screenNow(): string {
    const snap = this.pane.snapshot({ ansi: true });
    const cursor = `\x1b[${snap.cursor.y + 1};${snap.cursor.x + 1}H${snap.cursor.visible ? '\x1b[?25h' : '\x1b[?25l'}`;
    return `${snap.altScreen ? '\x1b[?1049h' : ''}\x1b[0m\x1b[H\x1b[2J${snap.lines.join('\r\n')}\x1b[0m${cursor}${modeSequences(this.pane)}`;
  }
}

const MOUSE_MODES: Record<string, string> = { x10: '\x1b[?9h', vt200: '\x1b[?1000h', drag: '\x1b[?1002h', any: '\x1b[?1003h' };

/**
 * The input modes the program has set, as the sequences that set them, so the browser's terminal
 * answers keys, pastes and the mouse the way the program expects (a multi-line paste must stay
 * one bracketed paste). The mouse encoding is not known here, so the default one is assumed.
 */
export function modeSequences(pane: Pane): string {
  const modes = pane.inputModes;
  return [
    modes.bracketedPaste ? '\x1b[?2004h' : '\x1b[?2004l',
    modes.applicationCursorKeys ? '\x1b[?1h' : '\x1b[?1l',
    modes.sendFocus ? '\x1b[?1004h' : '\x1b[?1004l',
    MOUSE_MODES[modes.mouseTracking] ?? '',
  ].join('');
}
