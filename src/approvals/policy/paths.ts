import path from 'node:path';
import { isWindows } from '../../platform/index.js';
import { canMatchDotDot, compileGlob, hasGlobChars } from './glob.js';
import type { PolicyContext, ShellWord } from './types.js';

/**
 * Where a path points relative to the workdir: inside, outside, or unknown (it depends on variables,
 * an unknown `cd`, or globs that can climb out), and whether it is a place no destructive command
 * may touch (the filesystem root, the home directory, a parent of the workdir, system folders).
 */

export interface PathEnv {
  win: boolean;
  p: path.PlatformPath;
  workdir: string;
  home: string;
}

type PathStatus = 'inside' | 'outside' | 'unknown' | 'sink';

export interface PathClass {
  status: PathStatus;
  /** The absolute paths it resolves to, one per possible working directory that is known. */
  resolved: string[];
  /** What makes it dangerous to delete, e.g. "your home directory (~)"; null when nothing does. */
  danger: string | null;
}

export type CwdChains = readonly (readonly (ShellWord | null)[])[];

/** The path flavour and the resolved workdir and home for a context. */
export function pathEnv(ctx: PolicyContext): PathEnv {
  const win = ctx.platform === undefined ? isWindows : ctx.platform === 'win32';
  const p = win ? path.win32 : path.posix;
  return { win, p, workdir: p.resolve(ctx.workdir), home: p.resolve(ctx.home) };
}

const SINKS = new Set(['/dev/null', '/dev/stdout', '/dev/stderr', '/dev/tty', '/dev/zero', 'nul', 'nul:', 'con', 'con:', '$null']);

/** Places that swallow output or are the terminal: writing there touches no file. */
function isSink(text: string): boolean {
  const lower = text.toLowerCase();
  return SINKS.has(lower) || /^\/dev\/fd\/\d+$/.test(lower);
}

const HOME_VARS = /^(home|env:home|env:userprofile|userprofile)$/i;
const PROVIDER = /^(hklm|hkcu|hkcr|hku|hkcc|env|cert|function|variable|alias|wsman):([\\/]|$)/i;
const WINDOWS_ABSOLUTE = /^([A-Za-z]:([\\/]|$)|\\\\)/;

/** A word for a path given as a plain string (a file tool's path): `$VAR` and `%VAR%` count as expansions. */
export function wordFromString(s: string): ShellWord {
  const vars = [...s.matchAll(/\$\{([^}]*)\}|\$((?:env:)?[A-Za-z_][A-Za-z0-9_]*)|%([^%\s]+)%/gi)].map((m) => ({
    name: m[1] ?? m[2] ?? m[3] ?? '',
    start: m.index,
    end: m.index + m[0].length,
  }));
  return { text: s, quoted: false, vars, dynamic: vars.length > 0, glob: hasGlobChars(s), code: false };
}

/** The word with `~` and the home variables expanded, or null when its value is not known statically. */
export function expandWord(word: ShellWord, env: PathEnv): string | null {
  const { text } = word;
  if (text === '~' || text.startsWith('~/') || (env.win && text.startsWith('~\\'))) {
    return word.vars.length > 0 || word.dynamic ? null : env.home + text.slice(1);
  }
  if (text.startsWith('~') && !word.quoted) return null;
  if (word.vars.length === 0) return word.dynamic ? null : text;
  const v = word.vars[0];
  if (word.vars.length === 1 && v?.start === 0 && HOME_VARS.test(v.name)) return env.home + text.slice(v.end);
  return null;
}

/** The directory a chain of `cd` targets leads to from the workdir, or null when unknown. */
export function resolveChain(chain: readonly (ShellWord | null)[], env: PathEnv): string | null {
  let base = env.workdir;
  for (const target of chain) {
    if (target === null) return null;
    const text = expandWord(target, env);
    if (text === null || PROVIDER.test(text) || (!env.win && WINDOWS_ABSOLUTE.test(text))) return null;
    base = env.p.resolve(base, driveRoot(text));
  }
  return base;
}

const driveRoot = (text: string): string => (/^[A-Za-z]:$/.test(text) ? `${text}\\` : text);

function isUnder(parent: string, child: string, p: path.PlatformPath): boolean {
  const rel = p.relative(parent, child);
  return rel === '' || (rel.split(p.sep)[0] !== '..' && !p.isAbsolute(rel));
}

/** True when `resolved` is the workdir or inside it. */
export function isInside(resolved: string, env: PathEnv): boolean {
  return isUnder(env.workdir, resolved, env.p);
}

const POSIX_SYSTEM_TREES = ['/etc', '/usr', '/bin', '/sbin', '/boot', '/lib', '/lib32', '/lib64', '/libx32', '/dev', '/proc', '/sys', '/system', '/library', '/private/etc'];
const POSIX_SYSTEM_DIRS = new Set(['/home', '/users', '/root', '/var', '/opt', '/tmp', '/srv', '/mnt', '/media', '/private', '/snap', '/volumes', '/run', '/applications', '/var/lib', '/private/var']);
const WINDOWS_SYSTEM_TREE = /^[a-z]:\\(windows|program files|program files \(x86\)|programdata)(\\|$)/i;
const WINDOWS_SYSTEM_DIR = /^[a-z]:\\users\\?$/i;

function windowsDanger(resolved: string): string | null {
  if (/^[a-z]:\\?$/i.test(resolved) || /^\\\\[^\\]+\\[^\\]+\\?$/.test(resolved)) return `the drive root (${resolved})`;
  if (WINDOWS_SYSTEM_TREE.test(resolved) || WINDOWS_SYSTEM_DIR.test(resolved)) return `the system path ${resolved}`;
  return null;
}

/** Why deleting `resolved` would be a disaster, or null. `shown` is the path as written. */
function dangerOf(resolved: string, shown: string, env: PathEnv): string | null {
  const { p } = env;
  if (env.win) {
    const root = windowsDanger(resolved);
    if (root?.startsWith('the drive root')) return root;
  } else if (resolved === '/') return 'the filesystem root (/)';
  if (p.relative(env.home, resolved) === '') return 'your home directory (~)';
  if (isUnder(resolved, env.workdir, p)) {
    return p.relative(resolved, env.workdir) === '' ? null : `a parent of the workdir (${shown})`;
  }
  // A workdir may itself sit in a system folder (/usr/src/app in containers): inside it is fine.
  if (isUnder(env.workdir, resolved, p)) return null;
  if (env.win) return windowsDanger(resolved);
  const lower = resolved.toLowerCase().replace(/\/+$/, '');
  if (POSIX_SYSTEM_DIRS.has(lower) || POSIX_SYSTEM_TREES.some((t) => lower === t || lower.startsWith(`${t}/`))) return `the system path ${resolved}`;
  return null;
}

/** Classifies a path word for every place the command may run. */
export function classifyPath(word: ShellWord, chains: CwdChains, env: PathEnv): PathClass {
  if (isSink(word.text)) return { status: 'sink', resolved: [], danger: null };
  let status: PathStatus = 'inside';
  const resolved: string[] = [];
  let danger: string | null = null;
  const worsen = (s: PathStatus): void => {
    if (s === 'unknown' || (s === 'outside' && status === 'inside')) status = s;
  };
  for (const chain of chains.length > 0 ? chains : [[]]) {
    const base = resolveChain(chain, env);
    const one = base === null ? { status: 'unknown' as const, resolved: null, danger: null } : classifyOne(word, base, env);
    worsen(one.status);
    if (one.resolved !== null) resolved.push(one.resolved);
    danger ??= one.danger;
  }
  return { status, resolved, danger };
}

function classifyOne(word: ShellWord, base: string, env: PathEnv): { status: PathStatus; resolved: string | null; danger: string | null } {
  const text = expandWord(word, env);
  if (text === null || PROVIDER.test(text)) return { status: 'unknown', resolved: null, danger: null };
  const { p } = env;
  if (!env.win && WINDOWS_ABSOLUTE.test(text)) {
    // A Windows path judged on another platform: never inside, and as dangerous as on Windows.
    return { status: 'outside', resolved: null, danger: windowsDanger(path.win32.resolve(driveRoot(text))) };
  }
  const plain = driveRoot(text);
  if (word.glob) {
    const parts = plain.split(env.win ? /[\\/]/ : /\//);
    const firstGlob = parts.findIndex(hasGlobChars);
    if (firstGlob >= 0) {
      const dotdot = parts.findIndex(canMatchDotDot);
      if (dotdot >= 0) {
        const climbed = p.resolve(base, prefixOf(parts, dotdot, plain), '..');
        const d = dangerOf(climbed, '..', env);
        return { status: 'unknown', resolved: null, danger: d ? `${word.text}, which can match ${d}` : null };
      }
      const prefix = p.resolve(base, prefixOf(parts, firstGlob, plain));
      const d = isInside(prefix, env) ? null : dangerOf(prefix, prefixOf(parts, firstGlob, plain), env);
      const full = p.resolve(base, plain);
      return { status: isInside(full, env) ? 'inside' : 'outside', resolved: full, danger: d ? `everything in ${d}` : null };
    }
  }
  const full = p.resolve(base, plain);
  return { status: isInside(full, env) ? 'inside' : 'outside', resolved: full, danger: dangerOf(full, word.text, env) };
}

function prefixOf(parts: string[], end: number, text: string): string {
  const prefix = parts.slice(0, end).join('/');
  if (prefix === '') return /^[\\/]/.test(text) ? '/' : '.';
  return driveRoot(prefix);
}

/** Normalises an absolute path for glob matching: `/` separators, lower case on Windows. */
function globSubject(resolved: string, env: PathEnv): string {
  return env.win ? resolved.replace(/\\/g, '/').toLowerCase() : resolved;
}

/** True when a rule's glob matches `resolved` or one of its parents (a rule naming a folder covers its contents). */
export function globMatches(glob: string, resolved: string, env: PathEnv): boolean {
  let pattern = glob;
  if (!glob.startsWith('**')) {
    const expanded = expandWord(wordFromString(glob), env);
    if (expanded === null) return false;
    pattern = env.p.resolve(env.workdir, expanded);
  }
  const re = compileGlob(globSubject(pattern, env));
  let candidate = resolved;
  for (;;) {
    if (re.test(globSubject(candidate, env))) return true;
    const parent = env.p.dirname(candidate);
    if (parent === candidate) return false;
    candidate = parent;
  }
}

const MAX_CHAINS = 16;

/** Where an inline script's commands run: each of the outer possibilities followed by the inner `cd`s. */
export function combineChains(outer: CwdChains, inner: CwdChains): (ShellWord | null)[][] {
  const out: (ShellWord | null)[][] = [];
  for (const o of outer.length > 0 ? outer : [[]]) for (const i of inner.length > 0 ? inner : [[]]) out.push([...o, ...i]);
  return out.length > MAX_CHAINS ? [[null]] : out;
}
