import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { AnsiSpanParser, ansiToSpans, MAX_PENDING, spansToHtml } from './ansi-spans.js';

const ESC = '\x1b';
const plain = (s: string): string => s.replace(/\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)|\x1b[ -/]*[0-~]|[\x00-\x08\x0b-\x1f\x7f]/g, '');

describe('ANSI output as styled spans', () => {
  it('reads the 16 colours, 256 colours, 24-bit colours and attributes, and resets', () => {
    expect(ansiToSpans(`a${ESC}[1;31mB${ESC}[22;92mc${ESC}[0md`)).toEqual([
      { text: 'a', style: {} },
      { text: 'B', style: { bold: true, fg: 1 } },
      { text: 'c', style: { fg: 10 } },
      { text: 'd', style: {} },
    ]);
    expect(ansiToSpans(`${ESC}[38;5;208mo${ESC}[48;2;0;128;255mx${ESC}[39;49mn`)).toEqual([
      { text: 'o', style: { fg: 208 } },
      { text: 'x', style: { fg: 208, bg: '#0080ff' } },
      { text: 'n', style: {} },
    ]);
    // The colon form, with and without a colour-space id.
    expect(ansiToSpans(`${ESC}[38:2::255:0:0mr${ESC}[38:2:0:255:0mg`)).toEqual([
      { text: 'r', style: { fg: '#ff0000' } },
      { text: 'g', style: { fg: '#00ff00' } },
    ]);
    expect(ansiToSpans(`${ESC}[3;4;7;9mx${ESC}[23;24;27;29my${ESC}[mz`)).toEqual([
      { text: 'x', style: { italic: true, underline: true, inverse: true, strikethrough: true } },
      { text: 'yz', style: {} },
    ]);
  });

  it('drops every other control sequence and control character, keeping newlines and tabs', () => {
    const spans = ansiToSpans(`${ESC}]0;title${ESC}\\${ESC}[2J${ESC}[Hline\r\none${ESC}[?25l\ttwo${ESC}[?2004h\x07${ESC}(B!`);
    expect(spans).toEqual([{ text: 'line\none\ttwo!', style: {} }]);
  });

  it('holds back a sequence cut at the end of a chunk, however the stream is cut', () => {
    const stream = `x${ESC}[1;38;5;33mblue bold${ESC}[0m, ${ESC}]2;t${ESC}\\plain ${ESC}[4mu${ESC}[24m.`;
    const whole = ansiToSpans(stream);
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: stream.length - 1 }), { maxLength: 8 }), (cuts) => {
        const points = [...new Set(cuts)].sort((a, b) => a - b);
        const parser = new AnsiSpanParser();
        const spans = [0, ...points].flatMap((from, i) => parser.push(stream.slice(from, points[i] ?? stream.length)));
        // The same text with the same style at every character.
        const flat = (s: typeof spans): string[] => s.flatMap((sp) => Array.from(sp.text, (ch) => `${ch}${JSON.stringify(sp.style)}`));
        expect(flat(spans)).toEqual(flat(whole));
      }),
    );
  });

  it('never throws and keeps every printable character, for any input', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.string(), fc.constantFrom(`${ESC}[`, `${ESC}]`, ';', 'm', '38', '5', '2', ESC, '\x07', ':')), { maxLength: 40 }), (parts) => {
        const input = parts.join('');
        const text = ansiToSpans(input).map((s) => s.text).join('');
        expect(text.length).toBeLessThanOrEqual(input.length);
        // Input without ESC loses only control characters.
        if (!input.includes(ESC)) expect(text).toBe(plain(input));
      }),
    );
  });

  it("reads a real CLI's coloured screen into the same text a terminal shows", () => {
    const here = path.dirname(fileURLToPath(import.meta.url));
    const captures = path.join(here, '..', '..', 'test', 'fixtures', 'screens', 'claude-2.1.197');
    const ansi = readFileSync(path.join(captures, 'approval.ansi.txt'), 'utf8');
    const text = readFileSync(path.join(captures, 'approval.txt'), 'utf8');
    const spans = ansiToSpans(ansi);
    const rendered = spans.map((s) => s.text).join('');
    const trim = (s: string): string => s.split('\n').map((l) => l.trimEnd()).join('\n').trimEnd();
    expect(trim(rendered)).toBe(trim(text));
    expect(spans.some((s) => s.style.fg !== undefined)).toBe(true);
  });
});

describe('spans as HTML', () => {
  it('escapes text, uses classes for the 16 colours and inline colours for the rest', () => {
    const html = spansToHtml(ansiToSpans(`<b>&${ESC}[1;31mred${ESC}[0;38;5;196m256${ESC}[38;2;1;2;3;48;5;4mrgb${ESC}[0;7minv`));
    expect(html).toBe(
      '&#60;b&#62;&#38;' +
        '<span class="sb-fg-1" style="font-weight:bold">red</span>' +
        '<span style="color:#ff0000">256</span>' +
        '<span class="sb-bg-4" style="color:#010203">rgb</span>' +
        '<span class="sb-inverse">inv</span>',
    );
    expect(spansToHtml(ansiToSpans(`${ESC}[7;32;41mswap`))).toBe('<span class="sb-fg-1 sb-bg-2">swap</span>');
    expect(spansToHtml(ansiToSpans(`${ESC}[38;5;244mgrey${ESC}[0;4;9mboth`))).toBe('<span style="color:#808080">grey</span><span style="text-decoration:underline line-through">both</span>');
  });

  it('gives up an escape string that never ends instead of holding it forever', () => {
    const parser = new AnsiSpanParser();
    expect(parser.push('before \x1b]0;')).toEqual([{ text: 'before ', style: {} }]);
    // Still within the bound: held back, nothing shown.
    expect(parser.push('y'.repeat(MAX_PENDING - 100))).toEqual([]);
    // Past it: given up, so what follows is text again rather than more of an endless string.
    expect(parser.push('y'.repeat(200))).toEqual([]);
    expect(parser.push('visible')).toEqual([{ text: 'visible', style: {} }]);
  });
});
