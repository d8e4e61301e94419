import { describe, expect, it } from 'vitest';
import { parseArgv } from './grammar.js';
import { scopesForCommand } from './command-authority.js';

const scopes = (line: string[]): string[][] => parseArgv(line, {}).map((c) => scopesForCommand(c));

describe('the scope each tmux command needs, by what it does', () => {
  it.each([
    [['list-panes', '-a'], ['read']],
    [['capture-pane', '-p', '-t', 'x'], ['read']],
    [['capture-pane', '-b', 'buf', '-t', 'x'], ['send']],
    [['save-buffer', '-'], ['read']],
    [['save-buffer', '/tmp/out'], ['admin']],
    [['load-buffer', '-'], ['send']],
    [['load-buffer', '/etc/passwd'], ['admin']],
    [['send-keys', '-t', 'x', 'ls', 'Enter'], ['send']],
    [['new-window', 'sleep 1'], ['create']],
    [['new-window', '-k', '-t', 'x:0'], ['create', 'kill']],
    [['respawn-pane', '-k', '-t', 'x'], ['create', 'kill']],
    [['move-window', '-k', '-s', 'a', '-t', 'b'], ['send', 'kill']],
    [['kill-pane', '-t', 'x'], ['kill']],
    [['detach-client'], ['send']],
    [['detach-client', '-E', 'touch x'], ['admin']],
    [['run-shell', 'true'], ['admin']],
    [['if-shell', 'true', 'list-panes'], ['admin']],
    [['pipe-pane', '-t', 'x', 'cat'], ['admin']],
    [['set-hook', '-g', 'after-new-window', 'run-shell true'], ['admin']],
    [['bind-key', 'x', 'run-shell', 'true'], ['admin']],
    [['set-option', '-g', 'default-command', 'true'], ['admin']],
    [['show-environment', '-g'], ['admin']],
    [['source-file', '/tmp/x.conf'], ['admin']],
  ])('%j needs %j', (line, expected) => {
    expect(scopes(line)).toEqual([expected]);
  });
});
