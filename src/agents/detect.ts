import type { Dialog, ScreenPattern, Screens } from './schema.js';

/** What a screen shows, as far as a profile's patterns can tell. */
export type ScreenKind = 'dialog' | 'approval' | 'busy' | 'error' | 'idle' | 'unknown';

export interface Detection {
  kind: ScreenKind;
  /** The dialog on screen, for kind 'dialog'. */
  dialog?: Dialog;
  /** Which pattern decided, and the line it matched: the evidence for the decision. */
  evidence?: { rule: string; pattern: string; line: string };
}

interface Compiled {
  regex: RegExp;
  rows: number | undefined;
  source: string;
}

const cache = new WeakMap<object, Compiled[]>();

function compile(patterns: readonly ScreenPattern[]): Compiled[] {
  return patterns.map((p) =>
    typeof p === 'string'
      ? { regex: new RegExp(p, 'm'), rows: undefined, source: p }
      : { regex: new RegExp(p.pattern, `m${p.flags ?? ''}`), rows: p.rows, source: p.pattern },
  );
}

function compiled(patterns: readonly ScreenPattern[]): Compiled[] {
  let c = cache.get(patterns);
  if (!c) {
    c = compile(patterns);
    cache.set(patterns, c);
  }
  return c;
}

/** The screen's rows with the last `rows` non-empty ones (or all) joined, for matching. */
function region(lines: readonly string[], rows: number | undefined): string {
  if (rows === undefined) return lines.join('\n');
  const nonEmpty = lines.filter((l) => l.trim() !== '');
  return nonEmpty.slice(-rows).join('\n');
}

function firstMatch(patterns: readonly ScreenPattern[], lines: readonly string[]): { pattern: string; line: string } | undefined {
  for (const c of compiled(patterns)) {
    const text = region(lines, c.rows);
    const m = c.regex.exec(text);
    if (m) {
      // Report the line where the matched text starts (a leading \s* may begin on an earlier line).
      const at = m.index + (m[0].length - m[0].trimStart().length);
      const start = text.lastIndexOf('\n', at - 1) + 1;
      const end = text.indexOf('\n', at);
      return { pattern: c.source, line: text.slice(start, end === -1 ? undefined : end).trim() };
    }
  }
  return undefined;
}

function allMatch(patterns: readonly ScreenPattern[], lines: readonly string[]): { pattern: string; line: string } | undefined {
  let first: { pattern: string; line: string } | undefined;
  for (const p of patterns) {
    const m = firstMatch([p], lines);
    if (!m) return undefined;
    first ??= m;
  }
  return first;
}

/**
 * Classifies a rendered screen with a profile's patterns. Blocking things win over the rest: a
 * dialog, then an approval prompt, then signs of work in progress, then an error, then the idle
 * prompt (which often stays drawn below all of them).
 */
export function detectScreen(screens: Screens, lines: readonly string[]): Detection {
  for (const dialog of screens.dialogs) {
    const m = allMatch(dialog.when, lines);
    if (m) return { kind: 'dialog', dialog, evidence: { rule: `dialog:${dialog.id}`, ...m } };
  }
  const checks: [ScreenKind, readonly ScreenPattern[]][] = [
    ['approval', screens.approval],
    ['busy', screens.busy],
    ['error', screens.error],
    ['idle', screens.idle],
  ];
  for (const [kind, patterns] of checks) {
    const m = firstMatch(patterns, lines);
    if (m) return { kind, evidence: { rule: kind, ...m } };
  }
  return { kind: 'unknown' };
}
