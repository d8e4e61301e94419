/**
 * One encoding of a pane's input modes as the terminal sequences that set them, for every
 * terminal that shows a pane: the dashboard's (the pane socket, api/terminal-attach.ts) and the
 * user's own (`switchboard attach`). A terminal that sends keys, pastes and the mouse the way the
 * program asked keeps a multi-line paste one bracketed paste, and arrow keys in the program's mode.
 */
import type { InputModesInfo } from './methods.js';

const CSI = '\x1b[';
/** DEC private mode of each mouse tracking mode a program can set. */
const MOUSE_TRACKING_MODES: Readonly<Record<string, string>> = { x10: '9', vt200: '1000', drag: '1002', any: '1003' };

/**
 * How the terminal should report the mouse: `default` leaves the encoding as the terminal has it
 * (the pane socket: the program's own choice of encoding is not known there, so the default is
 * assumed); `sgr` asks for SGR reports (1006) with tracking, and turns every tracking mode off
 * first (`switchboard attach`: the user's terminal may have had any of them on).
 */
export type MouseEncoding = 'default' | 'sgr';

/**
 * The sequences that bring a terminal's input modes from `previous` (undefined: every mode is
 * set) to `next`: bracketed paste, application cursor keys, focus reports, mouse tracking.
 */
export function inputModeSequences(next: InputModesInfo, options: { previous?: InputModesInfo; mouse: MouseEncoding }): string {
  const { previous, mouse } = options;
  const flag = (on: boolean, code: string): string => `${CSI}?${code}${on ? 'h' : 'l'}`;
  let out = '';
  if (previous?.bracketed_paste !== next.bracketed_paste) out += flag(next.bracketed_paste, '2004');
  if (previous?.application_cursor_keys !== next.application_cursor_keys) out += flag(next.application_cursor_keys, '1');
  if (previous?.send_focus !== next.send_focus) out += flag(next.send_focus, '1004');
  if (previous?.mouse_tracking !== next.mouse_tracking) {
    const code = MOUSE_TRACKING_MODES[next.mouse_tracking];
    if (mouse === 'sgr') {
      out += `${CSI}?1000l${CSI}?1002l${CSI}?1003l${CSI}?1006l`;
      if (code) out += `${CSI}?${code}h${CSI}?1006h`;
    } else {
      if (previous !== undefined) out += `${CSI}?9l${CSI}?1000l${CSI}?1002l${CSI}?1003l`;
      if (code) out += `${CSI}?${code}h`;
    }
  }
  return out;
}
