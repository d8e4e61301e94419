import { CommandList, SplitterBase, Draft, ParseError, WordBuilder, type ListState, type Sink, type WordDraft } from './split-common.js';
import type { ShellOperator, ShellRedirect, ShellWord } from './types.js';

/**
 * Splits cmd.exe command lines: `&`, `&&`, `||`, `|`, newlines and parenthesised blocks; double
 * quotes and `^` escapes; `%VAR%` and `!VAR!` are expansions. `if` conditions are taken off so the
 * command they guard is judged; `for` loops are unsure.
 */

const META = new Set([' ', '\t', '\r', '\n', ',', ';', '&', '|', '<', '>']);

/** Splits `src` into the sink's parts; throws ParseError when it cannot be split with confidence. */
export function splitCmd(src: string, sink: Sink, depth = 0): void {
  new CmdSplitter(src, sink, depth).parseList(null);
}

class CmdSplitter extends SplitterBase<')'> {
  parseList(stop: ')' | null, _nested: string | null = null): void {
    const { src } = this;
    const commands = new CommandList(this.sink.newList(), () => new Draft(null, null), (d, before, after, list) => this.emit(d, before, after, list));
    let draft = commands.start();
    const finish = (after: ShellOperator | null): void => {
      draft = commands.finish(draft, after);
    };
    for (;;) {
      this.skipBlanks();
      if (this.i >= src.length) {
        if (stop) throw new ParseError('unterminated ( … ) block');
        finish(null);
        return;
      }
      const c = src[this.i] as string;
      const next = src[this.i + 1];
      if (c === '\n') {
        this.i++;
        finish('\n');
      } else if (c === '&' || c === '|') {
        const double = next === c;
        this.i += double ? 2 : 1;
        finish(double ? (c === '&' ? '&&' : '||') : c);
      } else if (c === ')' && stop === ')') {
        this.i++;
        finish(null);
        return;
      } else if (c === '(') {
        // A block: its commands are judged on their own; redirections after it belong to no command.
        this.i++;
        this.nestedList(')', null);
      } else if (c === '>' || c === '<') {
        this.readRedirect(draft, '');
      } else if (/\d/.test(c) && (next === '>' || next === '<')) {
        this.i++;
        this.readRedirect(draft, c);
      } else if (c === '@' && draft.words.length === 0) {
        this.i++;
      } else if (c === ':' && next === ':' && draft.words.length === 0) {
        while (this.i < src.length && src[this.i] !== '\n') this.i++;
      } else {
        const start = this.i;
        const word = this.readWord(stop);
        draft.words.push(word);
        draft.touch(start, this.i);
      }
    }
  }

  private emit(draft: Draft, before: ShellOperator | null, after: ShellOperator | null, list: ListState): void {
    let words: ShellWord[] = draft.words.map(({ raw: _raw, ...w }) => w);
    words = stripIf(words);
    if (words[0]?.text.toLowerCase() === 'for' && !words[0].quoted) {
      // Judge the loop's body as a command of its own; the loop itself cannot be judged.
      draft.note('for loops cannot be judged');
      const body = words.findIndex((w) => w.text.toLowerCase() === 'do' && !w.quoted);
      if (body > 0) words = words.slice(body + 1);
    }
    // What is left of `… ) else` once its blocks are split out.
    if (words.length === 0 && draft.redirects.length === 0 && draft.unsure.length === 0) return;
    this.sink.emit(
      {
        dialect: 'cmd',
        text: this.src.slice(draft.start, draft.end).trim(),
        words,
        assignments: [],
        redirects: draft.redirects,
        unsure: draft.unsure,
        nested: null,
        inFunction: null,
      },
      before,
      after,
      list,
    );
  }

  /** Commas and semicolons separate words in cmd as spaces do. */
  protected override get extraBlanks(): string {
    return ',;';
  }

  /** A caret before a newline joins the lines. */
  protected continuation(): number {
    return this.continuationAt(this.i, '^');
  }


  private readWord(stop: ')' | null): WordDraft {
    const { src } = this;
    const w = new WordBuilder(this.i);
    while (this.i < src.length) {
      const c = src[this.i] as string;
      if (META.has(c) || (c === ')' && stop === ')')) break;
      if (c === '^') {
        const nx = src[this.i + 1];
        if (nx === undefined || nx === '\n' || nx === '\r') break;
        w.add(nx);
        w.quoted = true;
        this.i += 2;
      } else if (c === '"') {
        this.i++;
        w.quoted = true;
        for (;;) {
          if (this.i >= src.length || src[this.i] === '\n') throw new ParseError('unbalanced double quote');
          const q = src[this.i] as string;
          if (q === '"') {
            this.i++;
            break;
          }
          if (q === '%') this.readPercent(w);
          else {
            w.add(q);
            this.i++;
          }
        }
      } else if (c === '%') this.readPercent(w);
      else if (c === '!' && /^![^!\s]+!/.test(src.slice(this.i, this.i + 256))) {
        const end = src.indexOf('!', this.i + 1);
        w.addVar(src.slice(this.i + 1, end), src.slice(this.i, end + 1));
        this.i = end + 1;
      } else {
        if (c === '*' || c === '?') w.glob = true;
        w.add(c);
        this.i++;
      }
    }
    if (this.i === w.start) throw new ParseError(`unexpected '${src[this.i] ?? ''}'`);
    return w.build(src, this.i);
  }

  private readPercent(w: WordBuilder): void {
    const { src } = this;
    const start = this.i;
    const rest = src.slice(this.i, this.i + 512);
    const param = /^%(%[A-Za-z]|~[a-zA-Z$:]*[0-9A-Za-z]|[0-9*])/.exec(rest);
    if (param) {
      this.i += param[0].length;
      w.addVar(param[0], param[0]);
      return;
    }
    const named = /^%([^%\n"]+)%/.exec(rest);
    if (named) {
      this.i += named[0].length;
      w.addVar((named[1] as string).split(':')[0] as string, src.slice(start, this.i));
      return;
    }
    w.add('%');
    this.i++;
  }

  private readRedirect(draft: Draft, fd: string): void {
    const { src } = this;
    const start = this.i - fd.length;
    const op = ['>>', '>&', '<&', '>', '<'].find((o) => src.startsWith(o, this.i)) as string;
    this.i += op.length;
    this.skipBlanks();
    const c = src[this.i];
    if (c === undefined || META.has(c)) throw new ParseError(`redirection ${fd}${op} without a target`);
    const { raw: _raw, ...target } = this.readWord(null);
    let redirect: ShellRedirect;
    if ((op === '>&' || op === '<&') && /^\d$/.test(target.text)) redirect = { op: fd + op, kind: 'dup', target: null };
    else if (op.startsWith('<')) redirect = { op: fd + op, kind: 'read', target };
    else redirect = { op: fd + op, kind: 'write', target };
    draft.redirects.push(redirect);
    draft.touch(start, this.i);
  }
}

const COMPARISONS = new Set(['==', 'equ', 'neq', 'lss', 'leq', 'gtr', 'geq']);

/** Takes `if [/i] [not] <condition>` and `else` off the front, leaving the command they guard. */
function stripIf(words: ShellWord[]): ShellWord[] {
  let rest = words;
  for (;;) {
    const head = rest[0];
    if (!head || head.quoted) return rest;
    const lower = head.text.toLowerCase();
    if (lower === 'else') {
      rest = rest.slice(1);
      continue;
    }
    if (lower !== 'if') return rest;
    let k = 1;
    if (rest[k]?.text.toLowerCase() === '/i') k++;
    if (rest[k]?.text.toLowerCase() === 'not') k++;
    const cond = rest[k]?.text.toLowerCase() ?? '';
    if (['exist', 'defined', 'errorlevel', 'cmdextversion'].includes(cond)) k += 2;
    else if (COMPARISONS.has(rest[k + 1]?.text.toLowerCase() ?? '')) k += 3;
    else if (cond.includes('==')) k += 1;
    else return rest;
    rest = rest.slice(k);
  }
}
