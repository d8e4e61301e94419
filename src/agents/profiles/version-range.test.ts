import { describe, expect, it } from 'vitest';
import { defineProfile } from './profile.js';
import { isValidRange, parseVersion, rangeFloor, satisfies } from './version-range.js';

describe('version ranges', () => {
  it('parses versions out of --version output', () => {
    expect(parseVersion('2.1.197 (Claude Code)')).toBe('2.1.197');
    expect(parseVersion('codex-cli 0.169.0')).toBe('0.169.0');
    expect(parseVersion('aider 0.86')).toBe('0.86.0');
    expect(parseVersion('no version here')).toBeUndefined();
  });

  it('checks comparators', () => {
    expect(satisfies('2.1.197', '>=2.1.0 <3')).toBe(true);
    expect(satisfies('3.0.0', '>=2.1.0 <3')).toBe(false);
    expect(satisfies('2.0.9', '>=2.1.0 <3')).toBe(false);
    expect(satisfies('1.18.33', '=1.18.33')).toBe(true);
    expect(satisfies('1.18.33', '1.18.33')).toBe(true);
    expect(satisfies('0.1.0', '*')).toBe(true);
    expect(satisfies('1.0.0', '>1.0.0')).toBe(false);
    expect(satisfies('1.0.0', '<=1.0.0')).toBe(true);
    expect(satisfies('1.0.0', 'garbage')).toBe(false);
  });

  it('tells ranges it understands from ones it does not', () => {
    expect(isValidRange('>=2.1.0 <3')).toBe(true);
    expect(isValidRange('*')).toBe(true);
    expect(isValidRange('^2.1')).toBe(false);
    expect(isValidRange('>=2.1 || <1')).toBe(false);
  });

  it('finds the lowest version a range admits', () => {
    expect(rangeFloor('>=2.1.0 <3')).toBe('2.1.0');
    expect(rangeFloor('<3')).toBe('0.0.0');
    expect(rangeFloor('*')).toBe('0.0.0');
    expect(rangeFloor('>1.2 =1.5.0')).toBe('1.5.0');
  });

  it('falls back to the newest screen set, whatever order the profile lists them in', () => {
    const set = (versions: string, idle: string) => ({ versions, idle: [idle] });
    const profile = defineProfile(
      { name: 'x', binary: { names: ['x'] }, screens: [set('>=2.0.0 <3', 'two'), set('>=3.0.0', 'three'), set('<2', 'one')], approval_keys: { allow_once: ['y'], deny: ['n'] } },
      { builtin: false },
    );
    expect(profile.screensFor('1.5.0').idle).toEqual(['one']);
    expect(profile.screensFor('2.5.0').idle).toEqual(['two']);
    expect(profile.screensFor(undefined).idle).toEqual(['three']);
  });
});

describe('version support', () => {
  const set = (versions: string, idle: string, recorded: string[] = []) => ({ versions, idle: [idle], recorded });
  const profile = defineProfile(
    {
      name: 'x',
      binary: { names: ['x'] },
      screens: [set('>=2.1.0 <2.1.300', 'old', ['2.1.197']), set('>=2.1.300 <2.2', 'new', ['2.1.330']), set('>=0.5.0 <1', 'ancient')],
      approval_keys: { allow_once: ['y'], deny: ['n'] },
    },
    { builtin: false },
  );

  it('is exact for a recorded version, nearest inside a range, and says which set reads it', () => {
    expect(profile.versionSupport('2.1.330')).toMatchObject({ level: 'exact', versions: '>=2.1.300 <2.2' });
    expect(profile.versionSupport('2.1.197')).toMatchObject({ level: 'exact', versions: '>=2.1.0 <2.1.300' });
    const inRange = profile.versionSupport('2.1.250');
    expect(inRange).toMatchObject({ level: 'nearest', versions: '>=2.1.0 <2.1.300' });
    expect(inRange.note).toContain('not recorded');
  });

  it('reads a version outside every range with the newest set known before it (the oldest for an older one)', () => {
    expect(profile.versionSupport('2.2.5').screens.idle).toEqual(['new']);
    expect(profile.versionSupport('2.1.400').screens.idle).toEqual(['new']);
    expect(profile.versionSupport('3.0.0').screens.idle).toEqual(['new']);
    expect(profile.versionSupport('1.2.0').screens.idle).toEqual(['ancient']);
    expect(profile.versionSupport('2.0.9').screens.idle).toEqual(['ancient']);
    expect(profile.versionSupport('0.1.0').screens.idle).toEqual(['ancient']);
    expect(profile.versionSupport('3.0.0').note).toContain('outside every known range');
  });

  it('has no level for an unknown version, and guesses the newest set', () => {
    expect(profile.versionSupport(undefined)).toMatchObject({ level: 'none', versions: '>=2.1.300 <2.2' });
  });
});
