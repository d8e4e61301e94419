import { describe, expect, it } from 'vitest';
import { compileSafeRegex, foldAsciiCase } from './safe-regex.js';
import { isSwitchboardError } from './errors.js';

describe('compileSafeRegex', () => {
  it('matches ordinary patterns with m and s flags', () => {
    expect(compileSafeRegex('^\\$ $', 'm').test('line\n$ \nnext')).toBe(true);
    expect(compileSafeRegex('a.b', 's').test('a\nb')).toBe(true);
    expect(compileSafeRegex('Do you want to proceed\\?').test('… Do you want to proceed?')).toBe(true);
  });

  it('emulates case-insensitive matching for ASCII letters', () => {
    const re = compileSafeRegex('hello [a-c]+ World\\x41', 'i');
    expect(re.test('HELLO AbC world' + 'A')).toBe(true);
    expect(re.test('HELLO xyz world' + 'A')).toBe(false);
  });

  // Plain backtracking would need longer than the age of the universe for these (the test timeout
  // catches that); with the fallback to the linear engine they answer at once.
  it('does not backtrack catastrophically', () => {
    expect(compileSafeRegex('(x+x+)+y').test('x'.repeat(20_000))).toBe(false);
    expect(compileSafeRegex('(a|a)+$').test(`${'a'.repeat(5_000)}b`)).toBe(false);
    expect(compileSafeRegex('^(\\w+\\s?)*$', 'i').test(`${'word '.repeat(2_000)}!`)).toBe(false);
  });

  it('rejects lookaround and backreferences with INVALID_PARAMS', () => {
    for (const pattern of ['(?=x)y', '(a)\\1', '(?<!x)y']) {
      let thrown: unknown;
      try {
        compileSafeRegex(pattern);
      } catch (err) {
        thrown = err;
      }
      expect(isSwitchboardError(thrown, 'INVALID_PARAMS')).toBe(true);
    }
  });

  it('rejects syntax errors, empty patterns and unknown flags', () => {
    expect(() => compileSafeRegex('(')).toThrow(/invalid regular expression/);
    expect(() => compileSafeRegex('')).toThrow(/empty/);
    expect(() => compileSafeRegex('x', 'g')).toThrow(/unsupported regex flag 'g'/);
    expect(() => compileSafeRegex('x'.repeat(5000))).toThrow(/longer than/);
  });
});

describe('foldAsciiCase', () => {
  it('leaves escapes and group names alone', () => {
    expect(foldAsciiCase('\\d\\x4a(?<name>b)')).toBe('\\d\\x4a(?<name>[bB])');
    expect(foldAsciiCase('[^a-cZ]')).toBe('[^a-cZA-Cz]');
  });
});
