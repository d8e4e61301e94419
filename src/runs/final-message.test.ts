import { describe, expect, it } from 'vitest';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { AgentCatalog } from '../agents/index.js';
import { extractFinalMessage } from './final-message.js';

const screensDir = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'test', 'fixtures', 'screens');
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

  it('is null when no reply is on screen', () => {
    expect(extractFinalMessage(catalog.get('claude'), ['❯ ', '  ? for shortcuts'], 'x')).toBeNull();
    expect(extractFinalMessage(catalog.get('shell'), ['$ ls'], 'ls')).toBeNull();
  });
});
