/**
 * What a screen shows by its shape alone, whatever the CLI or its version: the input box (a prompt
 * glyph near the bottom, framed by rules), a menu waiting for a choice (option rows, one of them
 * highlighted, with a hint on how to confirm), and signs of work (a spinner row, "esc to
 * interrupt"). Every agent TUI draws these the same way because they are the same widgets; the
 * words around them change from one release to the next. Profiles' patterns say what a screen
 * means; these rules say what it is when the patterns have not seen the release, and they keep
 * unknown menus from being mistaken for an idle prompt or an approval.
 */

/** A horizontal rule: box-drawing or block characters across the row (corners allowed). */
const RULE = /^\s*[╭╰┌└╹]?[─━═╌┄┈▄▀]{8,}[╮╯┐┘]?\s*$/;
/** Where a row's own text starts, past a box's side or a left bar. */
const SIDE = /^(\s{0,4}[│┃]?\s?)/;
/** A prompt glyph starting the input row (Claude's ❯, Codex's ›, Gemini's and Aider's >). */
const INPUT_ROW = /^\s{0,3}(?:[│┃]\s{0,2})?([❯›>])(?:\s(.*)|$)/;
/** OpenCode draws its input as a block of rows behind a left bar, closed by a half-block rule. */
const BAR_ROW = /^\s*┃(?:\s(.*))?$/;
const BAR_BOTTOM = /^\s*╹[▀━─]{8,}/;

/**
 * A progress bar opening a row: cells that fill and empty in turn ("■■⬝⬝⬝⬝⬝⬝", "▰▰▱▱"), drawn only
 * while a turn runs (OpenCode's footer). The cells are the bar's own glyphs, never the block
 * characters of rules, frames or a logo (█▀▄), so a banner is not taken for one. It reads the same
 * whatever the row says after it: a deep working folder's path redrawn over the footer's words
 * leaves the bar.
 */
const PROGRESS_BAR = /^\s{0,4}[■⬝▰▱]{4,}(?:\s|$)/;
/** How a CLI says it is working and how to stop it. */
const INTERRUPT_HINT = /\besc(?:ape)? to interrupt\b|\besc interrupt\b|\(esc to cancel, \d|\bctrl\+c to (?:interrupt|stop)\b/i;
/**
 * A spinner row: an animation glyph, a word, then an ellipsis ("✽ Percolating…", "⠧ Thinking...",
 * "• Working (3s"). The glyph alone is not enough (Claude's "✻ Worked for 2s" ends a turn).
 */
const SPINNER_ROW = /^\s{0,2}[⠀-⣿·✢✳✶✻✽*◐◓◑◒◴◷◶◵•◦●○■⬝]+\s+\p{L}[\p{L}\s'-]{1,40}(?:…|\.\.\.|\s\(\d+s\b)/u;

/** How a menu says to confirm a choice: "Enter to confirm", "Press enter to confirm", "enter confirm", "(Use Enter to select)". */
const CONFIRM_HINT = /\b(?:enter|return)\b[^.]{0,20}\b(?:confirm|select|submit|choose)\b|\bto confirm\b|\besc to cancel\b|⇆ select|↑\/?↓/i;
/**
 * An option row: optional highlight marker, optional number, then the label. The label starts with
 * a letter (or a quote or bracket): rows of numbers, rules and diffs are not options.
 */
const OPTION_ROW = /^(?<indent>\s{0,6})(?<marker>[❯›●▶➤>*])?(?<gap>\s*)(?:(?<number>\d{1,2})[.)]\s+)?(?<label>[\p{L}"'([][^│┃]*?)\s*[│┃]?\s*$/u;

/** One option of a menu read by shape. */
interface StructuralOption {
  row: number;
  label: string;
  number: string | undefined;
  selected: boolean;
}

/** A menu waiting for a choice. */
export interface StructuralMenu {
  options: StructuralOption[];
  /** The first and last option rows. */
  top: number;
  bottom: number;
  /** The row of the confirm hint below the options, if any. */
  hintRow: number | undefined;
}

/** The input box: the row with the prompt glyph, and the text typed in it. */
export interface InputBox {
  row: number;
  text: string;
}

/** True for a row drawn as a horizontal rule. */
export function isRule(line: string | undefined): boolean {
  return line !== undefined && RULE.test(line);
}

/** The text of a row past a box's side or left bar, and without a closing side. */
export function rowContent(line: string): string {
  return line.replace(SIDE, '').replace(/\s*[│┃]\s*$/, '').trim();
}

const lastNonEmpty = (lines: readonly string[]): number => {
  for (let i = lines.length - 1; i >= 0; i--) if ((lines[i] ?? '').trim() !== '') return i;
  return -1;
};

/**
 * The input box: the lowest row starting with a prompt glyph that is framed by a rule within two
 * rows (above or below), or sits among the last rows of the screen (Codex draws no rules); or
 * OpenCode's barred block closed by its half-block rule. A menu's highlighted option is not an
 * input row. Undefined when none.
 */
export function findInputBox(lines: readonly string[], menu: StructuralMenu | undefined = findMenu(lines)): InputBox | undefined {
  const bottom = lastNonEmpty(lines);
  if (bottom < 0) return undefined;
  for (let row = bottom; row >= 0; row--) {
    if (menu && row >= menu.top && row <= menu.bottom) continue;
    const line = lines[row] ?? '';
    const m = INPUT_ROW.exec(line);
    // "❯ 1. Yes" is a menu's highlighted option, even where the menu is too broken to read as one.
    if (m && !/^\d{1,2}[.)]\s/.test(m[2] ?? '')) {
      const framed = [row - 2, row - 1, row + 1, row + 2].some((r) => isRule(lines[r]));
      const nearBottom = nonEmptyBetween(lines, row + 1, bottom) <= 3;
      if (framed || nearBottom) return { row, text: (m[2] ?? '').trim() };
    }
    if (BAR_BOTTOM.test(line)) {
      // The first barred row with text above the closing rule is where the typing goes.
      let top = row - 1;
      while (top - 1 >= 0 && BAR_ROW.test(lines[top - 1] ?? '')) top--;
      for (let r = top; r < row; r++) {
        const text = BAR_ROW.exec(lines[r] ?? '')?.[1]?.trim() ?? '';
        if (text !== '') return { row: r, text };
      }
      if (top < row) return { row: top, text: '' };
    }
  }
  return undefined;
}

function nonEmptyBetween(lines: readonly string[], from: number, to: number): number {
  let n = 0;
  for (let r = from; r <= to; r++) if ((lines[r] ?? '').trim() !== '') n++;
  return n;
}

/** A row that shows the CLI at work. */
export interface WorkSign {
  row: number;
  line: string;
  /**
   * `interrupt`: a hint on how to stop the work; `progress`: a progress bar (both strong: no reply
   * draws them); `spinner`: an animated status row (weaker: a reply can look like one).
   */
  kind: 'interrupt' | 'progress' | 'spinner';
}

/** The lowest row among the last `within` non-empty ones that shows the CLI at work, if any. */
export function findWorkSign(lines: readonly string[], within = 16): WorkSign | undefined {
  let seen = 0;
  let spinner: WorkSign | undefined;
  for (let row = lines.length - 1; row >= 0 && seen < within; row--) {
    const line = lines[row] ?? '';
    if (line.trim() === '') continue;
    seen++;
    if (INTERRUPT_HINT.test(line)) return { row, line: line.trim(), kind: 'interrupt' };
    if (PROGRESS_BAR.test(line)) return { row, line: line.trim(), kind: 'progress' };
    if (!spinner && SPINNER_ROW.test(rowContent(line))) spinner = { row, line: line.trim(), kind: 'spinner' };
  }
  return spinner;
}

interface Candidate {
  row: number;
  label: string;
  number: string | undefined;
  selected: boolean;
  /** The column where the label starts. */
  column: number;
}

function candidate(line: string, row: number): Candidate | undefined {
  const content = line.replace(/^(\s{0,4})[│┃]/, '$1');
  const m = OPTION_ROW.exec(content);
  if (!m?.groups) return undefined;
  const { indent = '', marker, gap = '', number, label = '' } = m.groups;
  if (label.trim() === '') return undefined;
  const column = indent.length + (marker?.length ?? 0) + gap.length + (number !== undefined ? number.length + 2 : 0);
  return { row, label: label.trim(), number, selected: marker !== undefined && marker !== '*', column };
}

/**
 * The lowest menu on screen: a run of two or more option rows with exactly one highlighted, either
 * numbered in order or followed within three rows by a confirm hint. Wrapped labels (rows indented
 * past the label column) continue the option above. Undefined when there is none.
 */
export function findMenu(lines: readonly string[]): StructuralMenu | undefined {
  for (let end = lastNonEmpty(lines); end >= 1; ) {
    const run = optionRunEndingAt(lines, end);
    if (run && isMenu(lines, run)) return toMenu(lines, run);
    end = (run?.[0]?.row ?? end) - 1;
  }
  return undefined;
}

/**
 * The option rows of the block that ends at or above `end` (skipping the hint and blank rows under
 * it). In a numbered menu, an unnumbered row indented to the label column or deeper is the wrapped
 * rest of the option above it.
 */
function optionRunEndingAt(lines: readonly string[], end: number): Candidate[] | undefined {
  let row = end;
  for (let skipped = 0; row >= 0 && skipped < 4; skipped++, row--) {
    const line = lines[row] ?? '';
    if (line.trim() !== '' && !CONFIRM_HINT.test(line)) break;
  }
  const block: Candidate[] = [];
  for (; row >= 0; row--) {
    const line = lines[row] ?? '';
    if (line.trim() === '' || isRule(line)) break;
    // A box's side alone on a row: the end of a long row wrapped by a narrow terminal.
    if (/^\s*[│┃]\s*$/.test(line)) continue;
    const c = candidate(line, row);
    if (!c) break;
    block.unshift(c);
  }
  if (block.length === 0) return undefined;
  if (!block.some((c) => c.number !== undefined)) {
    // Unnumbered options line up with the highlighted one; rows above that do not are the question.
    const column = (block.find((c) => c.selected) ?? block[block.length - 1])?.column;
    let top = block.length;
    while (top > 0 && block[top - 1]?.column === column) top--;
    return block.slice(top);
  }
  // Rows above the first numbered one are the question.
  const first = block.findIndex((c) => c.number !== undefined);
  const run: Candidate[] = [];
  for (const c of block.slice(first)) {
    const above = run[run.length - 1];
    if (c.number === undefined && !c.selected && above && c.column >= above.column) above.label = `${above.label} ${c.label}`;
    else run.push(c);
  }
  return run;
}

function isMenu(lines: readonly string[], run: readonly Candidate[]): boolean {
  if (run.length < 2 || run.length > 12) return false;
  if (run.filter((c) => c.selected).length !== 1) return false;
  const numbered = run.every((c, i) => c.number === String(i + 1));
  return numbered || hintBelow(lines, run[run.length - 1]?.row ?? 0) !== undefined;
}

function hintBelow(lines: readonly string[], row: number): number | undefined {
  for (let r = row + 1; r <= row + 3 && r < lines.length; r++) if (CONFIRM_HINT.test(lines[r] ?? '')) return r;
  return undefined;
}

function toMenu(lines: readonly string[], run: readonly Candidate[]): StructuralMenu {
  const options = run.map(({ row, label, number, selected }) => ({ row, label, number, selected }));
  const bottom = run[run.length - 1]?.row ?? 0;
  return { options, top: run[0]?.row ?? 0, bottom, hintRow: hintBelow(lines, bottom) };
}

/** The widest row on screen, in characters: the terminal's width, as near as its rows show it. */
export function screenWidth(lines: readonly string[]): number {
  return lines.reduce((w, l) => Math.max(w, Array.from(l).length), 0);
}

/**
 * Where a side panel begins: a column of words that starts at the same place, past a wide gap, on
 * four rows or more, in the right half of the screen (OpenCode's folder, context and version at
 * 200 columns). A box's right side is no panel. Undefined when the screen has none.
 */
export function sidePanelColumn(lines: readonly string[]): number | undefined {
  const half = Math.ceil(screenWidth(lines) / 2);
  const GAP = 8;
  const starts = new Map<number, number>();
  for (const line of lines) {
    // One pass per row: the first text in the right half that follows a gap of GAP blanks.
    const chars = Array.from(line);
    let blanks = 0;
    for (let at = 0; at < chars.length; at++) {
      if (chars[at] === ' ') {
        blanks++;
        continue;
      }
      if (at >= half && blanks >= GAP) {
        // A box's right side is not a panel: a panel's rows say something (letters or digits).
        if (/[\p{L}\p{N}]/u.test(chars.slice(at).join(''))) starts.set(at, (starts.get(at) ?? 0) + 1);
        break;
      }
      blanks = 0;
    }
  }
  let column = -1;
  let most = 0;
  for (const [at, count] of starts) if (count > most || (count === most && at < column)) [column, most] = [at, count];
  return most >= 4 ? column : undefined;
}

/** A row's text left of the side panel at `column` (the whole row when its own text runs up to it). */
export function leftOfPanel(line: string, column: number): string {
  const chars = Array.from(line);
  if (chars.length <= column || !chars.slice(column - 3, column).every((ch) => ch === ' ')) return line;
  return chars.slice(0, column).join('').trimEnd();
}

/**
 * The rows without a side panel, for reading a message beside one. Never for reading what an
 * approval asks: a command's own rows could be cut (a crafted gap before its tail).
 */
export function withoutSidePanel(lines: readonly string[]): readonly string[] {
  const column = sidePanelColumn(lines);
  return column === undefined ? lines : lines.map((line) => leftOfPanel(line, column));
}
