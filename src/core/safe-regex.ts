import { setFlagsFromString } from 'node:v8';
import { SwitchboardError } from './errors.js';

/**
 * Regular expressions from clients must not be able to stall the daemon with catastrophic
 * backtracking. V8 can fall back to its linear-time engine once a match backtracks too much
 * (`--enable-experimental-regexp-engine-on-excessive-backtracks`), so ordinary patterns keep the
 * speed of the backtracking engine (about 100 times faster here) and pathological ones finish in
 * linear time. The fallback only exists for patterns the linear engine can run, so a pattern is
 * accepted only if it compiles with the `l` flag: no lookaround, no backreferences, no `i`/`u`
 * flags. `i` is emulated for ASCII letters by rewriting the pattern.
 */

const MAX_PATTERN_LENGTH = 4096;
const ALLOWED_FLAGS = new Set(['i', 'm', 's']);

let engineEnabled = false;

function enableLinearEngine(): void {
  if (engineEnabled) return;
  // Both are read when a RegExp is compiled, so setting them at run time works for patterns compiled
  // afterwards (all of ours). The fallback changes only how long a pathological match takes.
  setFlagsFromString('--enable-experimental-regexp-engine');
  setFlagsFromString('--enable-experimental-regexp-engine-on-excessive-backtracks');
  engineEnabled = true;
}

/** Compiles an untrusted pattern into a RegExp that cannot backtrack catastrophically, or throws INVALID_PARAMS. */
export function compileSafeRegex(pattern: string, flags = ''): RegExp {
  if (pattern.length === 0) throw new SwitchboardError('INVALID_PARAMS', 'pattern must not be empty');
  if (pattern.length > MAX_PATTERN_LENGTH) {
    throw new SwitchboardError('INVALID_PARAMS', `pattern is longer than ${MAX_PATTERN_LENGTH} characters`);
  }
  const flagSet = new Set(flags);
  for (const flag of flagSet) {
    if (!ALLOWED_FLAGS.has(flag)) {
      throw new SwitchboardError('INVALID_PARAMS', `unsupported regex flag '${flag}' (allowed: i, m, s)`);
    }
  }
  if (flagSet.size !== flags.length) throw new SwitchboardError('INVALID_PARAMS', `repeated regex flag in '${flags}'`);
  try {
    // Check the pattern's syntax with the ordinary engine first for a precise error message.
    new RegExp(pattern, flags.replace('i', ''));
  } catch (err) {
    throw new SwitchboardError('INVALID_PARAMS', `invalid regular expression: ${(err as Error).message}`);
  }
  enableLinearEngine();
  const source = flagSet.has('i') ? foldAsciiCase(pattern) : pattern;
  const nativeFlags = [...flagSet].filter((f) => f !== 'i').join('');
  try {
    new RegExp(source, `${nativeFlags}l`);
  } catch {
    throw new SwitchboardError(
      'INVALID_PARAMS',
      'pattern needs backtracking (lookaround or a backreference), which is not allowed here; rewrite it without them',
    );
  }
  return new RegExp(source, nativeFlags);
}

const isAsciiLetter = (c: string): boolean => /^[A-Za-z]$/.test(c);
const swapCase = (c: string): string => (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase());

/**
 * Rewrites a pattern so that ASCII letters match either case: `a` → `[aA]` outside classes, and
 * `[a-c]` → `[a-cA-C]` inside them. Escapes (`\x41`, `\u00e9`, `\cM`, `\d`, …) and group names
 * are copied verbatim.
 */
export function foldAsciiCase(pattern: string): string {
  let out = '';
  let i = 0;
  let inClass = false;
  let classExtra = '';
  const n = pattern.length;
  const escapeLength = (at: number): number => {
    const next = pattern[at + 1];
    if (next === 'x') return 4;
    if (next === 'c') return 3;
    if (next === 'u') {
      if (pattern[at + 2] === '{') {
        const close = pattern.indexOf('}', at + 3);
        return close === -1 ? 2 : close - at + 1;
      }
      return 6;
    }
    if (next === 'k' && pattern[at + 2] === '<') {
      const close = pattern.indexOf('>', at + 3);
      return close === -1 ? 2 : close - at + 1;
    }
    return 2;
  };
  while (i < n) {
    const c = pattern.charAt(i);
    if (c === '\\') {
      const len = escapeLength(i);
      out += pattern.slice(i, i + len);
      i += len;
      continue;
    }
    if (inClass) {
      if (c === ']') {
        out += classExtra + c;
        classExtra = '';
        inClass = false;
        i += 1;
        continue;
      }
      const rangeEnd = pattern[i + 2];
      if (pattern[i + 1] === '-' && rangeEnd !== undefined && rangeEnd !== ']' && rangeEnd !== '\\') {
        out += pattern.slice(i, i + 3);
        if (isAsciiLetter(c) && isAsciiLetter(rangeEnd) && (c === c.toLowerCase()) === (rangeEnd === rangeEnd.toLowerCase())) {
          classExtra += `${swapCase(c)}-${swapCase(rangeEnd)}`;
        }
        i += 3;
        continue;
      }
      out += c;
      if (isAsciiLetter(c)) classExtra += swapCase(c);
      i += 1;
      continue;
    }
    if (c === '[') {
      inClass = true;
      out += c;
      i += 1;
      if (pattern[i] === '^') {
        out += '^';
        i += 1;
      }
      // A ']' right after '[' or '[^' is a literal in JavaScript only with the u/v flags; it closes
      // an empty class otherwise, which the main loop handles.
      continue;
    }
    if (c === '(' && pattern[i + 1] === '?' && pattern[i + 2] === '<' && pattern[i + 3] !== '=' && pattern[i + 3] !== '!') {
      const close = pattern.indexOf('>', i + 3);
      const end = close === -1 ? n : close + 1;
      out += pattern.slice(i, end);
      i = end;
      continue;
    }
    out += isAsciiLetter(c) ? `[${c}${swapCase(c)}]` : c;
    i += 1;
  }
  return out;
}

/** `text` as a pattern that matches exactly it (every character with a meaning escaped). */
export function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
