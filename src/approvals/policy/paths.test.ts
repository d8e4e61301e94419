import { describe, expect, it } from 'vitest';
import { classifyPath, expandWord, pathEnv, wordFromString } from './paths.js';
import type { PolicyContext, ShellWord } from './types.js';

const LINUX = pathEnv({ workdir: '/home/dev/work/app', home: '/home/dev', platform: 'linux' });
const WINDOWS = pathEnv({ workdir: 'C:\\Users\\dev\\app', home: 'C:\\Users\\dev', platform: 'win32' } satisfies PolicyContext);
const w = (s: string): ShellWord => wordFromString(s);

describe('expandWord', () => {
  it('expands ~ and the home variables at the start', () => {
    expect(expandWord(w('~'), LINUX)).toBe('/home/dev');
    expect(expandWord(w('~/x'), LINUX)).toBe('/home/dev/x');
    expect(expandWord(w('$HOME/x'), LINUX)).toBe('/home/dev/x');
    expect(expandWord(w('${HOME}'), LINUX)).toBe('/home/dev');
    expect(expandWord(w('%USERPROFILE%\\x'), WINDOWS)).toBe('C:\\Users\\dev\\x');
    expect(expandWord(w('$env:USERPROFILE\\x'), WINDOWS)).toBe('C:\\Users\\dev\\x');
  });

  it('gives up on anything else that expands', () => {
    for (const s of ['~root/x', '$PWD/x', 'a/$X', '$HOME$X', '%TEMP%\\x']) expect(expandWord(w(s), LINUX), s).toBeNull();
  });
});

describe('classifyPath', () => {
  const here: ShellWord[][] = [[]];
  it.each([
    ['src/a.ts', 'inside', null],
    ['.', 'inside', null],
    ['../x', 'outside', null],
    ['..', 'outside', 'a parent of the workdir (..)'],
    ['/', 'outside', 'the filesystem root (/)'],
    ['~', 'outside', 'your home directory (~)'],
    ['/etc/passwd', 'outside', 'the system path /etc/passwd'],
    ['/tmp', 'outside', 'the system path /tmp'],
    ['/tmp/x', 'outside', null],
    ['$X/y', 'unknown', null],
    ['*.ts', 'inside', null],
    ['/*', 'outside', 'everything in the filesystem root (/)'],
    ['.*', 'unknown', '.*, which can match a parent of the workdir (..)'],
    ['/dev/null', 'sink', null],
    ['C:\\', 'outside', 'the drive root (C:\\)'],
  ] as const)('%s → %s', (text, status, danger) => {
    const c = classifyPath(w(text), here, LINUX);
    expect(c.status).toBe(status);
    expect(c.danger).toBe(danger);
  });

  it('a workdir inside a system folder is still the workdir', () => {
    const env = pathEnv({ workdir: '/usr/src/app', home: '/root', platform: 'linux' });
    expect(classifyPath(w('dist'), here, env)).toMatchObject({ status: 'inside', danger: null });
    expect(classifyPath(w('/usr/src/other'), here, env).danger).toBe('the system path /usr/src/other');
  });

  it('resolves against every directory a cd may have moved to', () => {
    const chains = [[], [w('/tmp')]];
    expect(classifyPath(w('x'), chains, LINUX)).toMatchObject({ status: 'outside', resolved: ['/home/dev/work/app/x', '/tmp/x'] });
    expect(classifyPath(w('x'), [[null]], LINUX).status).toBe('unknown');
  });

  it('compares Windows paths without case, on either separator', () => {
    expect(classifyPath(w('c:/users/DEV/app/src'), here, WINDOWS).status).toBe('inside');
    expect(classifyPath(w('C:\\Windows\\System32'), here, WINDOWS).danger).toBe('the system path C:\\Windows\\System32');
    expect(classifyPath(w('D:'), here, WINDOWS).danger).toBe('the drive root (D:\\)');
    expect(classifyPath(w('HKLM:\\Software'), here, WINDOWS).status).toBe('unknown');
  });
});
