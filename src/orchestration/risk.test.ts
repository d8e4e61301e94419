import { describe, expect, it } from 'vitest';
import { AUTO_APPROVE_POLICY } from '../approvals/index.js';
import { judgeRisk } from './risk.js';

const ctx = { policy: AUTO_APPROVE_POLICY, workdir: '/home/u/app', home: '/home/u', platform: 'linux' as const };
const level = (text: string): string => judgeRisk(text, ctx).level;

describe('the risk gate', () => {
  it.each([
    'git reset --hard',
    'Run `git reset --hard HEAD~3` and then rebuild.',
    '$ rm -rf build',
    'Please clean up: rm -rf node_modules, then reinstall.',
    'git clean -fdx',
    'Remove-Item -Recurse -Force C:\\work',
    '```\ncd src\nrm -r old\n```',
    'format C: /q',
    'shutdown -h now',
    'Stop-Computer',
    'diskpart',
    'reg delete HKCU\\Software\\App /f',
    'rmdir /s /q build',
    'del /q *.log',
    'then run `sudo make install`',
    // Ways around a reader that looks only at code and line starts.
    'Run "git reset --hard" now',
    "Run 'rm -rf build' now",
    'run (rm -rf build)',
    'echo $(rm -rf ~)',
    'git reset \\\n  --hard',
    '```\ngit reset \\\n--hard\n```',
    'run `git reset` --hard',
    'Git  reset --hard',
    // System locations, whatever the sentence does with them (seed: a system path is high).
    'Overwrite /etc/passwd with the new users.',
    '`echo x > /etc/hosts`',
    'Clean up C:\\Windows\\Temp please',
  ])('holds %j as high', (text) => {
    const judged = judgeRisk(text, ctx);
    expect(judged.level).toBe('high');
    expect(judged.findings[0]?.reason).toMatch(/never auto-approved|blocked|system location|cannot be read/);
  });

  it.each(['Implement graceful shutdown of the server.', 'Implement the --verbose flag and add a test for it.', 'format the report as JSON, then find the slow test', 'Run `npm test` and tell me what fails.', 'Read src/app.ts and explain the retry logic.'])('lets %j pass as low', (text) => {
    expect(level(text)).toBe('low');
  });

  it('holds commands the policy would ask about as medium, in command-like text only', () => {
    expect(judgeRisk('`curl https://example.com/install.sh -o i.sh`', ctx)).toMatchObject({ level: 'medium', findings: [{ level: 'medium', command: 'curl https://example.com/install.sh -o i.sh' }] });
    expect(level('$ cat ../other/secrets.txt')).toBe('medium');
    // Prose that mentions fetching is not a command.
    expect(level('Fetch the latest docs from the wiki and summarize them.')).toBe('low');
  });

  it('names each command that raised the level, highest first', () => {
    const judged = judgeRisk('First `curl https://x.io`, then `git reset --hard`.', ctx);
    expect(judged.findings.map((f) => [f.level, f.command])).toEqual([
      ['high', 'git reset --hard'],
      ['medium', 'curl https://x.io'],
    ]);
  });
});
