/**
 * What newTerminal gives back of a new xterm terminal (trimTerminalSlack), and that the terminal
 * still reads what it is sent: a write far past the first decode buffer, and every sequence kind.
 */
import { describe, expect, it } from 'vitest';
import { newTerminal } from './xterm-internals.js';

interface Slack {
  _core: { _inputHandler: { _parseBuffer: Uint32Array } };
}

const parseBufferOf = (t: unknown): number => (t as Slack)._core._inputHandler._parseBuffer.length;

function written(t: ReturnType<typeof newTerminal>, data: string): Promise<void> {
  return new Promise((resolve) => t.write(data, resolve));
}

describe('a new xterm terminal', () => {
  it('starts with a small decode buffer, grows it for a large write, and reads every kind of sequence as before', async () => {
    const t = newTerminal({ cols: 40, rows: 5, allowProposedApi: true });
    try {
      expect(parseBufferOf(t)).toBeLessThanOrEqual(256);
      const big = 'x'.repeat(40 * 1000);
      await written(t, big);
      expect(parseBufferOf(t)).toBeGreaterThanOrEqual(big.length);
      // CSI (clear, move), ESC (save/restore cursor), OSC (title) and DCS all still handled.
      let title = '';
      t.onTitleChange((value) => (title = value));
      await written(t, '\x1b[2J\x1b[H\x1b7hello\x1b8\x1b[2;3Hworld\x1b]0;the title\x07\x1bP$qm\x1b\\');
      const buffer = t.buffer.active;
      expect(buffer.getLine(buffer.baseY)?.translateToString(true)).toBe('hello');
      expect(buffer.getLine(buffer.baseY + 1)?.translateToString(true)).toBe('  world');
      expect(title).toBe('the title');
    } finally {
      t.dispose();
    }
  });

  it('keeps the lists of a Windows pseudo-terminal as they are (xterm disposes one of its own handlers there)', () => {
    const t = newTerminal({ cols: 40, rows: 5, allowProposedApi: true, windowsPty: { backend: 'conpty', buildNumber: 19041 } });
    try {
      expect(parseBufferOf(t)).toBeGreaterThan(256);
    } finally {
      t.dispose();
    }
  });
});
