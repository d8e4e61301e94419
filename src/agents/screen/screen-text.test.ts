import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { AgentCatalog } from '../profiles/catalog.js';
import { countReplies, repliesBelowPrompt } from './screen-text.js';

const screensDir = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'test', 'fixtures', 'screens');
const lines = (dir: string, stage: string): string[] => readFileSync(path.join(screensDir, dir, `${stage}.txt`), 'utf8').replace(/\n$/, '').split('\n');
const opencode = new AgentCatalog().get('opencode').screensFor('1.18.33');

/** The doctor's long prompt as OpenCode 1.18.33 was given it (recorded by `switchboard doctor --save`): its start and its end. */
const LONG_PROMPT = 'doctor check two: a long prompt follows on one line; reply once you have read it all. w00001 w00002 … w02910 doctor end of the long prompt.';

describe('reply marks under the prompt', () => {
  it("finds this turn's mark when the last turn's scrolled out of a full-screen CLI's view (OpenCode, 20 KB prompt)", () => {
    const before = lines('opencode-1.18.33', 'long-prompt-pasted');
    const after = lines('opencode-1.18.33', 'long-prompt-replied');
    // The count alone cannot tell: one mark before the turn, one after.
    expect(countReplies(opencode, before)).toBe(1);
    expect(countReplies(opencode, after)).toBe(1);
    // Before: the prompt's end is nowhere (a paste placeholder in the box). After: one mark under it.
    expect(repliesBelowPrompt(opencode, before, LONG_PROMPT)).toBeUndefined();
    expect(repliesBelowPrompt(opencode, after, LONG_PROMPT)).toBe(1);
  });

  it('counts no mark above the echo, and reads an echo wrapped inside a frame', () => {
    const screen = ['  ┃  doctor check one: say hello', '', '     ▣  Build · Scripted Model · 2.5s', '', '  ┃  write the file named', '  ┃  notes.txt please', '', '  ┃  Build · Scripted Model'];
    expect(repliesBelowPrompt(opencode, screen, 'write the file named notes.txt please')).toBe(0);
    expect(repliesBelowPrompt(opencode, [...screen.slice(0, 6), '     Done.', '     ▣  Build · Scripted Model · 0.4s'], 'write the file named notes.txt please')).toBe(1);
    expect(repliesBelowPrompt(opencode, screen, '   ')).toBeUndefined();
  });
});
