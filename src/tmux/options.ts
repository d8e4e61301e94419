/**
 * tmux options at every scope: a store per scope (server, global session, session, global window,
 * window, pane) whose lookups fall back to the parent, values checked against the option table the
 * way tmux checks them, and option lines printed the way show-options prints them.
 */
import { escapeArgument } from './grammar.js';
import { NUMBER_LIMITS, OPTION_TABLE, optionEntry, type OptionEntry, type OptionScope } from './option-table.js';
import { isKeyName } from './keys.js';

export type OptionValue = string | readonly string[];

/** A failed option operation, worded as tmux words it. */
export class OptionError extends Error {
  override readonly name = 'OptionError';
}

/** One scope's options; unset names are looked up in the parent. */
export class OptionStore {
  private readonly values = new Map<string, OptionValue>();

  constructor(readonly parent: OptionStore | undefined) {}

  /** A store holding the defaults of every built-in option of `scopes`. */
  static withDefaults(scopes: readonly OptionScope[]): OptionStore {
    const store = new OptionStore(undefined);
    for (const entry of OPTION_TABLE) if (scopes.includes(entry.scope)) store.values.set(entry.name, entry.default);
    return store;
  }

  getOwn(name: string): OptionValue | undefined {
    return this.values.get(name);
  }

  get(name: string): OptionValue | undefined {
    return this.values.get(name) ?? this.parent?.get(name);
  }

  has(name: string): boolean {
    return this.values.has(name);
  }

  set(name: string, value: OptionValue): void {
    this.values.set(name, value);
  }

  delete(name: string): void {
    this.values.delete(name);
  }

  /** Own option names: user options (alphabetically) first, then built-ins in table order, as show-options lists them. */
  names(): string[] {
    const user = [...this.values.keys()].filter((n) => n.startsWith('@')).sort();
    const builtIn = OPTION_TABLE.filter((e) => this.values.has(e.name)).map((e) => e.name);
    const other = [...this.values.keys()].filter((n) => !n.startsWith('@') && !optionEntry(n)).sort();
    return [...user, ...builtIn, ...other];
  }
}

/** A name as given to set-option: `name` or `name[index]`. */
export interface OptionName {
  name: string;
  index: number | undefined;
}

/** Splits `name[3]` into name and index. */
export function parseOptionName(text: string): OptionName {
  const match = /^(.*)\[(\d+)\]$/.exec(text);
  if (!match) return { name: text, index: undefined };
  return { name: match[1] as string, index: Number(match[2]) };
}

/** A value of the store as one string (arrays joined by a space, as formats see them). */
export function optionString(value: OptionValue | undefined, index?: number): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'string') return value;
  if (index !== undefined) return value[index];
  return value.join(' ');
}

const COLOUR_NAMES = new Set(['default', 'terminal', 'none', 'black', 'red', 'green', 'yellow', 'blue', 'magenta', 'cyan', 'white', 'brightblack', 'brightred', 'brightgreen', 'brightyellow', 'brightblue', 'brightmagenta', 'brightcyan', 'brightwhite']);

/** True when tmux accepts `text` as a colour. */
export function isColour(text: string): boolean {
  const lower = text.toLowerCase();
  if (COLOUR_NAMES.has(lower)) return true;
  if (/^colou?r(\d{1,3})$/.test(lower)) return Number(lower.replace(/\D/g, '')) < 256;
  if (/^#[0-9a-f]{6}$/.test(lower)) return true;
  if (/^\d{1,3}$/.test(lower)) return Number(lower) < 256;
  return false;
}

const STYLE_WORDS = new Set(['default', 'push-default', 'pop-default', 'nolist', 'norange', 'noalign', 'ignore', 'noignore', 'fill', 'none', 'bright', 'bold', 'dim', 'underscore', 'blink', 'reverse', 'hidden', 'italics', 'strikethrough', 'double-underscore', 'curly-underscore', 'dotted-underscore', 'dashed-underscore', 'overline', 'acs']);

/** True when tmux accepts `text` as a style (formats are accepted unchecked, as tmux does). */
export function isStyle(text: string): boolean {
  if (text.includes('#{')) return true;
  for (const raw of text.split(/[ ,]+/)) {
    const word = raw.trim().toLowerCase();
    if (word === '') continue;
    if (STYLE_WORDS.has(word) || STYLE_WORDS.has(word.replace(/^no/, ''))) continue;
    const eq = word.indexOf('=');
    if (eq <= 0) return false;
    const key = word.slice(0, eq);
    const value = word.slice(eq + 1);
    if (key === 'fg' || key === 'bg' || key === 'us' || key === 'fill') {
      if (!isColour(value)) return false;
    } else if (!['align', 'list', 'range', 'width'].includes(key)) return false;
  }
  return true;
}

/** Checks a value for a built-in option and returns it as stored; throws OptionError with tmux's message. */
export function checkValue(entry: OptionEntry, value: string | undefined, current: OptionValue | undefined): string {
  switch (entry.type) {
    case 'flag': {
      if (value === undefined || value === '') return current === 'on' ? 'off' : 'on';
      const v = value.toLowerCase();
      if (['on', 'yes', '1'].includes(v)) return 'on';
      if (['off', 'no', '0'].includes(v)) return 'off';
      throw new OptionError(`bad value: ${value}`);
    }
    case 'choice': {
      if (value === undefined || value === '') {
        // A two-way choice toggles like a flag; others need a value.
        const choices = entry.choices ?? [];
        if (choices.length === 2 && choices[0] === 'off') return current === 'on' ? 'off' : 'on';
        throw new OptionError('empty value');
      }
      if (!(entry.choices ?? []).includes(value)) throw new OptionError(`unknown value: ${value}`);
      return value;
    }
    case 'number': {
      if (value === undefined || value === '') throw new OptionError('empty value');
      const [min, max] = NUMBER_LIMITS[entry.name] ?? [0, 2_147_483_647];
      if (!/^-?\d+$/.test(value)) throw new OptionError(`value is invalid: ${value}`);
      const n = Number(value);
      if (n < min) throw new OptionError(`value is too small: ${value}`);
      if (n > max) throw new OptionError(`value is too large: ${value}`);
      return String(n);
    }
    case 'colour':
      if (value === undefined || value === '') throw new OptionError('empty value');
      if (!isColour(value)) throw new OptionError(`bad colour: ${value}`);
      return value;
    case 'style':
      if (value === undefined) throw new OptionError('empty value');
      if (!isStyle(value)) throw new OptionError(`invalid style: ${value}`);
      return value;
    case 'key':
      if (value === undefined || value === '') throw new OptionError('empty value');
      if (!isKeyName(value)) throw new OptionError(`bad key: ${value}`);
      return value;
    default:
      if (value === undefined) throw new OptionError('empty value');
      return value;
  }
}

/** show-options' lines for one option: `name value`, `name[i] value` for arrays, `name` for an empty array; `*` marks inherited. */
export function optionLines(name: string, value: OptionValue, options: { valuesOnly: boolean; inherited?: boolean; index?: number }): string[] {
  const star = options.inherited ? '*' : '';
  if (typeof value === 'string') return [options.valuesOnly ? value : `${name}${star} ${escapeArgument(value)}`];
  if (options.index !== undefined) {
    const item = value[options.index];
    if (item === undefined) return [];
    return [options.valuesOnly ? item : `${name}[${options.index}]${star} ${escapeArgument(item)}`];
  }
  if (value.length === 0) return options.valuesOnly ? [] : [`${name}${star}`];
  return value.map((item, i) => (options.valuesOnly ? item : `${name}[${i}]${star} ${escapeArgument(item)}`));
}
