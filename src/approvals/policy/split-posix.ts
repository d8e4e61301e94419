import { CommandList, SplitterBase, decodeAnsiC, Draft, MAX_NESTING, ParseError, WordBuilder, type ListState, type Sink, type WordDraft } from './split-common.js';
import type { ShellOperator, ShellRedirect } from './types.js';

/**
 * Splits POSIX sh/bash into simple commands: `;`, `&&`, `||`, `|`, `&`, newlines, subshells and
 * brace groups; quotes and backslashes as the shell reads them; `$(…)`, backticks and `<(…)` are
 * split too (their commands run) and make the command that holds them unsure.
 */

const META = new Set([' ', '\t', '\r', '\n', ';', '&', '|', '(', ')', '<', '>']);
/** Reserved words that only introduce or close the command after them. */
const SKIPPED = new Set(['!', 'if', 'then', 'else', 'elif', 'do', 'while', 'until', 'time', 'fi', 'done', 'esac']);
const REDIRECT_OPS = ['&>>', '&>', '<<<', '<<-', '>>', '>|', '>&', '<<', '<>', '<&', '>', '<'];

/** Splits `src` into the sink's parts; throws ParseError when it cannot be split with confidence. */
export function splitPosix(src: string, sink: Sink, nested: string | null = null, depth = 0): void {
  new PosixSplitter(src, sink, depth).parseList(null, nested);
}

class PosixSplitter extends SplitterBase<')'> {
  private readonly heredocs: { delim: string; stripTabs: boolean }[] = [];
  private braceDepth = 0;
  private readonly functions: { name: string; depth: number }[] = [];
  private pendingFunction: string | null = null;
  private expectFunctionName = false;

  private get currentFunction(): string | null {
    return this.functions.at(-1)?.name ?? null;
  }

  parseList(stop: ')' | null, nested: string | null): void {
    const { src } = this;
    const commands = new CommandList(this.sink.newList(), () => new Draft(nested, this.currentFunction), (d, before, after, list) => this.emit(d, before, after, list));
    let draft = commands.start();
    const finish = (after: ShellOperator | null): void => {
      draft = commands.finish(draft, after);
    };
    for (;;) {
      this.skipBlanks();
      if (this.i >= src.length) {
        if (stop) throw new ParseError(`unterminated ${nested ?? 'subshell ( … )'}`);
        finish(null);
        return;
      }
      const c = src[this.i] as string;
      const next = src[this.i + 1];
      if (c === '#') {
        while (this.i < src.length && src[this.i] !== '\n') this.i++;
        continue;
      }
      if (c === '\n') {
        this.i++;
        finish('\n');
        this.readHeredocBodies();
        continue;
      }
      if (c === ')') {
        if (stop !== ')') throw new ParseError("unexpected ')'");
        this.i++;
        finish(null);
        return;
      }
      if (c === ';') {
        if (next === ';' || next === '&') throw new ParseError('case statements are not supported');
        this.i++;
        finish(';');
        continue;
      }
      if (c === '&') {
        if (next === '&') {
          this.i += 2;
          finish('&&');
        } else if (next === '>') {
          this.readRedirect(draft, '');
        } else {
          this.i++;
          finish('&');
        }
        continue;
      }
      if (c === '|') {
        this.i += next === '|' || next === '&' ? 2 : 1;
        finish(next === '|' ? '||' : '|');
        continue;
      }
      if (c === '(') {
        draft = this.openParen(draft, nested);
        continue;
      }
      if ((c === '<' || c === '>') && next !== '(') {
        this.readRedirect(draft, '');
        continue;
      }
      const fd = /^(\d+|\{[A-Za-z_][A-Za-z0-9_]*\})(?=[<>])/.exec(src.slice(this.i, this.i + 24));
      if (fd && src[this.i + fd[0].length + 1] !== '(') {
        this.i += fd[0].length;
        this.readRedirect(draft, fd[0]);
        continue;
      }
      const word = this.readWord(draft);
      this.addWord(draft, word);
    }
  }

  private emit(draft: Draft, before: ShellOperator | null, after: ShellOperator | null, list: ListState): void {
    let k = 0;
    const assignments: string[] = [];
    while (k < draft.words.length && /^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=/.test((draft.words[k] as WordDraft).raw)) {
      assignments.push((draft.words[k] as WordDraft).text);
      k++;
    }
    const words = draft.words.slice(k).map(({ raw: _raw, ...w }) => w);
    this.sink.emit(
      {
        dialect: 'posix',
        text: this.src.slice(draft.start, draft.end).trim(),
        words,
        assignments,
        redirects: draft.redirects,
        unsure: draft.unsure,
        nested: draft.nested,
        inFunction: draft.inFunction,
      },
      before,
      after,
      list,
    );
  }

  private addWord(draft: Draft, word: WordDraft): void {
    if (this.expectFunctionName) {
      this.expectFunctionName = false;
      this.pendingFunction = word.text;
      // `function name()`: the parentheses are optional.
      const m = /^[ \t]*\([ \t]*\)/.exec(this.src.slice(this.i));
      if (m) this.i += m[0].length;
      return;
    }
    if (draft.words.length === 0 && !word.quoted && !word.dynamic) {
      const t = word.text;
      if (t === '{') {
        this.braceDepth++;
        if (this.pendingFunction !== null) {
          this.functions.push({ name: this.pendingFunction, depth: this.braceDepth });
          this.pendingFunction = null;
        }
        draft.inFunction = this.currentFunction;
        return;
      }
      if (t === '}') {
        if (this.functions.at(-1)?.depth === this.braceDepth) this.functions.pop();
        this.braceDepth = Math.max(0, this.braceDepth - 1);
        draft.inFunction = this.currentFunction;
        return;
      }
      if (SKIPPED.has(t)) return;
      if (t === 'function') {
        this.expectFunctionName = true;
        return;
      }
      if (t === 'case') throw new ParseError('case statements are not supported');
    }
    draft.touch(this.i - word.raw.length, this.i);
    draft.words.push(word);
  }

  private openParen(draft: Draft, nested: string | null): Draft {
    const { src } = this;
    const only = draft.words[0];
    if (draft.words.length === 1 && only && draft.redirects.length === 0 && !only.quoted && !only.dynamic) {
      const m = /^\([ \t]*\)/.exec(src.slice(this.i));
      if (!m) throw new ParseError(`unexpected '(' after '${only.text}'`);
      this.i += m[0].length;
      this.pendingFunction = only.text;
      return new Draft(nested, this.currentFunction);
    }
    if (!draft.empty) throw new ParseError("unexpected '('");
    if (src[this.i + 1] === '(') {
      const start = this.i;
      const end = this.matchArithmetic(this.i + 2);
      const body = src.slice(this.i + 2, end - 2);
      this.i = end;
      if (/\$\(|`/.test(body)) draft.note('a command substitution inside an arithmetic command cannot be judged');
      const w = new WordBuilder(start);
      w.add(src.slice(start, end));
      w.quoted = true;
      draft.touch(start, end);
      draft.words.push(w.build(src, end));
      return draft;
    }
    this.i++;
    const fn = this.pendingFunction;
    this.pendingFunction = null;
    if (fn !== null) this.functions.push({ name: fn, depth: -1 });
    this.nestedList(')', nested);
    if (fn !== null) this.functions.pop();
    return new Draft(nested, this.currentFunction);
  }

  /** A backslash before a newline joins the lines. */
  protected continuation(): number {
    return this.src[this.i] === '\\' && this.src[this.i + 1] === '\n' ? 2 : 0;
  }


  private readWord(draft: Draft): WordDraft {
    const { src } = this;
    const w = new WordBuilder(this.i);
    let braces = false;
    const c0 = src[this.i];
    if ((c0 === '<' || c0 === '>') && src[this.i + 1] === '(') {
      const start = this.i;
      this.i += 2;
      this.nestedList(')', `${c0}(…)`);
      w.addVar(`${c0}(…)`, src.slice(start, this.i));
      draft.note(`process substitution ${c0}(...) cannot be judged`);
    }
    while (this.i < src.length) {
      const c = src[this.i] as string;
      if (META.has(c)) break;
      switch (c) {
        case '\\': {
          const nx = src[this.i + 1];
          if (nx === '\n') this.i += 2;
          else if (nx === undefined) {
            w.add('\\');
            this.i++;
          } else {
            w.add(nx);
            w.quoted = true;
            this.i += 2;
          }
          break;
        }
        case "'": {
          const end = src.indexOf("'", this.i + 1);
          if (end < 0) throw new ParseError('unbalanced single quote');
          w.add(src.slice(this.i + 1, end));
          w.quoted = true;
          this.i = end + 1;
          break;
        }
        case '"':
          this.readDouble(w, draft);
          break;
        case '$':
          this.readDollar(w, draft, false);
          break;
        case '`':
          this.readBacktick(w, draft);
          break;
        case '*':
        case '?':
        case '[':
          w.glob = true;
          w.add(c);
          this.i++;
          break;
        case '{':
          braces = true;
          w.add(c);
          this.i++;
          break;
        default:
          w.add(c);
          this.i++;
      }
    }
    if (this.i === w.start) throw new ParseError(`unexpected '${src[this.i] ?? ''}'`);
    // Brace expansion makes several words whose values the policy cannot list with confidence.
    if (braces && /\{[^{}]*(,|\.\.)[^{}]*\}/.test(w.text)) w.dynamic = true;
    return w.build(src, this.i);
  }

  private readDouble(w: WordBuilder, draft: Draft): void {
    const { src } = this;
    this.i++;
    w.quoted = true;
    for (;;) {
      if (this.i >= src.length) throw new ParseError('unbalanced double quote');
      const c = src[this.i] as string;
      if (c === '"') {
        this.i++;
        return;
      }
      if (c === '\\') {
        const nx = src[this.i + 1];
        if (nx === undefined) throw new ParseError('unbalanced double quote');
        if (nx === '\n') this.i += 2;
        else if ('$`"\\'.includes(nx)) {
          w.add(nx);
          this.i += 2;
        } else {
          w.add('\\');
          this.i++;
        }
      } else if (c === '$') this.readDollar(w, draft, true);
      else if (c === '`') this.readBacktick(w, draft);
      else {
        w.add(c);
        this.i++;
      }
    }
  }

  private readDollar(w: WordBuilder, draft: Draft, inDouble: boolean): void {
    const { src } = this;
    const start = this.i;
    const nx = src[this.i + 1];
    if (nx === '(') {
      if (src[this.i + 2] === '(') {
        const end = this.matchArithmetic(this.i + 3);
        const body = src.slice(this.i + 3, end - 2);
        if (/\$\(|`/.test(body)) draft.note('a command substitution inside $((...)) cannot be judged');
        this.i = end;
        w.addVar('$((…))', src.slice(start, end));
        return;
      }
      this.i += 2;
      this.nestedList(')', '$(…)');
      w.addVar('$(…)', src.slice(start, this.i));
      draft.note('command substitution $(...) cannot be judged');
      return;
    }
    if (nx === '{') {
      const end = this.matchBrace(this.i + 2);
      const body = src.slice(this.i + 2, end);
      if (/\$\(|`/.test(body)) draft.note('a command substitution inside ${...} cannot be judged');
      const name = /^[#!]?([A-Za-z_][A-Za-z0-9_]*|\d+|[@*#?$!-])/.exec(body)?.[1] ?? body;
      this.i = end + 1;
      w.addVar(name, src.slice(start, this.i));
      return;
    }
    if (nx !== undefined && /[A-Za-z_]/.test(nx)) {
      const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(src.slice(this.i + 1)) as RegExpExecArray;
      this.i += 1 + m[0].length;
      w.addVar(m[0], src.slice(start, this.i));
      return;
    }
    if (nx !== undefined && /[0-9@*#?$!-]/.test(nx)) {
      this.i += 2;
      w.addVar(nx, src.slice(start, this.i));
      return;
    }
    if (nx === "'" && !inDouble) {
      let j = this.i + 2;
      while (j < src.length && src[j] !== "'") j += src[j] === '\\' ? 2 : 1;
      if (j >= src.length) throw new ParseError('unbalanced single quote');
      w.add(decodeAnsiC(src.slice(this.i + 2, j)));
      w.quoted = true;
      this.i = j + 1;
      return;
    }
    if (nx === '"' && !inDouble) {
      this.i++;
      this.readDouble(w, draft);
      return;
    }
    w.add('$');
    this.i++;
  }

  private readBacktick(w: WordBuilder, draft: Draft): void {
    const { src } = this;
    const start = this.i;
    let j = this.i + 1;
    let body = '';
    while (j < src.length && src[j] !== '`') {
      const nx = src[j + 1];
      if (src[j] === '\\' && nx !== undefined && '`$\\"'.includes(nx)) {
        body += nx;
        j += 2;
      } else {
        body += src[j] as string;
        j++;
      }
    }
    if (j >= src.length) throw new ParseError('unbalanced backtick');
    if (this.depth >= MAX_NESTING) throw new ParseError('the command is nested too deeply');
    this.sink.enterScope();
    new PosixSplitter(body, this.sink, this.depth + 1).parseList(null, '`…`');
    this.sink.leaveScope();
    this.i = j + 1;
    w.addVar('`…`', src.slice(start, this.i));
    draft.note('command substitution `...` cannot be judged');
  }

  private readRedirect(draft: Draft, fd: string): void {
    const { src } = this;
    const start = this.i - fd.length;
    const op = REDIRECT_OPS.find((o) => src.startsWith(o, this.i)) as string;
    this.i += op.length;
    const fullOp = fd + op;
    this.skipBlanks();
    if (op === '<<' || op === '<<-') {
      if (this.i >= src.length || META.has(src[this.i] as string)) throw new ParseError('here-document without a delimiter');
      const delim = this.readWord(draft);
      this.heredocs.push({ delim: delim.text, stripTabs: op === '<<-' });
      draft.redirects.push({ op: fullOp, kind: 'heredoc', target: null });
      draft.note('here-document cannot be judged');
      draft.touch(start, this.i);
      return;
    }
    const c = src[this.i];
    if (c === undefined || (META.has(c) && !((c === '<' || c === '>') && src[this.i + 1] === '('))) {
      throw new ParseError(`redirection ${fullOp} without a target`);
    }
    const target = this.readWord(draft);
    const { raw: _raw, ...word } = target;
    let redirect: ShellRedirect;
    if ((op === '>&' || op === '<&') && /^(\d+-?|-)$/.test(word.text)) redirect = { op: fullOp, kind: 'dup', target: null };
    else if (op === '<<<') redirect = { op: fullOp, kind: 'heredoc', target: null };
    else if (op === '<' || op === '<&') redirect = { op: fullOp, kind: 'read', target: word };
    else redirect = { op: fullOp, kind: 'write', target: word };
    draft.redirects.push(redirect);
    draft.touch(start, this.i);
  }

  private readHeredocBodies(): void {
    const { src } = this;
    for (const { delim, stripTabs } of this.heredocs.splice(0)) {
      while (this.i < src.length) {
        const nl = src.indexOf('\n', this.i);
        const lineEnd = nl < 0 ? src.length : nl;
        let line = src.slice(this.i, lineEnd);
        if (line.endsWith('\r')) line = line.slice(0, -1);
        this.i = nl < 0 ? src.length : nl + 1;
        if ((stripTabs ? line.replace(/^\t+/, '') : line) === delim) break;
      }
    }
  }

  /** The index just past the `))` that closes an arithmetic expression whose body starts at `from`. */
  private matchArithmetic(from: number): number {
    const { src } = this;
    let depth = 0;
    for (let j = from; j < src.length; j++) {
      const c = src[j];
      if (c === '(') depth++;
      else if (c === ')') {
        if (depth === 0) {
          if (src[j + 1] === ')') return j + 2;
          throw new ParseError('unbalanced arithmetic expression');
        }
        depth--;
      }
    }
    throw new ParseError('unterminated arithmetic expression');
  }

  /** The index of the `}` that closes a `${` whose body starts at `from`. */
  private matchBrace(from: number): number {
    const { src } = this;
    let depth = 0;
    for (let j = from; j < src.length; j++) {
      const c = src[j];
      if (c === '\\') j++;
      else if (c === "'") {
        const end = src.indexOf("'", j + 1);
        if (end < 0) throw new ParseError('unbalanced single quote');
        j = end;
      } else if (c === '{') depth++;
      else if (c === '}') {
        if (depth === 0) return j;
        depth--;
      }
    }
    throw new ParseError('unterminated ${...}');
  }
}
