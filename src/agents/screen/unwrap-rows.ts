/**
 * A reply read off a screen, given back its own line breaks. A TUI (Claude Code, Codex, Gemini CLI)
 * breaks a long paragraph at the terminal's width itself and draws each piece on a row of its own,
 * at the paragraph's text column (two spaces under Claude's "●" or Codex's "•"), so the terminal
 * cannot tell those rows from lines the model wrote. The shape can: a row was broken by the width
 * when the next row's first word would not have fitted after it, and the next row starts at the same
 * text column as the row before. A short row, a blank row, a list item, a quote, a heading or a row
 * indented deeper (code) is a break the model wrote, and stays.
 */

/** Columns a CLI may leave free at the right edge (a margin, a scroll bar): a row this close to it was full. */
const RIGHT_MARGIN = 4;
/** A row that starts something of its own: a list item, a quote, a heading, a table or code fence. */
const STARTS_BLOCK = /^([-*+•◦▪‣]\s|\d{1,3}[.)]\s|>|#{1,6}\s|[|│┃]|```|~~~)/u;
/** A leading reply marker ("● ", "• ", "✦ ") and the spaces after it. */
const MARKER = /^\s*[^\p{L}\p{N}\s"'`([{<*_-]{1,2}\s+/u;

/** Display cells of `text`: East Asian wide and emoji characters take two. */
export function cellWidth(text: string): number {
  let width = 0;
  for (const ch of text) width += isWide(ch.codePointAt(0) ?? 0) ? 2 : 1;
  return width;
}

function isWide(cp: number): boolean {
  return (
    (cp >= 0x1100 && cp <= 0x115f) ||
    (cp >= 0x2e80 && cp <= 0xa4cf) ||
    (cp >= 0xac00 && cp <= 0xd7a3) ||
    (cp >= 0xf900 && cp <= 0xfaff) ||
    (cp >= 0xfe30 && cp <= 0xfe4f) ||
    (cp >= 0xff00 && cp <= 0xff60) ||
    (cp >= 0xffe0 && cp <= 0xffe6) ||
    (cp >= 0x1f300 && cp <= 0x1faff) ||
    (cp >= 0x20000 && cp <= 0x3fffd)
  );
}

/** A row's indentation, and a list item's bullet or number after it: what comes before its text. */
const LEAD = /^\s*(?:[-*+•◦▪‣]\s+|\d{1,3}[.)]\s+)?/u;

/** The last code point of `text` (a surrogate pair read whole), or 0. */
function lastCodePoint(text: string): number {
  if (text === '') return 0;
  const low = text.charCodeAt(text.length - 1);
  return low >= 0xdc00 && low <= 0xdfff && text.length > 1 ? (text.codePointAt(text.length - 2) ?? 0) : low;
}

/** The column a row's text starts at: after its indentation and a list item's bullet, or a reply marker on the block's first row. */
function textColumn(row: string, first: boolean): number {
  const lead = (first ? MARKER.exec(row)?.[0] : undefined) ?? LEAD.exec(row)?.[0] ?? '';
  return cellWidth(lead);
}

/**
 * True when `next` continues the paragraph of `prev` (the CLI broke it at the `cols` width): it
 * starts at the same text column, starts nothing of its own, and its first word would not have
 * fitted at the end of `prev`. `prevIsFirst`: `prev` is the block's first row, its marker before its text.
 */
export function continuesRow(prev: string, next: string, cols: number, prevIsFirst = false): boolean {
  const body = next.trimStart();
  if (body === '' || prev.trim() === '') return false;
  if (cellWidth(next) - cellWidth(body) !== textColumn(prev, prevIsFirst)) return false;
  if (STARTS_BLOCK.test(body)) return false;
  const firstWord = /^\S+/.exec(body)?.[0] ?? '';
  return cellWidth(prev.trimEnd()) + 1 + cellWidth(firstWord) > cols - RIGHT_MARGIN;
}

/**
 * The rows of one reply block (right ends trimmed), joined into the lines the model wrote: a row
 * the width broke joins the one before it with a space (none between two wide characters, as in
 * Chinese or Japanese text). Each line comes back without its indentation; the first row's marker is
 * the caller's to strip.
 */
export function unwrapRows(rows: readonly string[], cols: number | undefined): string[] {
  const out: string[] = [];
  rows.forEach((row, i) => {
    const prev = rows[i - 1];
    if (cols !== undefined && prev !== undefined && out.length > 0 && continuesRow(prev, row, cols, i === 1)) {
      const head = out.pop() ?? '';
      const tail = row.trim();
      const tight = isWide(lastCodePoint(head)) && isWide(tail.codePointAt(0) ?? 0);
      out.push(`${head}${tight ? '' : ' '}${tail}`);
      return;
    }
    out.push(i === 0 ? row.trimEnd() : row.trim());
  });
  return out;
}
