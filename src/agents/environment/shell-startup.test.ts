import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { COMMANDS_DIR_VARIABLE, seedShellStartup, SHELL_STARTUP_FILES } from './shell-startup.js';

describe("Switchboard's commands on a sandbox HOME's login PATH", () => {
  const homes: string[] = [];
  afterEach(() => {
    for (const home of homes.splice(0)) rmSync(home, { recursive: true, force: true });
  });
  const temp = (): string => {
    const home = mkdtempSync(path.join(tmpdir(), 'sb-shell-startup-'));
    homes.push(home);
    return home;
  };

  it('adds its lines once to each startup file, after what the file had', () => {
    const home = temp();
    writeFileSync(path.join(home, '.bashrc'), 'alias ll="ls -l"');
    seedShellStartup(home);
    seedShellStartup(home);
    for (const name of SHELL_STARTUP_FILES) {
      const text = readFileSync(path.join(home, name), 'utf8');
      expect(text.split('# switchboard: its commands on PATH').length - 1, name).toBe(1);
    }
    expect(readFileSync(path.join(home, '.bashrc'), 'utf8')).toMatch(/^alias ll="ls -l"\n# switchboard/);
  });

  it.skipIf(process.platform === 'win32')('a login shell, whose system profile sets PATH afresh, ends with the folder on PATH, once', () => {
    const home = temp();
    seedShellStartup(home);
    const env = { HOME: home, PATH: '/usr/bin:/bin', [COMMANDS_DIR_VARIABLE]: '/opt/switchboard bin' };
    for (const shell of ['sh', 'bash']) {
      const paths = execFileSync(shell, ['-lc', 'echo "$PATH"'], { env, encoding: 'utf8' }).trim().split(':');
      expect(paths.at(-1), shell).toBe('/opt/switchboard bin');
      expect(paths.filter((p) => p === '/opt/switchboard bin'), shell).toHaveLength(1);
    }
    // Without the variable (a shell outside any pane) PATH is left as the system set it.
    const { [COMMANDS_DIR_VARIABLE]: _unset, ...outside } = env;
    expect(execFileSync('bash', ['-lc', 'echo "$PATH"'], { env: outside, encoding: 'utf8' })).not.toContain('switchboard');
  });
});
