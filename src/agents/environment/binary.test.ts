import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { agentVersion, npmPackageVersion } from './binary.js';

let scratch: string | undefined;
const newScratch = (): string => (scratch = mkdtempSync(path.join(tmpdir(), 'sb-binary-')));
afterEach(() => {
  if (scratch) rmSync(scratch, { recursive: true, force: true });
  scratch = undefined;
});

/** node_modules/<name> with a package.json declaring `bin`, the program file, and the .bin link npm makes. */
function installPackage(root: string, name: string, version: string, bin: Record<string, string> | string, program: string): string {
  const dir = path.join(root, 'node_modules', name);
  mkdirSync(path.join(dir, path.dirname(program)), { recursive: true });
  writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name, version, bin }));
  // Never run: a probe would print another version than the package's.
  writeFileSync(path.join(dir, program), '#!/bin/sh\necho 9.9.9\n');
  chmodSync(path.join(dir, program), 0o755);
  mkdirSync(path.join(root, 'node_modules', '.bin'), { recursive: true });
  const link = path.join(root, 'node_modules', '.bin', path.basename(program).replace(/\.(js|exe)$/, ''));
  symlinkSync(path.join(dir, program), link);
  return link;
}

describe.runIf(process.platform !== 'win32')("an agent's version", () => {
  it('is read from the npm package that declares the program, links followed, without running it', async () => {
    const root = newScratch();
    const claude = installPackage(root, 'claude-code', '2.1.330', { claude: 'bin/claude.exe' }, 'bin/claude.exe');
    const gemini = installPackage(root, 'gemini-cli', '0.61.0-preview.2', 'bundle/gemini.js', 'bundle/gemini.js');
    expect(npmPackageVersion(claude, 'claude-code')).toBe('2.1.330');
    expect(npmPackageVersion(gemini, 'gemini-cli')).toBe('0.61.0');
    expect(await agentVersion(claude, ['--version'], process.env, { npmPackage: 'claude-code', tempRoot: path.join(root, 'tmp') })).toBe('2.1.330');
  });

  it('is asked of the program when the package declaring it is not the CLI\u2019s own (a wrapper of the same name)', async () => {
    const root = newScratch();
    const wrapper = installPackage(root, 'my-claude-wrapper', '0.0.1', { claude: 'bin/claude.exe' }, 'bin/claude.exe');
    expect(npmPackageVersion(wrapper, 'claude-code')).toBeUndefined();
    // Asked, the program prints its own version.
    expect(await agentVersion(wrapper, ['--version'], process.env, { npmPackage: 'claude-code', tempRoot: path.join(root, 'tmp') })).toBe('9.9.9');
  });

  it('is not a package\u2019s when the nearest package.json does not declare that program', async () => {
    const root = newScratch();
    // A project that happens to hold a program of that name: its own version says nothing about it.
    writeFileSync(path.join(root, 'package.json'), JSON.stringify({ name: 'my-app', version: '4.0.0', bin: { app: 'app.js' } }));
    mkdirSync(path.join(root, 'tools'));
    const program = path.join(root, 'tools', 'fakecli');
    writeFileSync(program, '#!/bin/sh\necho "fakecli 1.2.3"\n');
    chmodSync(program, 0o755);
    expect(npmPackageVersion(program, 'my-app')).toBeUndefined();
    // So it is asked, in a private temporary folder that is gone afterwards.
    const tempRoot = path.join(root, 'tmp');
    expect(await agentVersion(program, ['--version'], process.env, { tempRoot })).toBe('1.2.3');
    expect(readdirSync(tempRoot)).toEqual([]);
  });

  it('of a program that is gone is unknown', async () => {
    const root = newScratch();
    expect(npmPackageVersion(path.join(root, 'nothing'), 'nothing')).toBeUndefined();
    expect(await agentVersion(path.join(root, 'nothing'), ['--version'], process.env, { tempRoot: path.join(root, 'tmp') })).toBeUndefined();
  });
});
