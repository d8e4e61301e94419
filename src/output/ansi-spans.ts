/**
 * Raw terminal output turned into styled text for a UI: runs of text with the SGR colours and
 * attributes that were in force, and as HTML. Only SGR (ESC[…m) changes the style; every other
 * control sequence (cursor moves, titles, modes) is dropped, since a log view shows text, not a
 * screen. Streaming: a sequence cut at a chunk's end is held back until the next chunk.
 */

/** A colour: an index into the 256-colour palette, or 24-bit "#rrggbb". */
export type AnsiColor = number | `#${string}`;

export interface SpanStyle {
  fg?: AnsiColor;
  bg?: AnsiColor;
  bold?: true;
  dim?: true;
  italic?: true;
  underline?: true;
  inverse?: true;
  strikethrough?: true;
}

export interface StyledSpan {
  text: string;
  style: SpanStyle;
}

// CSI (with parameters and intermediates), OSC (ended by BEL or ST), DCS/SOS/PM/APC strings, and
// two-byte escapes (whose final byte is not one of the introducers [ ] P X ^ _). Anchored at an ESC.
 
const ESCAPE = /^\x1b(?:\[([0-?]*)([ -/]*)([@-~])|\][^\x07\x1b]*(?:\x07|\x1b\\)|[PX^_][^\x1b]*\x1b\\|[ -/]*[0-OQ-WYZ\\`a-~])/;
/** A prefix of an escape that may complete with more input. */
 
const PARTIAL = /^\x1b(?:\[[0-?]*[ -/]*|\][^\x07\x1b]*\x1b?|[PX^_][^\x1b]*\x1b?|[ -/]*)?$/;

const hex = (n: number): string => n.toString(16).padStart(2, '0');

/** Reads SGR parameters into the style; returns the new style (styles are never mutated in place). */
function applySgr(style: SpanStyle, params: string): SpanStyle {
  const next: SpanStyle = { ...style };
  // "38:2::255:0:0" (colon form) and "38;2;255;0;0" both occur.
  const codes = params === '' ? [0] : params.split(/[;:]/).map((p) => (p === '' ? 0 : Number(p)));
  for (let i = 0; i < codes.length; i++) {
    const c = codes[i] ?? 0;
    if (c === 0) {
      for (const key of Object.keys(next)) Reflect.deleteProperty(next, key);
    } else if (c === 1) next.bold = true;
    else if (c === 2) next.dim = true;
    else if (c === 3) next.italic = true;
    else if (c === 4) next.underline = true;
    else if (c === 7) next.inverse = true;
    else if (c === 9) next.strikethrough = true;
    else if (c === 22) {
      delete next.bold;
      delete next.dim;
    } else if (c === 23) delete next.italic;
    else if (c === 24) delete next.underline;
    else if (c === 27) delete next.inverse;
    else if (c === 29) delete next.strikethrough;
    else if (c >= 30 && c <= 37) next.fg = c - 30;
    else if (c >= 90 && c <= 97) next.fg = c - 90 + 8;
    else if (c === 39) delete next.fg;
    else if (c >= 40 && c <= 47) next.bg = c - 40;
    else if (c >= 100 && c <= 107) next.bg = c - 100 + 8;
    else if (c === 49) delete next.bg;
    else if (c === 38 || c === 48) {
      const mode = codes[i + 1];
      let color: AnsiColor | undefined;
      if (mode === 5) {
        const index = codes[i + 2];
        if (index !== undefined && index >= 0 && index <= 255) color = index;
        i += 2;
      } else if (mode === 2) {
        // A colon form may carry a colour-space id before r, g, b: take the last three.
        const colon = params.includes(':');
        const start = colon && codes.length - i >= 6 ? i + 3 : i + 2;
        const [r, g, b] = [codes[start], codes[start + 1], codes[start + 2]];
        if ([r, g, b].every((v) => v !== undefined && v >= 0 && v <= 255)) color = `#${hex(r ?? 0)}${hex(g ?? 0)}${hex(b ?? 0)}`;
        i = start + 2;
      }
      if (color !== undefined) {
        if (c === 38) next.fg = color;
        else next.bg = color;
      }
    }
  }
  return next;
}

const sameStyle = (a: SpanStyle, b: SpanStyle): boolean => {
  const ka = Object.keys(a);
  return ka.length === Object.keys(b).length && ka.every((k) => a[k as keyof SpanStyle] === b[k as keyof SpanStyle]);
};

/** A streaming parser: push chunks, get the spans they complete. */
/** Longest unfinished escape sequence held back for the next chunk. */
export const MAX_PENDING = 4_096;

export class AnsiSpanParser {
  private style: SpanStyle = {};
  private pending = '';

  /** The spans in `chunk` (plus anything held back from the last one). */
  push(chunk: string): StyledSpan[] {
    const input = this.pending + chunk;
    this.pending = '';
    const spans: StyledSpan[] = [];
    let text = '';
    const emit = (): void => {
      if (text === '') return;
      const last = spans[spans.length - 1];
      if (last && sameStyle(last.style, this.style)) last.text += text;
      else spans.push({ text, style: this.style });
      text = '';
    };
    let i = 0;
    while (i < input.length) {
      const esc = input.indexOf('\x1b', i);
      const end = esc === -1 ? input.length : esc;
      // Carriage returns and other C0 controls but newline and tab are terminal mechanics.
       
      text += input.slice(i, end).replace(/[\x00-\x08\x0b-\x1f\x7f]/g, '');
      if (esc === -1) break;
      const rest = input.slice(esc);
      const m = ESCAPE.exec(rest);
      if (!m) {
        if (PARTIAL.test(rest)) {
          // An OSC or DCS string that never ends (a binary file cat'ed) would be held and rescanned
          // forever: past a bound it is given up, and so is what it swallowed so far.
          this.pending = rest.length <= MAX_PENDING ? rest : '';
          break;
        }
        // A lone ESC that starts nothing: drop it.
        i = esc + 1;
        continue;
      }
      if (m[3] === 'm' && m[2] === '' && !(m[1] ?? '').startsWith('?') && !(m[1] ?? '').startsWith('>')) {
        emit();
        this.style = applySgr(this.style, m[1] ?? '');
      }
      i = esc + m[0].length;
    }
    emit();
    return spans;
  }
}

/** All of `input` as styled spans (no streaming). */
export function ansiToSpans(input: string): StyledSpan[] {
  return new AnsiSpanParser().push(input);
}

const escapeHtml = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The xterm 256-colour palette entry for indexes 16–255 (the 16 base colours are left to CSS classes). */
function paletteHex(index: number): string {
  if (index < 232) {
    const n = index - 16;
    const level = (v: number): number => (v === 0 ? 0 : 55 + v * 40);
    return `#${hex(level(Math.floor(n / 36)))}${hex(level(Math.floor(n / 6) % 6))}${hex(level(n % 6))}`;
  }
  const grey = 8 + (index - 232) * 10;
  return `#${hex(grey)}${hex(grey)}${hex(grey)}`;
}

/**
 * Spans as HTML: text escaped, each styled run in a <span>. The 16 base colours become classes
 * (`sb-fg-1`, `sb-bg-4`) so a theme decides them; the rest are inline colours. Inverse swaps fg
 * and bg (with `sb-inverse` when neither is set, for the theme's defaults).
 */
export function spansToHtml(spans: readonly StyledSpan[]): string {
  return spans
    .map(({ text, style }) => {
      const [fg, bg] = style.inverse ? [style.bg, style.fg] : [style.fg, style.bg];
      const classes: string[] = [];
      const css: string[] = [];
      const color = (value: AnsiColor | undefined, kind: 'fg' | 'bg'): void => {
        if (value === undefined) return;
        if (typeof value === 'number' && value < 16) classes.push(`sb-${kind}-${value}`);
        else css.push(`${kind === 'fg' ? 'color' : 'background-color'}:${typeof value === 'number' ? paletteHex(value) : value}`);
      };
      color(fg, 'fg');
      color(bg, 'bg');
      if (style.inverse && fg === undefined && bg === undefined) classes.push('sb-inverse');
      if (style.bold) css.push('font-weight:bold');
      if (style.dim) css.push('opacity:0.6');
      if (style.italic) css.push('font-style:italic');
      const lines = [style.underline ? 'underline' : '', style.strikethrough ? 'line-through' : ''].filter(Boolean);
      if (lines.length > 0) css.push(`text-decoration:${lines.join(' ')}`);
      if (classes.length === 0 && css.length === 0) return escapeHtml(text);
      const cls = classes.length > 0 ? ` class="${classes.join(' ')}"` : '';
      const st = css.length > 0 ? ` style="${css.join(';')}"` : '';
      return `<span${cls}${st}>${escapeHtml(text)}</span>`;
    })
    .join('');
}
