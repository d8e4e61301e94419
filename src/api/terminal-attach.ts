/**
 * Attaching a terminal to a pane: the operation the dashboard's pane socket is made of. A fresh
 * terminal gets the pane's output so far (or, when that is no longer whole, the screen as it is
 * now) with the program's input modes, then live output, joined without a gap; its keystrokes go
 * to the program as bytes, and it can resize the pane. The input modes are encoded as for
 * `switchboard attach` (protocol/terminal-modes.ts).
 */
import { DisposableStore, type Disposable } from '../core/disposable.js';
import { checkPaneSize, type Pane } from '../pane/index.js';
import { inputModeSequences } from '../protocol/terminal-modes.js';
import type { Services } from './services.js';
import { inputModesInfo } from './to-wire.js';

/** Where an attached terminal's output goes. */
interface TerminalSink {
  /** Output for the terminal, in order (the first call is the replay). */
  output(text: string): void;
  /** The pane's program exited (also at once when it had exited before the attach). */
  exit(exit: { exit_code: number | null; signal: string | null }): void;
}

/** A terminal attached to one pane. */
export interface TerminalAttachment extends Disposable {
  readonly paneId: string;
  /** Keystrokes, as bytes (a terminal's input is not always UTF-8: X10 mouse reports carry bytes above 127); dropped once the program exited. */
  write(data: Buffer): void;
  /** Resizes the pane (checked against the pane limits: INVALID_PARAMS); ignored once the program exited. */
  resize(cols: number, rows: number): void;
  /** The screen as it is now, for a terminal just reset: its buffer, contents, cursor and input modes. */
  screenNow(): string;
}

/** A pane a terminal can attach to. */
export interface PaneTerminal {
  readonly paneId: string;
  /** Attaches: the sink gets the replay at once, then live output and the exit. */
  attach(sink: TerminalSink): TerminalAttachment;
}

/** The pane `paneId` as a terminal to attach to, or undefined when there is no such pane. */
export function findPaneTerminal(services: Pick<Services, 'panes'>, paneId: string): PaneTerminal | undefined {
  const pane = services.panes.find(paneId);
  return pane ? { paneId: pane.id, attach: (sink) => attachTerminal(pane, sink) } : undefined;
}

function attachTerminal(pane: Pane, sink: TerminalSink): TerminalAttachment {
  const disposables = new DisposableStore();
  const modes = (): string => inputModeSequences(inputModesInfo(pane.inputModes), { mouse: 'default' });
  const screenNow = (): string => {
    const snap = pane.snapshot({ ansi: true });
    const cursor = `\x1b[${snap.cursor.y + 1};${snap.cursor.x + 1}H${snap.cursor.visible ? '\x1b[?25h' : '\x1b[?25l'}`;
    return `${snap.altScreen ? '\x1b[?1049h' : ''}\x1b[0m\x1b[H\x1b[2J${snap.lines.join('\r\n')}\x1b[0m${cursor}${modes()}`;
  };
  // Captured now, in step with the screen: live output parsed after this moment follows it. All
  // of it when the pane's raw history still holds its whole output (scrollback included); past
  // that bound the kept tail may start inside an escape sequence and miss the modes set before
  // it, so the screen as it is now is drawn instead.
  const history = pane.readRawText();
  if (history.truncated) sink.output(screenNow());
  else if (history.bytes > 0) sink.output(history.text + modes());
  disposables.add(pane.onOutput((out) => sink.output(out.text)));
  disposables.add(pane.onExit((exit) => sink.exit({ exit_code: exit.exitCode, signal: exit.signal })));
  if (!pane.alive && pane.exit) sink.exit({ exit_code: pane.exit.exitCode, signal: pane.exit.signal });
  return {
    paneId: pane.id,
    write: (data) => {
      if (pane.alive) pane.write(data);
    },
    resize: (cols, rows) => {
      checkPaneSize(cols, rows);
      if (pane.alive) pane.resize(cols, rows);
    },
    screenNow,
    dispose: () => disposables.dispose(),
  };
}
