import { describe, expect, it } from 'vitest';
import type { IPty } from 'node-pty';
import { withdrawQueuedInput } from '../../pane/pty-internals.js';
import { clearKeysFor, DEFAULT_CLEAR_KEYS, promptGone } from './withdraw-prompt.js';

/** Codex 0.171.0's input box as the real CLI drew it (recorded while checking the clear keys). */
const codex = (box: string[]): string[] => ['  >_ OpenAI Codex (v0.171.0)', '', '  To get started, describe a task', '', ...box, '', '  GPT-5.5 default · /tmp/work'];
const question = 'word word word word word word word word\nsecond line\n[switchboard ask abc123]';

describe('taking back a typed prompt', () => {
  it('sees the text in the box by its start, its end or a paste placeholder, and not in the history above', () => {
    const gone = promptGone(question);
    expect(gone(codex(['› word word word word word word word word', '  second line', '  [switchboard ask abc123]']))).toBe(false);
    // Cut off while it went in: only its start shows.
    expect(gone(codex(['› word word w']))).toBe(false);
    expect(gone(codex(['› [Pasted Content 3047 chars]']))).toBe(false);
    expect(gone(codex(['› Ask Codex to do anything']))).toBe(true);
    // An earlier prompt in the history is not the box.
    expect(gone(['› word word word word word word word word', '  second line', '  [switchboard ask abc123]', '', ...codex(['› Ask Codex to do anything'])])).toBe(true);
  });

  it('erases one line per line typed, within a bound per round', () => {
    expect(clearKeysFor(3)).toEqual([...DEFAULT_CLEAR_KEYS, ...DEFAULT_CLEAR_KEYS, ...DEFAULT_CLEAR_KEYS]);
    expect(clearKeysFor(0, ['C-u'])).toEqual(['C-u']);
    expect(clearKeysFor(10_000, ['C-u'])).toHaveLength(400);
  });

  it("drops the input node-pty has not written, finishing only the character under way", () => {
    const text = Buffer.from('ab€cd', 'utf8'); // € is three bytes: e2 82 ac
    const queue = [
      { buffer: text, offset: 3 }, // a, b and the first byte of € written
      { buffer: Buffer.from('more'), offset: 0 },
    ];
    const pty = { _writeStream: { _writeQueue: queue, dispose: () => undefined } } as unknown as IPty;
    expect(withdrawQueuedInput(pty)).toBe(2 + 4);
    expect(queue).toHaveLength(1);
    // The head stays (a write of it may be in flight), cut after the € it began.
    expect(queue[0]?.buffer.toString('utf8')).toBe('ab€');
    expect(withdrawQueuedInput(pty)).toBe(0);
    expect(withdrawQueuedInput({ _writeStream: { _writeQueue: [] } } as unknown as IPty)).toBe(0);
  });
});
