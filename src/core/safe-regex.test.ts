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

  // The backtracking engine would need longer than the age of the universe here (the test timeout
  // catches that); the linear engine answers at once.
  it('does not backtrack catastrophically', () => {
    const re = compileSafeRegex('(x+x+)+y');
    expect(re.test('x'.repeat(20_000))).toBe(false);
    expect(re.flags).toContain('l');
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
