/**
 * capture-pane: a pane's rows from -S to -E (history counted back from the screen), plain or with
 * tmux's own SGR sequences (-e), wrapped lines joined (-J), trailing blanks trimmed unless -J or -N,
 * control characters escaped (-C). Styles are written as tmux writes them: only what changed since
 * the previous cell, carried across lines.
 */
import type { CapturedCell, CapturedRow, CellColour } from '../pane/index.js';
import type { TmuxPane } from './model.js';

export interface CaptureOptions {
  /** -S: a line number (negative into history), '-' for the start of history, undefined for the top of the screen. */
  start: string | undefined;
  /** -E: likewise for the last line. */
  end: string | undefined;
  escapes: boolean;
  join: boolean;
  noTrim: boolean;
  escapeControl: boolean;
}

/** The rows of a pane as tmux holds them: history (kept across respawns), screen, and the "Pane is dead" line. */
export interface PaneGrid {
  historySize: number;
  screenRows: number;
  rows(from: number, to: number, styled: boolean): CapturedRow[];
}

/** The pane's grid: carried history, the host's history and screen, and the dead line scrolled in below. */
export function paneGrid(pane: TmuxPane): PaneGrid {
  const host = pane.host;
  const hostHistory = host?.historyLength ?? 0;
  const screenRows = host?.rows ?? pane.layoutCell?.sy ?? 0;
  const carried = pane.carried.length;
  const dead = pane.deadLine;
  const total = carried + hostHistory + screenRows + (dead !== undefined ? 1 : 0);
  return {
    historySize: total - screenRows,
    screenRows,
    rows(from, to, styled) {
      const out: CapturedRow[] = [];
      const start = Math.max(0, from);
      const end = Math.min(total, to);
      if (start >= end) return out;
      for (let i = start; i < Math.min(end, carried); i++) out.push(pane.carried[i] as CapturedRow);
      const hostFrom = Math.max(0, start - carried);
      const hostTo = Math.min(hostHistory + screenRows, end - carried);
      if (host && hostTo > hostFrom) out.push(...host.captureRows(hostFrom, hostTo, styled));
      else for (let i = hostFrom; i < hostTo; i++) out.push({ text: '', wrapped: false });
      if (dead !== undefined && end === total) out.push({ text: dead, wrapped: false });
      return out;
    },
  };
}

function parseLine(text: string | undefined, historySize: number, fallback: number): number {
  if (text === undefined) return fallback;
  if (text === '-') return Number.NaN;
  if (!/^-?\d+$/.test(text)) return fallback;
  const n = Number(text);
  if (n < -32_768 || n > 32_767) return fallback;
  if (n < 0 && -n > historySize) return 0;
  return historySize + n;
}

/** Renders rows -S..-E of a grid as capture-pane prints them (with a newline after each line). */
export function capturePane(grid: PaneGrid, options: CaptureOptions): string {
  const hsize = grid.historySize;
  const last = hsize + grid.screenRows - 1;
  let top = options.start === '-' ? 0 : parseLine(options.start, hsize, hsize);
  let bottom = options.end === '-' ? last : parseLine(options.end, hsize, last);
  if (Number.isNaN(top)) top = 0;
  if (Number.isNaN(bottom)) bottom = last;
  if (bottom > last) bottom = last;
  if (bottom < top) [top, bottom] = [bottom, top];
  const rows = grid.rows(top, bottom + 2, options.escapes);
  const state: StyleState = { last: DEFAULT_STYLE };
  let out = '';
  for (let i = 0; i <= bottom - top; i++) {
    const row = rows[i];
    if (!row) break;
    let line = options.escapes && row.cells ? styledLine(row.cells, state, options.escapeControl) : plainLine(row.text, options.escapeControl);
    if (!options.join && !options.noTrim) line = line.replace(/ +$/, '');
    out += line;
    // xterm marks the continuing row; tmux marks the row that wraps: join when the next row continues this one.
    const next = rows[i + 1];
    if (!options.join || !(next?.wrapped ?? false)) out += '\n';
  }
  return out;
}

function plainLine(text: string, escapeControl: boolean): string {
  if (!escapeControl) return text;
  let out = '';
  for (const ch of text) {
    const code = ch.codePointAt(0) ?? 0;
    if (ch === '\\') out += '\\\\';
    else if (code < 0x20 || code === 0x7f) out += `\\${code.toString(8).padStart(3, '0')}`;
    else out += ch;
  }
  return out;
}

/** A cell's style in tmux's terms: colours as tmux stores them (8 default, 90-97 bright, 256 and RGB flagged). */
interface Style {
  fg: string;
  bg: string;
  attrs: number;
}

interface StyleState {
  last: Style;
}

const DEFAULT_STYLE: Style = { fg: '8', bg: '8', attrs: 0 };

// tmux's attribute codes in the order it writes them.
const ATTRIBUTES: readonly [keyof CapturedCell, number][] = [
  ['bold', 1],
  ['dim', 2],
  ['italic', 3],
  ['underline', 4],
  ['blink', 5],
  ['inverse', 7],
  ['invisible', 8],
  ['strikethrough', 9],
  ['overline', 53],
];

function colourKey(colour: CellColour): string {
  switch (colour.mode) {
    case 'default': return '8';
    case 'p16': return colour.value < 8 ? String(colour.value) : String(90 + colour.value - 8);
    case 'p256': return `256:${colour.value}`;
    default: return `rgb:${colour.value}`;
  }
}

function colourParams(key: string, background: boolean): number[] {
  if (key.startsWith('256:')) return [background ? 48 : 38, 5, Number(key.slice(4))];
  if (key.startsWith('rgb:')) {
    const v = Number(key.slice(4));
    return [background ? 48 : 38, 2, (v >> 16) & 0xff, (v >> 8) & 0xff, v & 0xff];
  }
  const n = Number(key);
  if (n === 8) return [background ? 49 : 39];
  if (n < 8) return [(background ? 40 : 30) + n];
  return [background ? n + 10 : n];
}

function styleOf(cell: CapturedCell): Style {
  let attrs = 0;
  ATTRIBUTES.forEach(([name], i) => {
    if (cell[name] === true) attrs |= 1 << i;
  });
  return { fg: colourKey(cell.fg), bg: colourKey(cell.bg), attrs };
}

/** The sequences that turn `last` into `next`, as tmux's grid_string_cells_code writes them. */
function styleCode(last: Style, next: Style, escapeControl: boolean): string {
  const esc = escapeControl ? '\\033[' : '\x1b[';
  const codes: number[] = [];
  let lastAttrs = last.attrs;
  if ((~next.attrs & lastAttrs) !== 0) {
    codes.push(0);
    lastAttrs = 0;
  }
  ATTRIBUTES.forEach(([, code], i) => {
    if ((next.attrs & (1 << i)) !== 0 && (lastAttrs & (1 << i)) === 0) codes.push(code);
  });
  let out = codes.length > 0 ? `${esc}${codes.join(';')}m` : '';
  const reset = codes[0] === 0;
  const fg = colourParams(next.fg, false);
  if (next.fg !== last.fg || reset) out += `${esc}${fg.join(';')}m`;
  const bg = colourParams(next.bg, true);
  if (next.bg !== last.bg || reset) out += `${esc}${bg.join(';')}m`;
  return out;
}

function styledLine(cells: CapturedCell[], state: StyleState, escapeControl: boolean): string {
  let out = '';
  for (const cell of cells) {
    const style = styleOf(cell);
    out += styleCode(state.last, style, escapeControl);
    state.last = style;
    out += escapeControl && cell.chars === '\\' ? '\\\\' : cell.chars;
  }
  return out;
}
