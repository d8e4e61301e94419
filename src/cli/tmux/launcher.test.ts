import { describe, expect, it } from 'vitest';
import { COMMANDS } from '../../tmux/command-table.js';
import { LAUNCHER_COMMANDS, mayNeedCommandTable } from './launcher.js';

describe('the Node launcher without its command table', () => {
  it('knows every command that starts a server, and load-buffer, by the table’s names and aliases', () => {
    const wanted = COMMANDS.filter((c) => c.startsServer || c.name === 'load-buffer').map((c) => [c.name, c.alias]);
    expect([...LAUNCHER_COMMANDS].map(([name, alias]) => [name, alias]).sort()).toEqual(wanted.sort());
  });

  it('loads the table for any line that may name one of them', () => {
    for (const words of [[], ['new'], ['new-s'], ['a'], ['start'], ['loadb', '-'], ['display', '-p', ';', 'new'], ['kill-pane', '-t', 'attach'], ['display', 'new;'], ['n']]) {
      expect(mayNeedCommandTable(words), words.join(' ')).toBe(true);
    }
    for (const words of [['display-message', '-p', '#{pane_id}'], ['capture-pane', '-p', '-t', '%0'], ['send-keys', '-t', '%0', 'x', 'Enter'], ['list-panes', '-F', '#{pane_id}'], [';'], ['display;']]) {
      expect(mayNeedCommandTable(words), words.join(' ')).toBe(false);
    }
  });
});
