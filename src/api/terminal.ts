/**
 * A terminal attached to a pane, as the dashboard's pane socket and a node's pane server use one:
 * what it is given (a sink) and what it can do. Made for a pane here by terminal-attach.ts, and
 * for a pane on another host by the cluster's pane surface (remote-panes.ts).
 */
import type { Disposable } from '../core/disposable.js';

/** Where an attached terminal's output goes. */
export interface TerminalSink {
  /** Output for the terminal, in order (the first call is the replay). */
  output(text: string): void;
  /** The pane's program exited (also at once when it had exited before the attach). */
  exit(exit: { exit_code: number | null; signal: string | null }): void;
  /** The attachment cannot go on (a pane on another host that is gone, or its node): nothing more comes. */
  fail(error: { code: string; message: string }): void;
  /**
   * The terminal must be reset before what comes next (the screen as it is now): the attachment
   * found a piece of output missing (a pane on another host, whose frames NATS can lose).
   */
  reset(): void;
}

/** A terminal attached to one pane. */
export interface TerminalAttachment extends Disposable {
  readonly paneId: string;
  /** Keystrokes, as bytes (a terminal's input is not always UTF-8: X10 mouse reports carry bytes above 127); dropped once the program exited. */
  write(data: Buffer): void;
  /** Resizes the pane (checked against the pane limits: INVALID_PARAMS); ignored once the program exited. */
  resize(cols: number, rows: number): void;
  /**
   * For a terminal just reset: the screen as it is now (its buffer, contents, cursor and input
   * modes) goes to the sink as output, and live output after it, joined without a gap. At once for
   * a pane here; for a pane on another host once its node answers, live output held till then.
   */
  redraw(): void;
}

/** A pane a terminal can attach to. */
export interface PaneTerminal {
  readonly paneId: string;
  /** Attaches: the sink gets the replay (at once for a pane here, once its node answers for one elsewhere), then live output and the exit. */
  attach(sink: TerminalSink): TerminalAttachment;
}

