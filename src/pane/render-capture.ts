import { Screen } from './screen.js';

/** Widest terminal a capture is rendered on: wider than any real one, narrow enough to stay cheap. */
const MAX_CAPTURE_COLS = 1_000;

/**
 * Renders a saved screen capture (plain text, or text with ANSI escapes, as `read --ansi` or a
 * terminal's "save with colours" writes it) into rows, the way a pane's screen would show it.
 * The terminal is as tall as the capture and wider than its longest line, so nothing wraps or
 * scrolls away.
 */
export function renderCapture(capture: string): { lines: string[]; ansiLines: string[] } {
  const body = capture.replace(/\r?\n$/, '');
  const rawLines = body.split(/\r?\n/);
  const longest = rawLines.reduce((max, line) => Math.max(max, line.length), 0);
  const screen = new Screen({ cols: Math.min(MAX_CAPTURE_COLS, Math.max(80, longest * 2)), rows: Math.max(1, rawLines.length), scrollbackRows: 0 });
  try {
    screen.write(rawLines.join('\r\n'));
    return { lines: screen.screenLines().map((l) => l.trimEnd()), ansiLines: screen.screenAnsiLines() };
  } finally {
    screen.dispose();
  }
}
