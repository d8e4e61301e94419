/**
 * tmux's command grammar: an argument vector split into commands at `;`, each command's flags
 * read the way tmux's getopt does, command strings (hooks, key bindings) tokenized in tmux's
 * config syntax, and commands printed back the way `show-hooks` and `list-keys` print them.
 */
import { lookupCommand, type CommandSpec } from './command-table.js';

/** One command, parsed: its table entry, the flags given (each with its values, in order), and its positional arguments. */
export interface ParsedCommand {
  readonly spec: CommandSpec;
  /** Boolean flags map to one '' per time given; value flags to their values. */
  readonly flags: ReadonlyMap<string, readonly string[]>;
  readonly args: readonly string[];
}

/** A parse error, worded as tmux words it. */
export class CommandParseError extends Error {
  override readonly name = 'CommandParseError';
}

/**
 * Splits an argument vector into commands as tmux does: an argument ending in an unescaped `;`
 * ends a command (the `;` itself dropped, an argument of only `;` vanishing), while `\;` at the
 * end of an argument is a literal `;`.
 */
export function splitArgv(argv: readonly string[]): string[][] {
  const commands: string[][] = [];
  let current: string[] = [];
  for (const arg of argv) {
    if (arg.endsWith(';')) {
      const word = arg.slice(0, -1);
      if (word.endsWith('\\')) {
        current.push(`${word.slice(0, -1)};`);
        continue;
      }
      if (word !== '') current.push(word);
      if (current.length > 0) commands.push(current);
      current = [];
      continue;
    }
    current.push(arg);
  }
  if (current.length > 0) commands.push(current);
  return commands;
}

/** Reads one command's words (name first) against its table entry, as tmux's args_parse does. */
export function parseCommand(words: readonly string[], aliases: Readonly<Record<string, string>> = {}): ParsedCommand {
  const [name, ...rest] = words;
  if (name === undefined) throw new CommandParseError('unknown command: ');
  // A command alias (the command-alias option) expands to its words, then the rest follow.
  const alias = Object.hasOwn(aliases, name) ? aliases[name] : undefined;
  if (alias !== undefined) {
    const expanded = tokenizeCommandString(alias)[0] ?? [];
    if (expanded.length > 0 && expanded[0] !== name) return parseCommand([...expanded, ...rest], {});
  }
  const found = lookupCommand(name);
  if (!found.ok) throw new CommandParseError(found.error);
  const spec = found.spec;
  const flags = new Map<string, string[]>();
  let i = 0;
  for (; i < rest.length; i++) {
    const word = rest[i] as string;
    if (word === '--') {
      i++;
      break;
    }
    if (!word.startsWith('-') || word.length === 1) break;
    for (let j = 1; j < word.length; j++) {
      const flag = word[j] as string;
      if (spec.valueFlags.has(flag)) {
        let value: string | undefined = word.slice(j + 1);
        if (value === '') {
          value = rest[i + 1];
          if (value !== undefined) i++;
        }
        // tmux 3.3 leaves a value flag with no value unset rather than failing.
        if (value !== undefined) flags.set(flag, [...(flags.get(flag) ?? []), value]);
        break;
      }
      if (!spec.booleanFlags.has(flag)) throw new CommandParseError(`command ${spec.name}: unknown flag -${flag}`);
      flags.set(flag, [...(flags.get(flag) ?? []), '']);
    }
  }
  const args = rest.slice(i);
  if (args.length < spec.minArgs) throw new CommandParseError(`command ${spec.name}: too few arguments (need at least ${spec.minArgs})`);
  if (spec.maxArgs >= 0 && args.length > spec.maxArgs) throw new CommandParseError(`command ${spec.name}: too many arguments (need at most ${spec.maxArgs})`);
  return { spec, flags, args };
}

/** Parses a whole argument vector (all commands) before anything runs, as tmux does. */
export function parseArgv(argv: readonly string[], aliases: Readonly<Record<string, string>> = {}): ParsedCommand[] {
  return splitArgv(argv).map((words) => parseCommand(words, aliases));
}

/** The value of a flag given once (the last one when repeated), or undefined. */
export function flagValue(command: ParsedCommand, flag: string): string | undefined {
  return command.flags.get(flag)?.at(-1);
}

/** True when the flag was given. */
export function hasFlag(command: ParsedCommand, flag: string): boolean {
  return command.flags.has(flag);
}

/**
 * Tokenizes a command string in tmux's config syntax: words split on blanks, `;` between
 * commands, single quotes literal, double quotes with backslash escapes and `$VAR`, a backslash
 * escaping the next character, `#` comments, `~` for the home directory, and `{ … }` kept as one
 * word. Returns the commands' words.
 */
export function tokenizeCommandString(text: string, env: Readonly<Record<string, string>> = {}): string[][] {
  const commands: string[][] = [];
  let words: string[] = [];
  let word: string | undefined;
  const endWord = (): void => {
    if (word !== undefined) words.push(word);
    word = undefined;
  };
  const endCommand = (): void => {
    endWord();
    if (words.length > 0) commands.push(words);
    words = [];
  };
  let i = 0;
  const variable = (): string => {
    let name = '';
    if (text[i] === '{') {
      const close = text.indexOf('}', i);
      if (close === -1) throw new CommandParseError('syntax error');
      name = text.slice(i + 1, close);
      i = close + 1;
    } else {
      for (let c = text[i]; c !== undefined && /[A-Za-z0-9_]/.test(c); c = text[++i]) name += c;
    }
    return env[name] ?? '';
  };
  while (i < text.length) {
    const c = text[i] as string;
    if (c === ' ' || c === '\t') {
      endWord();
      i++;
    } else if (c === '\n' || c === ';') {
      endCommand();
      i++;
    } else if (c === '#' && word === undefined) {
      while (i < text.length && text[i] !== '\n') i++;
    } else if (c === '\\') {
      word = (word ?? '') + (text[i + 1] ?? '');
      i += 2;
    } else if (c === "'") {
      const close = text.indexOf("'", i + 1);
      if (close === -1) throw new CommandParseError('syntax error');
      word = (word ?? '') + text.slice(i + 1, close);
      i = close + 1;
    } else if (c === '"') {
      i++;
      let piece = '';
      for (;;) {
        if (i >= text.length) throw new CommandParseError('syntax error');
        const d = text[i] as string;
        if (d === '"') break;
        if (d === '\\') {
          const next = text[i + 1] ?? '';
          piece += next === 'n' ? '\n' : next === 't' ? '\t' : next === 'r' ? '\r' : next === 'e' ? '\x1b' : next;
          i += 2;
        } else if (d === '$') {
          i++;
          piece += variable();
        } else {
          piece += d;
          i++;
        }
      }
      word = (word ?? '') + piece;
      i++;
    } else if (c === '$') {
      i++;
      word = (word ?? '') + variable();
    } else if (c === '~' && word === undefined) {
      word = env.HOME ?? '~';
      i++;
    } else if (c === '{' && word === undefined) {
      let depth = 0;
      const start = i;
      for (; i < text.length; i++) {
        if (text[i] === '{') depth++;
        else if (text[i] === '}' && --depth === 0) break;
      }
      if (depth !== 0) throw new CommandParseError('syntax error');
      word = text.slice(start + 1, i).trim();
      i++;
    } else {
      word = (word ?? '') + c;
      i++;
    }
  }
  endCommand();
  return commands;
}

const DOUBLE_QUOTED = new Set([' ', '#', "'", ';', '$', '{', '}', '%']);

/**
 * Escapes one argument as tmux prints it (args_escape): bare, '…' or "…" with C-style escapes.
 * In a printed command (`inCommand`) a `$` in double quotes is escaped too, so the command parses
 * back to the same words; show-options prints values without that.
 */
export function escapeArgument(value: string, inCommand = false): string {
  if (value === '') return "''";
  const quote = Array.from(value).some((c) => DOUBLE_QUOTED.has(c)) ? '"' : value.includes('"') ? "'" : '';
  const first = value[0] as string;
  if (value.length === 1 && first !== ' ' && (quote !== '' || first === '~')) return `\\${first}`;
  let body = '';
  for (const ch of value) {
    const code = ch.codePointAt(0) ?? 0;
    if (ch === '\\') body += '\\\\';
    else if (ch === '\n') body += '\\n';
    else if (ch === '\t') body += '\\t';
    else if (ch === '\r') body += '\\r';
    else if ((ch === '"' || (ch === '$' && inCommand)) && quote === '"') body += `\\${ch}`;
    else if (code < 0x20 || code === 0x7f) body += `\\${code.toString(8).padStart(3, '0')}`;
    else body += ch;
  }
  if (quote === "'") return `'${body}'`;
  if (quote === '"') return body.startsWith('~') ? `"\\${body}"` : `"${body}"`;
  return body.startsWith('~') ? `\\${body}` : body;
}

/** A command as tmux prints it: its full name, stand-alone flags, flags with values, then arguments. */
export function printCommand(command: ParsedCommand): string {
  const entries = [...command.flags.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  let out = command.spec.name;
  let bare = '';
  for (const [flag, values] of entries) if (command.spec.booleanFlags.has(flag)) bare += flag.repeat(values.length);
  if (bare !== '') out += ` -${bare}`;
  for (const [flag, values] of entries) {
    if (!command.spec.valueFlags.has(flag)) continue;
    for (const value of values) out += ` -${flag} ${escapeArgument(value, true)}`;
  }
  for (const arg of command.args) out += ` ${escapeArgument(arg, true)}`;
  return out;
}
