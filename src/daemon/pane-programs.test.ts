import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PANE_COMMANDS, preparePaneCommands } from './pane-programs.js';

describe("Switchboard's commands on panes' PATH", () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  const temp = (): string => {
    const dir = mkdtempSync(path.join(tmpdir(), 'sb-pane-programs-'));
    dirs.push(dir);
    return dir;
  };

  it('writes a launcher per command into the home and appends its folder to PATH, after what is there', () => {
    const home = temp();
    const cli = temp();
    // A stand-in CLI whose scripts print their own name and arguments.
    for (const script of Object.values(PANE_COMMANDS)) {
      mkdirSync(path.dirname(path.join(cli, script)), { recursive: true });
      writeFileSync(path.join(cli, script), `process.stdout.write(JSON.stringify([${JSON.stringify(script)}, ...process.argv.slice(2)]));\n`);
    }
    const prepared = preparePaneCommands(home, { PATH: `/usr/bin${path.delimiter}/bin` }, cli);
    expect(prepared?.dir).toBe(path.join(home, 'bin'));
    expect(prepared?.path.split(path.delimiter)).toEqual(['/usr/bin', '/bin', path.join(home, 'bin')]);
    // Again (a daemon restarted on the same home): rewritten, the folder on PATH once.
    const again = preparePaneCommands(home, { PATH: prepared?.path ?? '' }, cli);
    expect(again?.path).toBe(prepared?.path);
    if (process.platform === 'win32') return;
    const out = execFileSync('lask', ['--async', 'a question with spaces'], { env: { PATH: again?.path ?? '' }, encoding: 'utf8' });
    expect(JSON.parse(out)).toEqual([PANE_COMMANDS.lask, '--async', 'a question with spaces']);
  });

  it('leaves PATH alone when there is no built CLI to launch', () => {
    expect(preparePaneCommands(temp(), { PATH: '/usr/bin' }, undefined)).toBeUndefined();
  });
});
