import { describe, expect, it } from 'vitest';
import type { InputModesInfo } from './methods.js';
import { inputModeSequences } from './terminal-modes.js';

const OFF: InputModesInfo = { bracketed_paste: false, application_cursor_keys: false, mouse_tracking: 'none', send_focus: false };
const ON: InputModesInfo = { bracketed_paste: true, application_cursor_keys: true, mouse_tracking: 'drag', send_focus: true };

describe('input modes as terminal sequences', () => {
  it('sets every mode for a fresh terminal, the mouse in its default encoding (the pane socket)', () => {
    expect(inputModeSequences(ON, { mouse: 'default' })).toBe('\x1b[?2004h\x1b[?1h\x1b[?1004h\x1b[?1002h');
    expect(inputModeSequences(OFF, { mouse: 'default' })).toBe('\x1b[?2004l\x1b[?1l\x1b[?1004l');
    expect(inputModeSequences({ ...OFF, mouse_tracking: 'x10' }, { mouse: 'default' })).toBe('\x1b[?2004l\x1b[?1l\x1b[?1004l\x1b[?9h');
  });

  it('resets the mouse and asks for SGR reports on a terminal whose state is unknown (switchboard attach)', () => {
    expect(inputModeSequences(ON, { mouse: 'sgr' })).toBe('\x1b[?2004h\x1b[?1h\x1b[?1004h\x1b[?1000l\x1b[?1002l\x1b[?1003l\x1b[?1006l\x1b[?1002h\x1b[?1006h');
    expect(inputModeSequences(OFF, { mouse: 'sgr' })).toBe('\x1b[?2004l\x1b[?1l\x1b[?1004l\x1b[?1000l\x1b[?1002l\x1b[?1003l\x1b[?1006l');
  });

  it('sends only what changed since the previous modes', () => {
    expect(inputModeSequences(ON, { previous: ON, mouse: 'sgr' })).toBe('');
    expect(inputModeSequences({ ...ON, bracketed_paste: false }, { previous: ON, mouse: 'sgr' })).toBe('\x1b[?2004l');
    expect(inputModeSequences({ ...ON, mouse_tracking: 'none' }, { previous: ON, mouse: 'default' })).toBe('\x1b[?9l\x1b[?1000l\x1b[?1002l\x1b[?1003l');
  });
});
