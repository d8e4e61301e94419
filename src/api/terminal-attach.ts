/**
 * Attaching a terminal to a pane: the operation the dashboard's pane socket is made of. A fresh
 * terminal gets the pane's output so far (or, when that is no longer whole, the screen as it is
 * now) with the program's input modes, then live output, joined without a gap; its keystrokes go
 * to the program as bytes, and it can resize the pane. The input modes are encoded as for
 * `switchboard attach` (protocol/terminal-modes.ts).
 */
import { DisposableStore } from '../core/disposable.js';
import { checkPaneSize, type Pane } from '../pane/index.js';
import { inputModeSequences } from '../protocol/terminal-modes.js';
import { parseNodePaneId, type NodePaneRef } from './remote-panes.js';
import type { Services } from './services.js';
import type { PaneTerminal, TerminalAttachment, TerminalSink } from './terminal.js';
import { inputModesInfo } from './to-wire.js';

/**
 * The pane `paneId` as a terminal to attach to, or undefined when there is no such pane. A node's
 * pane (`<node>/<pane>`) on a controller is its cluster's to reach: whether it is there is known
 * only once the attachment asks its node (a failure then goes to the sink).
 */
export function findPaneTerminal(services: Pick<Services, 'panes'> & Partial<Pick<Services, 'nodePanes'>>, paneId: string): PaneTerminal | undefined {
  let ref: NodePaneRef | undefined;
  try {
    ref = parseNodePaneId(paneId);
  } catch {
    return undefined;
  }
  if (ref) return services.nodePanes?.remote?.terminal(ref);
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
    redraw: () => sink.output(screenNow()),
    dispose: () => disposables.dispose(),
  };
}
