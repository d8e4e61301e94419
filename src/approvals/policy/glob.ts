import { compileSafeRegex } from '../../core/safe-regex.js';

/**
 * Globs for policy rules (`~/.ssh/**`, `/etc/**`, `src/*.ts`) as regular expressions over paths
 * with `/` separators: `**` crosses folders, `*` and `?` do not, `[…]` and `{a,b}` as in shells.
 */

const MAX_CACHE = 512;
const cache = new Map<string, RegExp>();

const escapeRegex = (c: string): string => c.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

/** The regular expression source (unanchored) for a glob. */
export function globSource(glob: string): string {
  let out = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i] as string;
    if (c === '*') {
      if (glob[i + 1] === '*') {
        i++;
        if (glob[i + 1] === '/') {
          i++;
          out += '(?:.*/)?';
        } else out += '.*';
      } else out += '[^/]*';
    } else if (c === '?') out += '[^/]';
    else if (c === '[') {
      const end = glob.indexOf(']', i + 2);
      if (end < 0) {
        out += '\\[';
        continue;
      }
      let body = glob.slice(i + 1, end);
      const negate = body.startsWith('!') || body.startsWith('^');
      if (negate) body = body.slice(1);
      out += `[${negate ? '^' : ''}${body.replace(/[\\\]^[]/g, '\\$&')}]`;
      i = end;
    } else if (c === '{') {
      const end = glob.indexOf('}', i + 1);
      if (end < 0) {
        out += '\\{';
        continue;
      }
      out += `(?:${glob
        .slice(i + 1, end)
        .split(',')
        .map((alt) => globSource(alt))
        .join('|')})`;
      i = end;
    } else if (c === '\\' && i + 1 < glob.length) {
      out += escapeRegex(glob[i + 1] as string);
      i++;
    } else out += escapeRegex(c);
  }
  return out;
}

/** A compiled, anchored glob; patterns run on the linear-time engine, since rules come from users. */
export function compileGlob(glob: string): RegExp {
  let re = cache.get(glob);
  if (!re) {
    re = compileSafeRegex(`^${globSource(glob)}$`);
    if (cache.size >= MAX_CACHE) cache.clear();
    cache.set(glob, re);
  }
  return re;
}

/** True when a shell glob component (a name pattern) could match `..`, as `.*` does in older shells. */
export function canMatchDotDot(component: string): boolean {
  return component.startsWith('.') && /[*?[]/.test(component) && new RegExp(`^${globSource(component)}$`).test('..');
}

export const hasGlobChars = (s: string): boolean => /[*?[]/.test(s);
