/**
 * tmux's format language (`#{pane_id}`, `#{?pane_active,yes,no}`, `#{==:a,b}`, `#{t:session_created}`,
 * `#S`, …) over a scope that answers variables, options and environment variables. It follows tmux
 * 3.3's rules: options are found before variables, then the environment; an unknown name expands
 * to nothing; a condition that names nothing and does not expand is false.
 */

/** Where a format looks names up. */
export interface FormatScope {
  /** A format variable (pane_id, session_name, …), or undefined when there is none. */
  variable(name: string): string | undefined;
  /** An option's value as a string (`@user` options and tmux's own, `name[i]` for arrays), or undefined. */
  option(name: string): string | undefined;
  /** A variable of the session's, then the global, environment. */
  environment(name: string): string | undefined;
  /** The scopes a loop modifier walks (S: sessions, W: windows, P: panes), each marked when current. */
  loop(kind: 'S' | 'W' | 'P'): { scope: FormatScope; current: boolean }[];
}

/** A scope with nothing in it (every name expands to nothing). */
export const EMPTY_SCOPE: FormatScope = {
  variable: () => undefined,
  option: () => undefined,
  environment: () => undefined,
  loop: () => [],
};

/** The one-letter aliases: `#S` is `#{session_name}`, and so on. */
const SHORT_ALIASES: Readonly<Record<string, string>> = {
  D: 'pane_id',
  F: 'window_flags',
  H: 'host',
  I: 'window_index',
  P: 'pane_index',
  S: 'session_name',
  T: 'pane_title',
  W: 'window_name',
  h: 'host_short',
};

/** Most nested expansions before giving up (a format that expands itself forever). */
const MAX_DEPTH = 100;

interface Expansion {
  readonly scope: FormatScope;
  readonly time: Date | undefined;
  readonly depth: number;
}

export interface ExpandOptions {
  /** Run strftime over the template first, as display-message does (format_expand_time). */
  time?: Date;
}

/** Expands a format against `scope`. */
export function expandFormat(template: string, scope: FormatScope, options: ExpandOptions = {}): string {
  return expand(template, { scope, time: options.time, depth: 0 });
}

/** True as tmux reads a value: set, and not "0". */
export function formatTrue(value: string | undefined): boolean {
  return value !== undefined && value !== '' && value !== '0';
}

/** Finds the end of `s` at one of `ends` outside nested `#{…}` and `#`-escapes (tmux's format_skip). */
function skip(s: string, from: number, ends: string): number {
  let brackets = 0;
  for (let i = from; i < s.length; i++) {
    const c = s[i] as string;
    if (c === '#' && s[i + 1] === '{') brackets++;
    if (c === '#' && i + 1 < s.length && ',#{}:'.includes(s[i + 1] as string)) {
      i++;
      continue;
    }
    if (c === '}') brackets--;
    if (ends.includes(c) && brackets === 0) return i;
  }
  return -1;
}

function expand(template: string, e: Expansion): string {
  if (e.depth > MAX_DEPTH) return '';
  const fmt = e.time ? strftime(template, e.time) : template;
  let out = '';
  let i = 0;
  while (i < fmt.length) {
    const c = fmt[i] as string;
    if (c !== '#' || i + 1 >= fmt.length) {
      out += c;
      i++;
      continue;
    }
    const ch = fmt[i + 1] as string;
    i += 2;
    if (ch === '(') {
      // Shell commands are not run: they expand to nothing, as tmux's do before their first result.
      const end = skip(fmt, i - 1, ')');
      if (end === -1) break;
      i = end + 1;
    } else if (ch === '{') {
      const end = skip(fmt, i - 2, '}');
      if (end === -1) break;
      out += replace(fmt.slice(i, end), e);
      i = end + 1;
    } else if (ch === '#') {
      // `##[` (or more #s) is a style left for the drawing code; otherwise `##` is a literal #.
      let p = i;
      while (fmt[p] === '#') p++;
      if (fmt[p] === '[') {
        out += fmt.slice(i - 2, p + 1);
        i = p + 1;
      } else out += '#';
    } else if (ch === '}' || ch === ',') {
      out += ch;
    } else {
      const name = SHORT_ALIASES[ch];
      out += name === undefined ? `#${ch}` : replace(name, e);
    }
  }
  return out;
}

interface Modifier {
  name: string;
  args: string[];
}

function isEnd(c: string | undefined): boolean {
  return c === ';' || c === ':';
}

function isPunct(c: string): boolean {
  return /[!-/:-@[-`{-~]/.test(c);
}

/** Reads the `mod;mod:` prefix of a replacement; undefined when it has none. */
function parseModifiers(key: string, e: Expansion): { modifiers: Modifier[]; rest: string } | undefined {
  const modifiers: Modifier[] = [];
  let i = 0;
  while (i < key.length && key[i] !== ':') {
    if (key[i] === ';') i++;
    const c = key[i] ?? '';
    const next = key[i + 1];
    if ('labcdnwETSWPL<>'.includes(c) && c !== '' && isEnd(next)) {
      modifiers.push({ name: c, args: [] });
      i++;
      continue;
    }
    const two = key.slice(i, i + 2);
    if (['||', '&&', '!=', '==', '<=', '>='].includes(two) && isEnd(key[i + 2])) {
      modifiers.push({ name: two, args: [] });
      i += 2;
      continue;
    }
    if (c === '' || !'mCNst=peq'.includes(c)) break;
    if (isEnd(next)) {
      modifiers.push({ name: c, args: [] });
      i++;
      continue;
    }
    if (next !== undefined && (!isPunct(next) || next === '-')) {
      const end = skip(key, i + 1, ':;');
      if (end === -1) break;
      modifiers.push({ name: c, args: [expand(key.slice(i + 1, end), { ...e, depth: e.depth + 1 })] });
      i = end;
      continue;
    }
    // Arguments wrapped in a separator character: s/a/b/, =/5/…/, e|+|.
    const sep = next ?? '';
    i++;
    const args: string[] = [];
    for (;;) {
      if (key[i] === sep && isEnd(key[i + 1])) {
        i++;
        break;
      }
      // An argument ends at the separator, or at the ';' or ':' that ends the modifier.
      const end = skip(key, i + 1, `${sep};:`);
      if (end === -1) {
        i = key.length;
        break;
      }
      args.push(expand(key.slice(i + 1, end), { ...e, depth: e.depth + 1 }));
      i = end;
      if (isEnd(key[i])) break;
    }
    modifiers.push({ name: c, args });
  }
  if (key[i] !== ':') return undefined;
  return { modifiers, rest: key.slice(i + 1) };
}

/** Splits `a,b` at the first top-level comma; undefined when there is none. */
function choose(s: string): [string, string] | undefined {
  const comma = skip(s, 0, ',');
  if (comma === -1) return undefined;
  return [s.slice(0, comma), s.slice(comma + 1)];
}

/** Finds a name as tmux does: options first, then variables, then the environment. */
function find(name: string, scope: FormatScope): string | undefined {
  return scope.option(name) ?? scope.variable(name) ?? scope.environment(name);
}

function replace(key: string, e: Expansion): string {
  const next: Expansion = { ...e, depth: e.depth + 1 };
  const parsed = parseModifiers(key, e);
  const modifiers = parsed?.modifiers ?? [];
  const body = parsed ? parsed.rest : key;
  const has = (name: string): Modifier | undefined => modifiers.find((m) => m.name === name);

  let value: string;
  const compare = modifiers.find((m) => ['||', '&&', '!=', '==', '<=', '>=', '<', '>', 'm'].includes(m.name));
  const loop = modifiers.find((m) => m.name === 'S' || m.name === 'W' || m.name === 'P');
  if (has('l')) value = body;
  else if (loop) value = expandLoop(loop.name as 'S' | 'W' | 'P', body, next);
  else if (has('N')) value = find(body, e.scope) !== undefined ? '1' : '0';
  else if (compare) {
    const pair = choose(body);
    if (!pair) return '';
    const left = expand(pair[0], next);
    const right = expand(pair[1], next);
    value = compareValues(compare, left, right);
  } else if (body.startsWith('?')) {
    value = conditional(body.slice(1), next);
  } else if (has('e')) {
    value = arithmetic(has('e') as Modifier, body, next);
  } else if (body.includes('#{')) {
    value = expand(body, next);
  } else {
    const found = find(body, e.scope);
    if (found === undefined) return applyValueModifiers('', modifiers, next);
    const t = has('t');
    value = foundModifiers(t ? formatTime(found, t.args) : found, modifiers);
  }
  return applyValueModifiers(value, modifiers, next);
}

/** `#{?cond,a,b}`: a name that is set and not 0, or an expansion that changes, chooses a (3.3 has no further conditions: b is the rest). */
function conditional(body: string, e: Expansion): string {
  const comma = skip(body, 0, ',');
  if (comma === -1) return '';
  const condition = body.slice(0, comma);
  let found = find(condition, e.scope);
  if (found === undefined) {
    const expanded = expand(condition, e);
    found = expanded === condition ? '' : expanded;
  }
  const branches = choose(body.slice(comma + 1));
  if (!branches) return '';
  return expand(formatTrue(found) ? branches[0] : branches[1], e);
}

function compareValues(m: Modifier, left: string, right: string): string {
  switch (m.name) {
    case '||':
      return formatTrue(left) || formatTrue(right) ? '1' : '0';
    case '&&':
      return formatTrue(left) && formatTrue(right) ? '1' : '0';
    case '==':
      return left === right ? '1' : '0';
    case '!=':
      return left !== right ? '1' : '0';
    case '<':
      return left < right ? '1' : '0';
    case '>':
      return left > right ? '1' : '0';
    case '<=':
      return left <= right ? '1' : '0';
    case '>=':
      return left >= right ? '1' : '0';
    default:
      return matches(m.args[0] ?? '', left, right) ? '1' : '0';
  }
}

/** `#{m:pattern,string}`: a glob (fnmatch) or, with `m/r`, a regular expression; `i` ignores case. */
function matches(flags: string, pattern: string, text: string): boolean {
  const ignoreCase = flags.includes('i');
  if (flags.includes('r')) {
    try {
      return new RegExp(pattern, ignoreCase ? 'i' : '').test(text);
    } catch {
      return false;
    }
  }
  let source = '^';
  for (const ch of pattern) {
    if (ch === '*') source += '.*';
    else if (ch === '?') source += '.';
    else source += ch.replace(/[\\^$.|+()[\]{}]/g, '\\$&');
  }
  return new RegExp(`${source}$`, ignoreCase ? 'is' : 's').test(text);
}

/** `#{e|+|:a,b}`: integer (or, with `f`, floating point) arithmetic and comparisons. */
function arithmetic(m: Modifier, body: string, e: Expansion): string {
  const op = m.args[0] ?? '';
  const float = (m.args[1] ?? '').includes('f');
  const places = Number(m.args[2] ?? (float ? '2' : '0'));
  const pair = choose(body);
  if (!pair) return '';
  const a = Number(expand(pair[0], e));
  const b = Number(expand(pair[1], e));
  if (!Number.isFinite(a) || !Number.isFinite(b)) return '';
  let r: number;
  switch (op) {
    case '+': r = a + b; break;
    case '-': r = a - b; break;
    case '*': r = a * b; break;
    case '/': if (b === 0) return ''; r = a / b; break;
    case '%': if (b === 0) return ''; r = a % b; break;
    case '==': r = a === b ? 1 : 0; break;
    case '!=': r = a !== b ? 1 : 0; break;
    case '<': r = a < b ? 1 : 0; break;
    case '>': r = a > b ? 1 : 0; break;
    case '<=': r = a <= b ? 1 : 0; break;
    case '>=': r = a >= b ? 1 : 0; break;
    default: return '';
  }
  return float ? r.toFixed(places) : String(Math.trunc(r));
}

function expandLoop(kind: 'S' | 'W' | 'P', body: string, e: Expansion): string {
  const pair = choose(body);
  const each = pair ? pair[0] : body;
  const current = pair ? pair[1] : body;
  let out = '';
  for (const item of e.scope.loop(kind)) {
    out += expand(item.current ? current : each, { ...e, scope: item.scope });
  }
  return out;
}

/** Modifiers tmux applies to a value it found by name: basename, dirname, shell quoting. */
function foundModifiers(input: string, modifiers: Modifier[]): string {
  let value = input;
  for (const m of modifiers) {
    switch (m.name) {
      case 'b':
        value = value.replace(/\/+$/, '').split('/').pop() ?? '';
        break;
      case 'd': {
        const trimmed = value.replace(/\/+$/, '');
        const slash = trimmed.lastIndexOf('/');
        value = slash > 0 ? trimmed.slice(0, slash) : slash === 0 ? '/' : '.';
        break;
      }
      case 'q':
        value = value.replace(/([|&;<>()$`\\"' *?[#=%])/g, '\\$1');
        break;
      default:
        break;
    }
  }
  return value;
}

/** Modifiers tmux applies to any value at the end: expansion again, substitution, width, padding, length. */
function applyValueModifiers(input: string, modifiers: Modifier[], e: Expansion): string {
  let value = input;
  for (const m of modifiers) {
    switch (m.name) {
      case 'E':
        value = expand(value, e);
        break;
      case 'T':
        value = expand(value, { ...e, time: e.time ?? new Date() });
        break;
      case 's': {
        const [from = '', to = '', flags = ''] = m.args;
        try {
          value = value.replace(new RegExp(from, flags.includes('i') ? 'gi' : 'g'), to.replace(/\\(\d)/g, '$$$1'));
        } catch {
          // A bad pattern leaves the value as it was.
        }
        break;
      }
      default:
        break;
    }
  }
  for (const m of modifiers) {
    if (m.name === '=') value = limitWidth(value, Number(m.args[0] ?? '0'), m.args[1]);
    else if (m.name === 'p') value = pad(value, Number(m.args[0] ?? '0'));
  }
  if (modifiers.some((m) => m.name === 'n' || m.name === 'w')) value = String(Array.from(value).length);
  return value;
}

function limitWidth(value: string, limit: number, marker: string | undefined): string {
  if (!Number.isFinite(limit) || limit === 0) return value;
  const chars = Array.from(value);
  if (chars.length <= Math.abs(limit)) return value;
  if (limit > 0) return chars.slice(0, limit).join('') + (marker ?? '');
  return (marker ?? '') + chars.slice(chars.length + limit).join('');
}

function pad(value: string, width: number): string {
  const length = Array.from(value).length;
  if (!Number.isFinite(width) || Math.abs(width) <= length) return value;
  return width > 0 ? value + ' '.repeat(width - length) : ' '.repeat(-width - length) + value;
}

/** `#{t:name}`: seconds since the epoch as ctime prints them, or with `t/f/FORMAT` through strftime, `t/p` compact. */
function formatTime(value: string, args: string[]): string {
  const seconds = Number.parseInt(value, 10);
  if (!Number.isFinite(seconds) || seconds === 0) return '';
  const date = new Date(seconds * 1000);
  const flags = args[0] ?? '';
  if (flags.startsWith('f')) return strftime(args[1] ?? '', date);
  if (flags.includes('p')) {
    const now = new Date();
    const age = now.getTime() - date.getTime();
    if (age < 24 * 3600 * 1000) return strftime('%H:%M', date);
    if (date.getFullYear() === now.getFullYear()) return strftime('%d%b', date);
    return strftime('%b%y', date);
  }
  return ctime(date);
}

const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

/** The C library's ctime(): `Mon Nov 23 14:33:33 2026` (local time, day of month padded with a space). */
export function ctime(date: Date): string {
  return strftime('%a %b %e %H:%M:%S %Y', date);
}

const two = (n: number): string => String(n).padStart(2, '0');

/** strftime over local time, for the conversions tmux's formats use; unknown ones are left as they are. */
export function strftime(template: string, date: Date): string {
  if (!template.includes('%')) return template;
  return template.replace(/%([a-zA-Z%])/g, (whole, c: string) => {
    const hours = date.getHours();
    switch (c) {
      case '%': return '%';
      case 'a': return (DAYS[date.getDay()] ?? '').slice(0, 3);
      case 'A': return DAYS[date.getDay()] ?? '';
      case 'b': case 'h': return (MONTHS[date.getMonth()] ?? '').slice(0, 3);
      case 'B': return MONTHS[date.getMonth()] ?? '';
      case 'd': return two(date.getDate());
      case 'e': return String(date.getDate()).padStart(2, ' ');
      case 'H': return two(hours);
      case 'I': return two(hours % 12 || 12);
      case 'k': return String(hours).padStart(2, ' ');
      case 'l': return String(hours % 12 || 12).padStart(2, ' ');
      case 'm': return two(date.getMonth() + 1);
      case 'M': return two(date.getMinutes());
      case 'S': return two(date.getSeconds());
      case 'p': return hours < 12 ? 'AM' : 'PM';
      case 'y': return two(date.getFullYear() % 100);
      case 'Y': return String(date.getFullYear());
      case 'j': {
        const start = new Date(date.getFullYear(), 0, 1);
        return String(Math.floor((date.getTime() - start.getTime()) / 86_400_000) + 1).padStart(3, '0');
      }
      case 'u': return String(date.getDay() || 7);
      case 'w': return String(date.getDay());
      case 's': return String(Math.floor(date.getTime() / 1000));
      case 'n': return '\n';
      case 't': return '\t';
      case 'T': return `${two(hours)}:${two(date.getMinutes())}:${two(date.getSeconds())}`;
      case 'R': return `${two(hours)}:${two(date.getMinutes())}`;
      case 'D': return `${two(date.getMonth() + 1)}/${two(date.getDate())}/${two(date.getFullYear() % 100)}`;
      case 'F': return `${date.getFullYear()}-${two(date.getMonth() + 1)}-${two(date.getDate())}`;
      case 'z': {
        const offset = -date.getTimezoneOffset();
        const sign = offset >= 0 ? '+' : '-';
        return `${sign}${two(Math.floor(Math.abs(offset) / 60))}${two(Math.abs(offset) % 60)}`;
      }
      case 'Z': return new Intl.DateTimeFormat('en-US', { timeZoneName: 'short' }).formatToParts(date).find((p) => p.type === 'timeZoneName')?.value ?? '';
      case 'c': return ctime(date);
      default: return whole;
    }
  });
}
