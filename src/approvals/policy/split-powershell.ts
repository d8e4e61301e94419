import { CommandList, SplitterBase, Draft, ParseError, WordBuilder, type ListState, type Sink, type WordDraft } from './split-common.js';
import type { ShellOperator, ShellRedirect, ShellWord } from './types.js';

/**
 * Splits PowerShell into simple commands: `;`, `|`, `&&`, `||`, newlines; single quotes (with
 * `''`), double quotes with backtick escapes, the typographic quotes PowerShell also accepts;
 * `$(…)`, `@(…)` and `(…)` are split and make their command unsure; script blocks `{ … }` are split
 * as code that may run.
 */

const META = new Set([' ', '\t', '\r', '\n', ';', '|', '&', '(', ')', '{', '}', '<', '>', ',']);
const SINGLE_QUOTES = new Set(["'", '\u2018', '\u2019', '\u201a', '\u201b']);
const DOUBLE_QUOTES = new Set(['"', '\u201c', '\u201d', '\u201e']);
const ESCAPES: Record<string, string> = { '0': '\0', a: '\x07', b: '\b', e: '\x1b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v' };

/** Splits `src` into the sink's parts; throws ParseError when it cannot be split with confidence. */
export function splitPowerShell(src: string, sink: Sink, depth = 0): void {
  new PowerShellSplitter(src, sink, depth).parseList(null, null);
}

class PowerShellSplitter extends SplitterBase<')' | '}'> {
  parseList(stop: ')' | '}' | null, nested: string | null): void {
    const { src } = this;
    const commands = new CommandList(this.sink.newList(), () => new Draft(nested, null), (d, before, after, list) => this.emit(d, before, after, list));
    let draft = commands.start();
    const finish = (after: ShellOperator | null): void => {
      draft = commands.finish(draft, after);
    };
    for (;;) {
      this.skipBlanks();
      if (this.i >= src.length) {
        if (stop) throw new ParseError(`unterminated ${nested ?? stop}`);
        finish(null);
        return;
      }
      const c = src[this.i] as string;
      const next = src[this.i + 1];
      if (c === '#') {
        while (this.i < src.length && src[this.i] !== '\n') this.i++;
      } else if (c === '<' && next === '#') {
        const end = src.indexOf('#>', this.i + 2);
        if (end < 0) throw new ParseError('unterminated block comment <# … #>');
        this.i = end + 2;
      } else if (c === '\n' || c === ';') {
        this.i++;
        finish(c === ';' ? ';' : '\n');
      } else if (c === ',') {
        this.i++;
      } else if (c === '|') {
        this.i += next === '|' ? 2 : 1;
        finish(next === '|' ? '||' : '|');
      } else if (c === '&') {
        if (next === '&') {
          this.i += 2;
          finish('&&');
        } else if (draft.words.length === 0) {
          // The call operator: the next word is the command.
          this.i++;
        } else {
          this.i++;
          finish('&');
        }
      } else if (c === ')' || c === '}') {
        if (c !== stop) throw new ParseError(`unexpected '${c}'`);
        this.i++;
        finish(null);
        return;
      } else if (c === '>' || c === '<') {
        this.readRedirect(draft, '');
      } else if (/[\d*]/.test(c) && next === '>') {
        this.i++;
        this.readRedirect(draft, c);
      } else {
        const start = this.i;
        const word = this.readWord(draft);
        draft.words.push(word);
        draft.touch(start, this.i);
      }
    }
  }

  private emit(draft: Draft, before: ShellOperator | null, after: ShellOperator | null, list: ListState): void {
    let words: ShellWord[] = draft.words.map(({ raw: _raw, ...w }) => w);
    const assignments: string[] = [];
    const first = words[0];
    const isVariable = (w: ShellWord): boolean => w.vars.length === 1 && w.vars[0]?.start === 0 && w.vars[0].end === w.text.length && w.text.startsWith('$');
    if (first && isVariable(first) && words[1] && !words[1].quoted && /^([+\-*/%]|\?\?)?=$/.test(words[1].text)) {
      assignments.push(first.text);
      words = words.slice(2);
    } else if (first?.text.startsWith('$') && first.vars[0]?.start === 0) {
      const cut = first.vars[0].end;
      const m = /^([+\-*/%]|\?\?)?=/.exec(first.text.slice(cut));
      if (m) {
        assignments.push(first.text.slice(0, cut));
        const at = cut + m[0].length;
        const vars = first.vars.filter((v) => v.start >= at).map((v) => ({ ...v, start: v.start - at, end: v.end - at }));
        const rest = { ...first, text: first.text.slice(at), vars, dynamic: vars.length > 0 || first.code };
        words = rest.text === '' ? words.slice(1) : [rest, ...words.slice(1)];
      }
    }
    const head = words[0];
    if (head && !head.quoted && head.text.startsWith('[')) draft.note('a .NET type or method call cannot be judged');
    if (words.some((w) => w.text === '--%' && !w.quoted)) draft.note('the stop-parsing token --% cannot be judged');
    this.sink.emit(
      {
        dialect: 'powershell',
        text: this.src.slice(draft.start, draft.end).trim(),
        words,
        assignments,
        redirects: draft.redirects,
        unsure: draft.unsure,
        nested: draft.nested,
        inFunction: null,
      },
      before,
      after,
      list,
    );
  }

  /** A backtick before a newline joins the lines. */
  protected continuation(): number {
    return this.continuationAt(this.i, '`');
  }


  private readWord(draft: Draft): WordDraft {
    const { src } = this;
    const w = new WordBuilder(this.i);
    const c0 = src[this.i];
    const n0 = src[this.i + 1];
    const block = (open: number, stop: ')' | '}', label: string, note: string | null): WordDraft => {
      const start = this.i;
      this.i += open;
      this.nestedList(stop, label);
      w.addVar(label, src.slice(start, this.i));
      w.code = true;
      if (note) draft.note(note);
      return w.build(src, this.i);
    };
    if (c0 === '(') return block(1, ')', '(…)', 'the parenthesised expression (...) cannot be judged');
    if (c0 === '{') return block(1, '}', '{…}', null);
    if (c0 === '@' && n0 === '(') return block(2, ')', '@(…)', 'the array subexpression @(...) cannot be judged');
    if (c0 === '@' && n0 === '{') return block(2, '}', '@{…}', 'the hashtable literal @{...} cannot be judged');
    const here = /^@(['"\u2018\u2019\u201c\u201d])[ \t]*\r?\n/.exec(src.slice(this.i, this.i + 8));
    if (here) {
      const quote = here[1] as string;
      const double = DOUBLE_QUOTES.has(quote);
      const close = double ? /\r?\n["\u201c\u201d\u201e]@/ : /\r?\n['\u2018\u2019\u201a\u201b]@/;
      const bodyStart = this.i + here[0].length;
      const m = close.exec(src.slice(bodyStart));
      if (!m) throw new ParseError('unterminated here-string');
      const body = src.slice(bodyStart, bodyStart + m.index);
      this.i = bodyStart + m.index + m[0].length;
      w.add(body);
      w.quoted = true;
      if (double && /\$/.test(body)) w.dynamic = true;
      draft.note('here-string cannot be judged');
      return w.build(src, this.i);
    }
    if (c0 === '@' && n0 !== undefined && /[A-Za-z_]/.test(n0)) {
      const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(src.slice(this.i + 1)) as RegExpExecArray;
      w.addVar(m[0], `@${m[0]}`);
      this.i += 1 + m[0].length;
    }
    while (this.i < src.length) {
      const c = src[this.i] as string;
      if (META.has(c)) break;
      if (c === '`') {
        const nx = src[this.i + 1];
        if (nx === '\n' || (nx === '\r' && src[this.i + 2] === '\n')) break;
        if (nx === undefined) {
          w.add('`');
          this.i++;
        } else {
          w.add(nx);
          w.quoted = true;
          this.i += 2;
        }
      } else if (SINGLE_QUOTES.has(c)) this.readSingle(w);
      else if (DOUBLE_QUOTES.has(c)) this.readDouble(w, draft);
      else if (c === '$') this.readVariable(w, draft);
      else {
        if (c === '*' || c === '?' || c === '[') w.glob = true;
        w.add(c);
        this.i++;
      }
    }
    if (this.i === w.start) throw new ParseError(`unexpected '${src[this.i] ?? ''}'`);
    return w.build(src, this.i);
  }

  private readSingle(w: WordBuilder): void {
    const { src } = this;
    let j = this.i + 1;
    w.quoted = true;
    for (;;) {
      if (j >= src.length) throw new ParseError('unbalanced single quote');
      const ch = src[j] as string;
      if (SINGLE_QUOTES.has(ch)) {
        if (SINGLE_QUOTES.has(src[j + 1] ?? '')) {
          w.add("'");
          j += 2;
          continue;
        }
        this.i = j + 1;
        return;
      }
      w.add(ch);
      j++;
    }
  }

  private readDouble(w: WordBuilder, draft: Draft): void {
    const { src } = this;
    this.i++;
    w.quoted = true;
    for (;;) {
      if (this.i >= src.length) throw new ParseError('unbalanced double quote');
      const c = src[this.i] as string;
      if (DOUBLE_QUOTES.has(c)) {
        if (DOUBLE_QUOTES.has(src[this.i + 1] ?? '')) {
          w.add('"');
          this.i += 2;
          continue;
        }
        this.i++;
        return;
      }
      if (c === '`') {
        const nx = src[this.i + 1];
        if (nx === undefined) throw new ParseError('unbalanced double quote');
        w.add(ESCAPES[nx] ?? nx);
        this.i += 2;
      } else if (c === '$') this.readVariable(w, draft);
      else {
        w.add(c);
        this.i++;
      }
    }
  }

  private readVariable(w: WordBuilder, draft: Draft): void {
    const { src } = this;
    const start = this.i;
    const nx = src[this.i + 1];
    if (nx === '(') {
      this.i += 2;
      this.nestedList(')', '$(…)');
      w.addVar('$(…)', src.slice(start, this.i));
      draft.note('subexpression $(...) cannot be judged');
      return;
    }
    if (nx === '{') {
      const end = src.indexOf('}', this.i + 2);
      if (end < 0) throw new ParseError('unterminated ${...}');
      this.i = end + 1;
      w.addVar(src.slice(start + 2, end), src.slice(start, this.i));
      return;
    }
    const m = /^(?:[A-Za-z]+:(?=[A-Za-z0-9_]))?[A-Za-z0-9_]+|^[?^$]/.exec(src.slice(this.i + 1));
    if (m) {
      this.i += 1 + m[0].length;
      w.addVar(m[0], src.slice(start, this.i));
      return;
    }
    w.add('$');
    this.i++;
  }

  private readRedirect(draft: Draft, fd: string): void {
    const { src } = this;
    const start = this.i - fd.length;
    const op = ['>>', '>&', '>', '<'].find((o) => src.startsWith(o, this.i)) as string;
    this.i += op.length;
    this.skipBlanks();
    const c = src[this.i];
    if (c === undefined || (META.has(c) && c !== '(' && c !== '{')) throw new ParseError(`redirection ${fd}${op} without a target`);
    const { raw: _raw, ...target } = this.readWord(draft);
    let redirect: ShellRedirect;
    if (op === '>&' && /^\d$/.test(target.text)) redirect = { op: fd + op, kind: 'dup', target: null };
    else if (op === '<') redirect = { op, kind: 'read', target };
    else redirect = { op: fd + op, kind: 'write', target };
    draft.redirects.push(redirect);
    draft.touch(start, this.i);
  }
}
