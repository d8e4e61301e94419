import { describe, expect, it } from 'vitest';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { AgentCatalog } from '../profiles/catalog.js';
import { extractFinalMessage } from './final-message.js';

const screensDir = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'test', 'fixtures', 'screens');
const catalog = new AgentCatalog();

function lines(dir: string, stage: string): string[] {
  return readFileSync(path.join(screensDir, dir, `${stage}.txt`), 'utf8').replace(/\n$/, '').split('\n');
}

describe('the final message read off the recorded screens', () => {
  const dirs = readdirSync(screensDir);

  it.each(dirs)('%s: the reply to a prompt, and the last reply after a tool call', (dir) => {
    const agent = dir.split('-')[0] ?? '';
    const profile = catalog.get(agent);
    expect(extractFinalMessage(profile, lines(dir, 'reply-idle'), 'say hello please')).toBe('Hello from the scripted model.');
    const done = extractFinalMessage(profile, lines(dir, 'done-idle'), 'write a file please');
    // Aider prints the tool's output right above its reply, with no marker between them.
    if (agent === 'aider') expect(done?.split('\n').at(-1)).toBe('Done: wrote tool_out.txt.');
    else expect(done).toBe('Done: wrote tool_out.txt.');
  });

  it('joins the paragraphs of a long reply and leaves out the prompt box', () => {
    const screen = ['❯ explain', '', '● First paragraph,', '  still the first.', '', '  Second paragraph?', '', '────────', '❯ ', '────────', '  ? for shortcuts'];
    expect(extractFinalMessage(catalog.get('claude'), screen, 'explain')).toBe('First paragraph,\nstill the first.\n\nSecond paragraph?');
  });

  // Recorded by test/e2e/wrapped-reply.test.ts: a reply of two paragraphs, the first longer than the screen is wide.
  const LONG_PARAGRAPH =
    'The bridge keeps a conversation open after each run so that a follow-up can continue it without starting the command line interface again, and it closes the least recently used one first once the cap is reached.';
  const wrappedScreen = (file: string): string[] => readFileSync(path.join(screensDir, '..', 'wrapped-replies', file), 'utf8').replace(/\n$/, '').split('\n');

  it.each([
    ['claude', 'claude-2.1.332-80x30.txt', 80],
    ['codex', 'codex-0.171.0-60x30.txt', 60],
  ])('%s: joins the rows a long paragraph was broken into at the width, and keeps the paragraphs apart', (agent, file, cols) => {
    const screen = wrappedScreen(file);
    expect(extractFinalMessage(catalog.get(agent), screen, 'explain the pool please', undefined, cols)).toBe(`${LONG_PARAGRAPH}\n\nA second paragraph stays apart.`);
    // Without the width nothing is joined: every row is a line.
    expect(extractFinalMessage(catalog.get(agent), screen, 'explain the pool please')?.split('\n')).toHaveLength(agent === 'claude' ? 5 : 6);
  });

  it('keeps the line breaks the model wrote: short rows, list items, code, and a wrapped list item joined as one', () => {
    const screen = [
      '❯ explain',
      '',
      '● Steps, in order (this first row is broken at the width of',
      '  forty columns):',
      '  - park the conversation after a run that can be followed',
      '    up by its caller',
      '  - close the oldest',
      '  Short line.',
      '  Next line.',
      '      const kept = pool.size; // a line of code, indented',
      '  deeper than the text',
      '',
      '────────',
      '❯ ',
      '────────',
    ];
    expect(extractFinalMessage(catalog.get('claude'), screen, 'explain', undefined, 60)).toBe(
      [
        'Steps, in order (this first row is broken at the width of forty columns):',
        '- park the conversation after a run that can be followed up by its caller',
        '- close the oldest',
        'Short line.',
        'Next line.',
        'const kept = pool.size; // a line of code, indented',
        'deeper than the text',
      ].join('\n'),
    );
  });

  it('is null when no reply is on screen', () => {
    expect(extractFinalMessage(catalog.get('claude'), ['❯ ', '  ? for shortcuts'], 'x')).toBeNull();
    expect(extractFinalMessage(catalog.get('shell'), ['$ ls'], 'ls')).toBeNull();
  });
});
