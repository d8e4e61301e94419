import { describe, expect, it } from 'vitest';
import { parseVersion, satisfies } from './version-range.js';

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
});
