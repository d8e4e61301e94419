import type { IBufferCell, IBufferLine } from '@xterm/headless';

/**
 * Serializes one rendered row with SGR colour and style sequences, so a client can redraw it as it
 * looked. Each style change is written as a full `ESC[0;…m` (reset, then set) rather than a diff:
 * slightly longer output, but a row never depends on the state a previous row left behind.
 */

function colourParams(mode: 'fg' | 'bg', cell: IBufferCell): string[] {
  const isFg = mode === 'fg';
  if (isFg ? cell.isFgDefault() : cell.isBgDefault()) return [];
  const colour = isFg ? cell.getFgColor() : cell.getBgColor();
  if (isFg ? cell.isFgRGB() : cell.isBgRGB()) {
    return [isFg ? '38' : '48', '2', String((colour >> 16) & 0xff), String((colour >> 8) & 0xff), String(colour & 0xff)];
  }
  if (colour < 8) return [String((isFg ? 30 : 40) + colour)];
  if (colour < 16) return [String((isFg ? 90 : 100) + colour - 8)];
  return [isFg ? '38' : '48', '5', String(colour)];
}

function styleParams(cell: IBufferCell): string[] {
  const params: string[] = [];
  if (cell.isBold()) params.push('1');
  if (cell.isDim()) params.push('2');
  if (cell.isItalic()) params.push('3');
  if (cell.isUnderline()) params.push('4');
  if (cell.isBlink()) params.push('5');
  if (cell.isInverse()) params.push('7');
  if (cell.isInvisible()) params.push('8');
  if (cell.isStrikethrough()) params.push('9');
  if (cell.isOverline()) params.push('53');
  params.push(...colourParams('fg', cell), ...colourParams('bg', cell));
  return params;
}

/** True when a blank cell still shows something (a background, inverse video, a line). */
function isVisiblyStyled(cell: IBufferCell): boolean {
  return !cell.isBgDefault() || cell.isInverse() !== 0 || cell.isUnderline() !== 0 || cell.isStrikethrough() !== 0 || cell.isOverline() !== 0;
}

/** The row's text with SGR sequences; trailing unstyled blanks are dropped, and styles reset at the end. */
export function serializeRowAnsi(line: IBufferLine, cols: number, scratch: IBufferCell | undefined): string {
  // Find the last cell worth drawing.
  let last = -1;
  let cell = scratch;
  for (let x = Math.min(cols, line.length) - 1; x >= 0; x--) {
    cell = line.getCell(x, cell);
    if (!cell) break;
    const chars = cell.getChars();
    if ((chars !== '' && chars !== ' ') || isVisiblyStyled(cell)) {
      last = x;
      break;
    }
  }
  let out = '';
  let current = '';
  for (let x = 0; x <= last; x++) {
    cell = line.getCell(x, cell);
    if (!cell) break;
    if (cell.getWidth() === 0) continue; // the second half of a wide character
    const key = styleParams(cell).join(';');
    if (key !== current) {
      out += key === '' ? '\x1b[0m' : `\x1b[0;${key}m`;
      current = key;
    }
    out += cell.getChars() || ' ';
  }
  if (current !== '') out += '\x1b[0m';
  return out;
}
