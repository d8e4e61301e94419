/**
 * Checks what the schema cannot: that every pattern compiles on the linear-time engine, every key
 * name is one send_keys knows, every version range parses, and every home file stays inside the
 * home. A profile with a mistake is refused when it is loaded, naming the field, instead of failing
 * on the first screen it reads or, worse, while an agent is starting.
 */
import path from 'node:path';
import { compileSafeRegex } from '../core/safe-regex.js';
import { encodeKey } from '../pane/index.js';
import type { ProfileData, ScreenPattern } from './schema.js';
import { isValidRange } from './version-range.js';

/** The flags a screen pattern is compiled with: always multi-line, plus the profile's own. */
export function patternFlags(p: ScreenPattern): string {
  const own = typeof p === 'string' ? '' : (p.flags ?? '');
  return own.includes('m') ? own : `m${own}`;
}

export function patternSource(p: ScreenPattern): string {
  return typeof p === 'string' ? p : p.pattern;
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

  data.screens.forEach((screens, i) => {
    const at = `screens.${i}`;
    if (!isValidRange(screens.versions)) problems.push(`${at}.versions: '${screens.versions}' is not a version range (use comparators such as ">=2.1.0 <3", or "*")`);
    checkPatterns(`${at}.idle`, screens.idle);
    checkPatterns(`${at}.busy`, screens.busy);
    checkPatterns(`${at}.approval`, screens.approval);
    checkPatterns(`${at}.error`, screens.error);
    screens.dialogs.forEach((dialog, j) => {
      checkPatterns(`${at}.dialogs.${j}.when`, dialog.when);
      checkKeys(`${at}.dialogs.${j}.accept`, dialog.accept);
      checkKeys(`${at}.dialogs.${j}.decline`, dialog.decline);
    });
  });
  checkKeys('approval_keys.allow_once', data.approval_keys.allow_once);
  checkKeys('approval_keys.allow_always', data.approval_keys.allow_always);
  checkKeys('approval_keys.deny', data.approval_keys.deny);
  for (const file of Object.keys(data.home_files)) {
    const normalized = path.normalize(file);
    if (path.isAbsolute(file) || normalized === '..' || normalized.startsWith(`..${path.sep}`) || normalized === '.') {
      problems.push(`home_files: '${file}' must be a file path inside the home`);
    }
  }
  return problems;
}
