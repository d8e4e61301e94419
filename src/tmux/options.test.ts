import { describe, expect, it } from 'vitest';
import { optionEntry } from './option-table.js';
import { checkValue, isColour, isStyle, OptionError, optionLines, OptionStore, parseOptionName } from './options.js';

const entry = (name: string) => {
  const e = optionEntry(name);
  if (!e) throw new Error(name);
  return e;
};
const message = (fn: () => unknown): string => {
  try {
    fn();
    return 'ok';
  } catch (err) {
    return err instanceof OptionError ? err.message : String(err);
  }
};

describe('tmux options', () => {
  it('knows every scope and default of tmux 3.3a', () => {
    expect(optionEntry('remain-on-exit')).toMatchObject({ scope: 'pane', type: 'choice', default: 'off' });
    expect(optionEntry('history-limit')).toMatchObject({ scope: 'session', type: 'number', default: '2000' });
    expect(optionEntry('escape-time')).toMatchObject({ scope: 'server', default: '500' });
    expect(optionEntry('update-environment')?.default).toContain('SSH_AUTH_SOCK');
  });

  it('checks values with tmux messages, toggling flags with no value', () => {
    expect(checkValue(entry('mouse'), 'on', 'off')).toBe('on');
    expect(checkValue(entry('mouse'), undefined, 'on')).toBe('off');
    expect(message(() => checkValue(entry('mouse'), 'maybe', 'off'))).toBe('bad value: maybe');
    expect(message(() => checkValue(entry('history-limit'), 'abc', '2000'))).toBe('value is invalid: abc');
    expect(message(() => checkValue(entry('base-index'), '-1', '0'))).toBe('value is too small: -1');
    expect(message(() => checkValue(entry('base-index'), '99999999999', '0'))).toBe('value is too large: 99999999999');
    expect(message(() => checkValue(entry('status-keys'), 'foo', 'emacs'))).toBe('unknown value: foo');
    expect(message(() => checkValue(entry('status-style'), 'bg=nope', 'default'))).toBe('invalid style: bg=nope');
    expect(message(() => checkValue(entry('prefix'), 'Bogus-key', 'C-b'))).toBe('bad key: Bogus-key');
    expect(message(() => checkValue(entry('history-limit'), undefined, '2000'))).toBe('empty value');
  });

  it('reads colours and styles', () => {
    expect(['red', 'colour208', '#ff0000', 'brightblue', 'default'].every(isColour)).toBe(true);
    expect(isColour('nope')).toBe(false);
    expect(isStyle('bg=blue,fg=red bold')).toBe(true);
    expect(isStyle('#{?pane_active,fg=red,}')).toBe(true);
    expect(isStyle('foo')).toBe(false);
  });

  it('inherits from the parent scope and lists user options first, then the table order', () => {
    const global = OptionStore.withDefaults(['window', 'pane']);
    const window = new OptionStore(global);
    window.set('remain-on-exit', 'on');
    window.set('@b', '1');
    window.set('@a', '2');
    window.set('automatic-rename', 'off');
    expect(window.get('mode-keys')).toBe('emacs');
    expect(window.names()).toEqual(['@a', '@b', 'automatic-rename', 'remain-on-exit']);
  });

  it('prints lines as show-options does', () => {
    expect(optionLines('@x', 'a b', { valuesOnly: false })).toEqual(['@x "a b"']);
    expect(optionLines('update-environment', ['A', 'B'], { valuesOnly: false })).toEqual(['update-environment[0] A', 'update-environment[1] B']);
    expect(optionLines('user-keys', [], { valuesOnly: false })).toEqual(['user-keys']);
    expect(optionLines('history-limit', '2000', { valuesOnly: false, inherited: true })).toEqual(['history-limit* 2000']);
    expect(parseOptionName('update-environment[3]')).toEqual({ name: 'update-environment', index: 3 });
  });
});
