import type { ShellDialect, ShellOperator, ShellRedirect, ShellVar, ShellWord, SimpleCommand } from './types.js';

/**
 * What the three dialect splitters share: the word builder, the part draft, and the sink that turns
 * drafts into simple commands while tracking where each one runs (`cd`) and its pipeline.
 */

export const MAX_COMMAND_LENGTH = 100_000;
export const MAX_NESTING = 12;
const MAX_PARTS = 2_000;
const MAX_CWD_CHAINS = 16;

/** A command that cannot be split with confidence; the message says why. */
export class ParseError extends Error {
  override readonly name = 'ParseError';
}

export interface WordDraft extends ShellWord {
  /** The word as written in its source. */
  raw: string;
}

/** Accumulates one word while a splitter reads it. */
export class WordBuilder {
  text = '';
  quoted = false;
  dynamic = false;
  glob = false;
  code = false;
  readonly vars: ShellVar[] = [];

  constructor(readonly start: number) {}

  add(s: string): void {
    this.text += s;
  }

  /** Appends an expansion as written (`$HOME`, `%USERPROFILE%`, `$(…)`); its value is unknown. */
  addVar(name: string, source: string): void {
    const start = this.text.length;
    this.text += source;
    this.vars.push({ name, start, end: this.text.length });
    this.dynamic = true;
  }

  build(src: string, end: number): WordDraft {
    return {
      text: this.text,
      quoted: this.quoted,
      vars: this.vars,
      dynamic: this.dynamic,
      glob: this.glob,
      code: this.code,
      raw: src.slice(this.start, end),
    };
  }
}

/** A simple command while it is being read. */
export class Draft {
  words: WordDraft[] = [];
  redirects: ShellRedirect[] = [];
  unsure: string[] = [];
  start = -1;
  end = -1;

  constructor(
    readonly nested: string | null,
    public inFunction: string | null,
  ) {}

  /** Widens the source span the command's text is taken from. */
  touch(start: number, end: number): void {
    if (this.start < 0 || start < this.start) this.start = start;
    if (end > this.end) this.end = end;
  }

  note(reason: string): void {
    if (!this.unsure.includes(reason)) this.unsure.push(reason);
  }

  get empty(): boolean {
    return this.words.length === 0 && this.redirects.length === 0 && this.unsure.length === 0;
  }
}

type Chain = (ShellWord | null)[];

/** Per-list state: the operator before the next command and the pipeline so far. */
export interface ListState {
  upstream: string[][];
  /** Where commands may run at the start of the current and-or list (for `||`). */
  listStart: Chain[];
}

/** Collects simple commands in execution order, with where each may run. */
export class Sink {
  readonly parts: SimpleCommand[] = [];
  private cwd: Chain[] = [[]];
  private readonly saved: Chain[][] = [];

  constructor(readonly dialect: ShellDialect) {}

  newList(): ListState {
    return { upstream: [], listStart: this.cwd };
  }

  /** A subshell, substitution or block: directory changes inside may or may not outlive it. */
  enterScope(): void {
    this.saved.push(this.cwd);
  }

  leaveScope(): void {
    const outer = this.saved.pop() ?? [[]];
    this.cwd = union(outer, this.cwd);
  }

  emit(
    fields: { text: string; words: ShellWord[]; assignments: string[]; redirects: ShellRedirect[]; unsure: string[]; nested: string | null; inFunction: string | null; dialect: ShellDialect },
    before: ShellOperator | null,
    after: ShellOperator | null,
    list: ListState,
  ): void {
    if (this.parts.length >= MAX_PARTS) throw new ParseError(`more than ${MAX_PARTS} commands`);
    const argv = fields.words.map((w) => w.text);
    const part: SimpleCommand = {
      ...fields,
      argv,
      before,
      after,
      upstream: before === '|' ? list.upstream : [],
      cwd: this.cwd,
    };
    this.parts.push(part);
    list.upstream = after === '|' ? [...part.upstream, argv] : [];

    const target = cdTarget(part);
    if (target !== 'none') {
      const moved = this.cwd.map((chain) => [...chain, target]);
      // Only `cd x && next` is sure to move `next`: after `;` the cd may have failed, and a cd in
      // a pipeline or in the background does not move the shell at all; keep every possibility.
      this.cwd = after === '&&' && before !== '|' ? cap(moved) : union(this.cwd, moved);
    }
    if (after === '||') this.cwd = union(this.cwd, list.listStart);
    if (after !== '&&' && after !== '||' && after !== '|') list.listStart = this.cwd;
  }
}

function chainKey(chain: Chain): string {
  return chain.map((w) => (w === null ? '\u0000' : w.text)).join('\u0001');
}

function cap(chains: Chain[]): Chain[] {
  return chains.length > MAX_CWD_CHAINS ? [[null]] : chains;
}

function union(a: Chain[], b: Chain[]): Chain[] {
  if (a === b) return a;
  const seen = new Set(a.map(chainKey));
  const out = [...a];
  for (const chain of b) {
    const key = chainKey(chain);
    if (!seen.has(key)) {
      seen.add(key);
      out.push(chain);
    }
  }
  return cap(out);
}

const CD_NAMES: Record<ShellDialect, ReadonlySet<string>> = {
  posix: new Set(['cd', 'pushd', 'popd', 'chdir']),
  powershell: new Set(['cd', 'chdir', 'sl', 'set-location', 'pushd', 'push-location', 'popd', 'pop-location']),
  cmd: new Set(['cd', 'chdir', 'pushd', 'popd']),
};

const HOME_WORD: ShellWord = { text: '~', quoted: false, vars: [], dynamic: false, glob: false, code: false };

/** Where a `cd`-like command moves the shell: a word, null when unknown, 'none' for no move. */
function cdTarget(part: SimpleCommand): ShellWord | null | 'none' {
  let words = part.words;
  // `builtin cd` and `command cd` still move the shell.
  while (words.length > 1 && !words[0]?.quoted && (words[0]?.text === 'builtin' || words[0]?.text === 'command')) words = words.slice(1);
  const [first, ...rest] = words;
  if (!first || first.dynamic) return 'none';
  const name = first.text.toLowerCase();
  if (!CD_NAMES[part.dialect].has(name) || (part.dialect === 'posix' && first.text !== name)) return 'none';
  if (name === 'popd' || name === 'pop-location') return null;
  const operands: ShellWord[] = [];
  for (let i = 0; i < rest.length; i++) {
    const w = rest[i] as ShellWord;
    const lower = w.text.toLowerCase();
    if (part.dialect === 'powershell' && /^-(path|literalpath|lp|psp)$/.test(lower)) continue;
    if (part.dialect === 'powershell' && /^-(stackname|passthru)$/.test(lower)) {
      if (lower === '-stackname') i++;
      continue;
    }
    if (part.dialect === 'cmd' && /^\/d$/.test(lower)) continue;
    if (part.dialect === 'posix' && /^-[LPe@]+$/.test(w.text)) continue;
    operands.push(w);
  }
  const target = operands[0];
  if (!target) {
    if (part.dialect === 'posix' && name !== 'pushd') return HOME_WORD;
    return part.dialect === 'cmd' ? 'none' : null;
  }
  if (target.text === '-' || /^[+-]\d+$/.test(target.text)) return null;
  return target;
}

/** Decodes the escapes of a bash `$'…'` string, so `$'rm\x20-rf'` is read as what runs. */
export function decodeAnsiC(body: string): string {
  return body.replace(/\\(x[0-9a-fA-F]{1,2}|u[0-9a-fA-F]{1,4}|U[0-9a-fA-F]{1,8}|[0-7]{1,3}|c.|.)/gs, (_m, esc: string) => {
    const c = esc[0] as string;
    if (c === 'x' || c === 'u' || c === 'U') {
      const code = Number.parseInt(esc.slice(1), 16);
      return code <= 0x10ffff ? String.fromCodePoint(code) : '';
    }
    if (/[0-7]/.test(c)) return String.fromCharCode(Number.parseInt(esc, 8) & 0xff);
    if (c === 'c') return String.fromCharCode((esc.charCodeAt(1) || 0) & 0x1f);
    const simple: Record<string, string> = { n: '\n', t: '\t', r: '\r', a: '\x07', b: '\b', e: '\x1b', E: '\x1b', f: '\f', v: '\v' };
    return simple[c] ?? c;
  });
}

/**
 * One command list being split: hands each finished command to `emit` with the operators before
 * and after it, and starts the next. Empty commands (`;;`, a leading newline) emit nothing but
 * still pass their operator on to the next command.
 */
export class CommandList {
  private before: ShellOperator | null = null;

  constructor(
    private readonly state: ListState,
    private readonly newDraft: () => Draft,
    private readonly emit: (draft: Draft, before: ShellOperator | null, after: ShellOperator | null, list: ListState) => void,
  ) {}

  /** A draft for the list's first command. */
  start(): Draft {
    return this.newDraft();
  }

  /** Ends `draft` at the operator `after` (null at the end of the list); returns the next draft. */
  finish(draft: Draft, after: ShellOperator | null): Draft {
    if (!draft.empty) {
      this.emit(draft, this.before, after, this.state);
      this.before = after;
    } else if (after !== null && after !== '\n') {
      this.before = after;
    }
    return this.newDraft();
  }
}

/**
 * What the three splitters share: the source and a cursor into it, the sink, how deep the nesting
 * is, and how blanks and a dialect's line continuation are skipped.
 */
export abstract class SplitterBase<Stop extends string> {
  protected i = 0;

  constructor(
    protected readonly src: string,
    protected readonly sink: Sink,
    protected depth: number,
  ) {}

  abstract parseList(stop: Stop | null, nested: string | null): void;

  /** Characters that separate words like a space does, besides space, tab and CR. */
  protected get extraBlanks(): string {
    return '';
  }

  /** The length of a line continuation at `at` (the dialect's escape, then LF or CRLF), 0 if none. */
  protected continuationAt(at: number, escape: string): number {
    if (this.src[at] !== escape) return 0;
    if (this.src[at + 1] === '\n') return 2;
    return this.src[at + 1] === '\r' && this.src[at + 2] === '\n' ? 3 : 0;
  }

  /** The dialect's line continuation at the cursor (its length, 0 if none). */
  protected abstract continuation(): number;

  protected skipBlanks(): void {
    const { src } = this;
    while (this.i < src.length) {
      const c = src[this.i] as string;
      if (c === ' ' || c === '\t' || c === '\r' || this.extraBlanks.includes(c)) {
        this.i++;
        continue;
      }
      const skip = this.continuation();
      if (skip === 0) break;
      this.i += skip;
    }
  }

  /** Parses a nested list (a subshell, a block) one level deeper, in a scope of its own. */
  protected nestedList(stop: Stop, nested: string | null): void {
    if (this.depth >= MAX_NESTING) throw new ParseError('the command is nested too deeply');
    this.depth++;
    this.sink.enterScope();
    this.parseList(stop, nested);
    this.sink.leaveScope();
    this.depth--;
  }
}
