/**
 * Checks what the schema cannot: that every pattern compiles on the linear-time engine, every key
 * name is one send_keys knows, every version range parses, and every home file stays inside the
 * home. A profile with a mistake is refused when it is loaded, naming the field, instead of failing
 * on the first screen it reads or, worse, while an agent is starting.
 */
import path from 'node:path';
import { compileSafeRegex } from '../../core/safe-regex.js';
import { encodeKey } from '../../pane/index.js';
import type { ApprovalRequestSpec, ProfileData, ScreenPattern } from './schema.js';
import { isValidRange } from './version-range.js';

/** The flags a screen pattern is compiled with: always multi-line, plus the profile's own. */
export function patternFlags(p: ScreenPattern): string {
  const own = typeof p === 'string' ? '' : (p.flags ?? '');
  return own.includes('m') ? own : `m${own}`;
}

export function patternSource(p: ScreenPattern): string {
  return typeof p === 'string' ? p : p.pattern;
}

/** The named groups of a pattern, in order (`(?<name>…)`; escaped parentheses are skipped). */
function groupNames(source: string): string[] {
  const names: string[] = [];
  for (const m of source.matchAll(/\\.|\(\?<([A-Za-z_$][\w$]*)>/g)) if (m[1] !== undefined) names.push(m[1]);
  return names;
}

/** Every problem in `data`, as "field.path: message"; empty when the profile is sound. */
export function profileProblems(data: ProfileData): string[] {
  const problems: string[] = [];
  const checkPatterns = (where: string, patterns: readonly ScreenPattern[]): void => {
    patterns.forEach((p, i) => {
      try {
        compileSafeRegex(patternSource(p), patternFlags(p));
      } catch (err) {
        problems.push(`${where}.${i}: ${(err as Error).message}`);
      }
    });
  };
  const checkKeys = (where: string, keys: readonly string[] | undefined): void => {
    for (const key of keys ?? []) {
      try {
        encodeKey(key, { applicationCursorKeys: false });
      } catch (err) {
        problems.push(`${where}: ${(err as Error).message}`);
      }
    }
  };
  /** Compiles `p` and checks its named groups; returns the names (empty when it does not compile). */
  const checkGroups = (where: string, p: ScreenPattern, groups: { allowed: readonly string[]; required?: readonly string[] }): string[] => {
    try {
      compileSafeRegex(patternSource(p), patternFlags(p));
    } catch (err) {
      problems.push(`${where}: ${(err as Error).message}`);
      return [];
    }
    const names = groupNames(patternSource(p));
    for (const name of names) {
      if (!groups.allowed.includes(name)) problems.push(`${where}: unknown group '${name}' (${groups.allowed.length > 0 ? `use ${groups.allowed.join(', ')}` : 'this pattern takes no named groups'})`);
    }
    for (const name of groups.required ?? []) {
      if (!names.includes(name)) problems.push(`${where}: needs a group named '${name}'`);
    }
    return names;
  };
  const checkApproval = (where: string, spec: ApprovalRequestSpec): void => {
    const { options } = spec;
    const list = options.layout === 'list';
    spec.kinds.forEach((kind, j) => {
      if (typeof kind.pattern !== 'string' && kind.pattern.ansi === true) problems.push(`${where}.kinds.${j}.pattern: kinds match the plain rows (ansi is not supported here)`);
      checkGroups(`${where}.kinds.${j}.pattern`, kind.pattern, { allowed: ['tool', 'command', 'path'] });
      if (kind.gutter) checkGroups(`${where}.kinds.${j}.gutter`, kind.gutter, { allowed: [] });
    });
    const optionGroups = checkGroups(`${where}.options.pattern`, options.pattern, list ? { allowed: ['label', 'number', 'selected'], required: ['label'] } : { allowed: ['options', 'selected'], required: ['options'] });
    if (options.continuation) {
      if (!list) problems.push(`${where}.options.continuation: only list layouts have continuation rows`);
      checkGroups(`${where}.options.continuation`, options.continuation, { allowed: ['label'], required: ['label'] });
    }
    if (options.separator) {
      if (list) problems.push(`${where}.options.separator: only inline layouts split a row into options`);
      checkGroups(`${where}.options.separator`, options.separator, { allowed: [] });
    }
    if (options.shortcut) checkGroups(`${where}.options.shortcut.pattern`, options.shortcut.pattern, { allowed: ['key'], required: ['key'] });
    if (options.highlight) checkGroups(`${where}.options.highlight`, options.highlight, { allowed: list ? [] : ['label'], required: list ? [] : ['label'] });
    if (spec.select.includes('number') && !optionGroups.includes('number')) problems.push(`${where}.select: 'number' needs a 'number' group in options.pattern`);
    if (spec.select.includes('shortcut') && !options.shortcut) problems.push(`${where}.select: 'shortcut' needs options.shortcut`);
    checkKeys(`${where}.submit`, spec.submit);
    spec.meanings.forEach((m, j) => checkGroups(`${where}.meanings.${j}.pattern`, m.pattern, { allowed: [] }));
    spec.decorations.forEach((d, j) => checkGroups(`${where}.decorations.${j}`, d, { allowed: [] }));
    spec.witnesses.forEach((w, j) => {
      const names = checkGroups(`${where}.witnesses.${j}`, w, { allowed: ['command', 'path'] });
      if (names.length === 0) problems.push(`${where}.witnesses.${j}: needs a group named 'command' or 'path'`);
    });
  };

  data.screens.forEach((screens, i) => {
    const at = `screens.${i}`;
    if (!isValidRange(screens.versions)) problems.push(`${at}.versions: '${screens.versions}' is not a version range (use comparators such as ">=2.1.0 <3", or "*")`);
    checkPatterns(`${at}.idle`, screens.idle);
    checkPatterns(`${at}.busy`, screens.busy);
    checkPatterns(`${at}.executing`, screens.executing);
    checkPatterns(`${at}.question`, screens.question);
    checkPatterns(`${at}.reply`, screens.reply);
    checkPatterns(`${at}.reply_end`, screens.reply_end);
    checkPatterns(`${at}.chrome`, screens.chrome);
    checkPatterns(`${at}.turn.end`, screens.turn?.end ?? []);
    checkPatterns(`${at}.turn.prompt`, screens.turn?.prompt ?? []);
    checkPatterns(`${at}.turn.continued`, screens.turn?.continued ?? []);
    checkPatterns(`${at}.retrying`, screens.retrying);
    checkPatterns(`${at}.interrupted`, screens.interrupted);
    checkPatterns(`${at}.approval`, screens.approval);
    checkPatterns(`${at}.error`, screens.error);
    screens.dialogs.forEach((dialog, j) => {
      checkPatterns(`${at}.dialogs.${j}.when`, dialog.when);
      for (const answer of ['accept', 'decline'] as const) {
        const given = dialog[answer];
        if (Array.isArray(given)) checkKeys(`${at}.dialogs.${j}.${answer}`, given);
        else {
          checkGroups(`${at}.dialogs.${j}.${answer}.choose`, given.choose, { allowed: [] });
        }
      }
      if (dialog.options) checkGroups(`${at}.dialogs.${j}.options.pattern`, dialog.options.pattern, { allowed: ['label', 'selected'], required: ['label', 'selected'] });
    });
    if (screens.approval_request) checkApproval(`${at}.approval_request`, screens.approval_request);
  });
  checkKeys('approval_keys.allow_once', data.approval_keys.allow_once);
  checkKeys('approval_keys.allow_always', data.approval_keys.allow_always);
  checkKeys('approval_keys.deny', data.approval_keys.deny);
  if (data.status_file) {
    const normalized = path.normalize(data.status_file.path);
    if (path.isAbsolute(data.status_file.path) || normalized === '..' || normalized.startsWith(`..${path.sep}`)) problems.push(`status_file.path: '${data.status_file.path}' must be a path inside the home`);
  }
  for (const file of Object.keys(data.home_files)) {
    const normalized = path.normalize(file);
    if (path.isAbsolute(file) || normalized === '..' || normalized.startsWith(`..${path.sep}`) || normalized === '.') {
      problems.push(`home_files: '${file}' must be a file path inside the home`);
    }
  }
  return problems;
}
