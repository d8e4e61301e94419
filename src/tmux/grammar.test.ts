import { describe, expect, it } from 'vitest';
import { lookupCommand } from './command-table.js';
import { CommandParseError, escapeArgument, parseArgv, parseCommand, printCommand, splitArgv, tokenizeCommandString } from './grammar.js';

describe('the tmux command grammar', () => {
  it('splits an argument vector at ; as tmux does, \\; staying literal', () => {
    expect(splitArgv(['a', '-t', 'x', ';', 'b', 'c;', 'd', 'e\\;', 'f'])).toEqual([['a', '-t', 'x'], ['b', 'c'], ['d', 'e;', 'f']]);
    expect(splitArgv([';', 'a', ';'])).toEqual([['a']]);
  });

  it('finds commands by name, alias and unique prefix', () => {
    expect(lookupCommand('display').ok && lookupCommand('display')).toMatchObject({ spec: { name: 'display-message' } });
    expect(lookupCommand('list-p')).toMatchObject({ ok: true, spec: { name: 'list-panes' } });
    expect(lookupCommand('li')).toEqual({ ok: false, error: 'ambiguous command: li, could be: link-window, list-buffers, list-clients, list-commands, list-keys, list-panes, list-sessions, list-windows' });
    expect(lookupCommand('bogus')).toEqual({ ok: false, error: 'unknown command: bogus' });
  });

  it('reads flags like getopt: grouped, attached values, --, and a missing value left unset', () => {
    const c = parseCommand(['split-window', '-dhP', '-l10', '-F', '#{pane_id}', '-t', '%0', '--', '-x']);
    expect([...c.flags.entries()]).toEqual([['d', ['']], ['h', ['']], ['P', ['']], ['l', ['10']], ['F', ['#{pane_id}']], ['t', ['%0']]]);
    expect(c.args).toEqual(['-x']);
    expect(parseCommand(['has-session', '-t']).flags.has('t')).toBe(false);
    expect(parseCommand(['split-window', '-p', '30']).flags.get('p')).toEqual(['30']);
  });

  it('words errors as tmux does', () => {
    const error = (words: string[]): string => {
      try {
        parseCommand(words);
        return 'no error';
      } catch (err) {
        return err instanceof CommandParseError ? err.message : String(err);
      }
    };
    expect(error(['display-message', '-Z'])).toBe('command display-message: unknown flag -Z');
    expect(error(['has-session', 'extra'])).toBe('command has-session: too many arguments (need at most 0)');
    expect(error(['rename-window'])).toBe('command rename-window: too few arguments (need at least 1)');
    expect(() => parseArgv(['display', '-p', 'a', ';', 'bogus'])).toThrow('unknown command: bogus');
  });

  it('escapes arguments as tmux prints them', () => {
    expect(['plain', 'x y', "it's", 'a"b', '~x', '#', '\\', 'tab\tx', ''].map((value) => escapeArgument(value))).toEqual(['plain', '"x y"', '"it\'s"', "'a\"b'", '\\~x', '\\#', '\\\\', 'tab\\tx', "''"]);
  });

  it('prints commands with their full name, bare flags, then valued flags, then arguments', () => {
    expect(printCommand(parseCommand(['display', '-p', 'x']))).toBe('display-message -p x');
    expect(printCommand(parseCommand(['splitw', '-t', '%1', '-h', '-d', 'sleep 9']))).toBe('split-window -dh -t "%1" "sleep 9"');
  });

  it('tokenizes command strings in tmux config syntax', () => {
    expect(tokenizeCommandString('display -p "a b" ; run-shell \'x y\' # comment', { HOME: '/h' })).toEqual([['display', '-p', 'a b'], ['run-shell', 'x y']]);
    expect(tokenizeCommandString('set -g @x "$HOME/z" \\; ~/w', { HOME: '/h' })).toEqual([['set', '-g', '@x', '/h/z', ';', '/h/w']]);
    expect(tokenizeCommandString('if -F 1 { display -p yes }')).toEqual([['if', '-F', '1', 'display -p yes']]);
  });
});
