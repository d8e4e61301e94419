import { describe, expect, it } from 'vitest';
import { MAX_TEXT } from './common.js';
import { checkTmuxCommandParams, tmuxParams } from './tmux.js';

const schema = tmuxParams.tmux_command;

/** What a launcher sends, and what it must never get past either check. */
const CASES: unknown[] = [
  { argv: ['-S', '/tmp/s', 'display-message', '-p', '-t', '%0', '#{pane_id}'], env: { HOME: '/h', TERM: 'xterm' }, cwd: '/work', tty: false },
  { argv: [] },
  { argv: ['list-panes'], env: {}, cwd: '/', tty: true, stdin: 'text ✓' },
  { argv: ['x'.repeat(MAX_TEXT)] },
  { argv: ['x'.repeat(MAX_TEXT + 1)] },
  { argv: new Array(4097).fill('a') },
  { argv: ['a', 1] },
  { argv: 'a' },
  {},
  null,
  [],
  'argv',
  { argv: ['a'], extra: 1 },
  { argv: ['a'], env: null, cwd: null, tty: null, stdin: null },
  { argv: ['a'], env: { A: 1 } },
  { argv: ['a'], env: { A: 'x'.repeat(128 * 1024 + 1) } },
  { argv: ['a'], env: [] },
  { argv: ['a'], env: JSON.parse('{"__proto__": "x"}') as unknown },
  { argv: ['a'], cwd: '' },
  { argv: ['a'], cwd: 'x'.repeat(4097) },
  { argv: ['a'], tty: 'yes' },
  { argv: ['a'], stdin: 5 },
  JSON.parse('{"argv": ["a"], "__proto__": {"tty": true}}') as unknown,
];

describe('tmux_command params without zod', () => {
  it('accept only what the schema accepts, as the schema gives it', () => {
    for (const params of CASES) {
      const fast = checkTmuxCommandParams(params);
      if (fast === undefined) continue;
      const parsed = schema.safeParse(params);
      expect(parsed.success, JSON.stringify(params).slice(0, 80)).toBe(true);
      expect(fast).toEqual(parsed.data);
    }
  });

  it('take the launchers’ requests without the schema', () => {
    for (const params of CASES.slice(0, 4)) expect(checkTmuxCommandParams(params)).toBe(params);
  });
});
