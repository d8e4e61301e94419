import { afterEach, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { askEverything, asksEverything } from './acp-ask-all.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const folder = (): string => {
  const d = mkdtempSync(path.join(tmpdir(), 'sb-ask-all-'));
  dirs.push(d);
  return d;
};

describe('asking before every tool call', () => {
  it('gives Gemini CLI the default approval mode and a policy file of ours that asks for every tool with any arguments', () => {
    const dir = folder();
    const added = askEverything('gemini', {}, dir);
    expect(added.args.slice(0, 3)).toEqual(['--approval-mode', 'default', '--policy']);
    const file = added.args[3] ?? '';
    expect(path.dirname(file)).toBe(dir);
    expect(readFileSync(file, 'utf8')).toBe('[[rule]]\ntoolName = "*"\nargsPattern = "[\\\\s\\\\S]*"\ndecision = "ask_user"\npriority = 999\n');
    if (process.platform !== 'win32') expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it('sets OpenCode\u2019s permission to ask, keeping the rest of the configuration given', () => {
    const given = JSON.stringify({ model: 'scripted/scripted-model', permission: { bash: 'ask', edit: 'allow' } });
    expect(JSON.parse(askEverything('opencode', { OPENCODE_CONFIG_CONTENT: given }, folder()).env.OPENCODE_CONFIG_CONTENT ?? '')).toEqual({ model: 'scripted/scripted-model', permission: 'ask' });
    expect(JSON.parse(askEverything('opencode', {}, folder()).env.OPENCODE_CONFIG_CONTENT ?? '')).toEqual({ permission: 'ask' });
    expect(JSON.parse(askEverything('opencode', { OPENCODE_CONFIG_CONTENT: 'not json' }, folder()).env.OPENCODE_CONFIG_CONTENT ?? '')).toEqual({ permission: 'ask' });
  });

  it('adds nothing for an agent it does not know', () => {
    expect(askEverything('my-acp-agent', {}, folder())).toEqual({ args: [], env: {} });
    expect([asksEverything('gemini'), asksEverything('opencode'), asksEverything('my-acp-agent')]).toEqual([true, true, false]);
  });
});
