import { describe, expect, it } from 'vitest';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { AgentCatalog } from '../profiles/catalog.js';
import { classifyScreen } from './classify.js';
import { FIXTURES_DIR, loadScreen } from '../../../test/support/screen-fixtures.js';

const fixtures = FIXTURES_DIR;
const catalog = new AgentCatalog();

const load = loadScreen;

describe('agent states of the screens the end-to-end tests recorded', () => {
  // A thinking screen may already show the tool running (Codex and OpenCode draw the pending call).
  const stages: Record<string, string[]> = {
    'idle-start': ['idle'],
    thinking: ['thinking', 'executing'],
    'reply-idle': ['idle'],
    approval: ['waiting_approval'],
    'done-idle': ['idle'],
    error: ['error'],
  };
  const dirs = readdirSync(path.join(fixtures, 'screens'));
  const cases = dirs.flatMap((dir) => Object.entries(stages).map(([stage, states]) => [dir, stage, states] as const));

  it.each(cases)('%s %s → %s', (dir, stage, states) => {
    const [label = '', version = ''] = dir.split(/-(?=\d)/);
    const agent = label.split('-')[0] ?? '';
    const result = classifyScreen(catalog.get(agent).screensFor(version), load(path.join(fixtures, 'screens', dir, `${stage}.txt`)));
    expect(states).toContain(result.state);
    expect(result.evidence?.line.length).toBeGreaterThan(0);
    // The error is the whole message around the row that showed it (OpenCode's lowest red-barred
    // row holds only the bar): that row's words, when it has any, are in it.
    if (result.state === 'error') {
      const words = (result.evidence?.line ?? '').replace(/[┃│\s]/g, '');
      expect(result.error?.replace(/\s/g, '')).toContain(words);
      expect(result.error).toMatch(/\w{3}/);
    }
  });
});

describe('agent states of the captures of the real CLIs', () => {
  const expected: Record<string, string | null> = {
    'claude-tui-trust-dialog': 'waiting_input',
    'claude-tui-onboarding-apikey-dialog': 'waiting_input',
    'claude-tui-approval': 'waiting_approval',
    'claude-tui-thinking': 'thinking',
    'claude-tui-done-idle': 'idle',
    'codex-tui-onboarding-model-migration': 'waiting_input',
    'codex-tui-after-tool': 'thinking',
    'gemini-tui-onboarding-auth': 'waiting_input',
    'gemini-tui-approval': 'waiting_approval',
    'opencode-tui-done-idle': 'idle',
    'claude-tui-onboarding-preflight-fail': null,
  };
  it.each(Object.entries(expected))('%s → %s', (name, state) => {
    const agent = name.split('-')[0] ?? '';
    expect(classifyScreen(catalog.get(agent).screensFor(undefined), load(path.join(fixtures, 'cli-captures', `${name}.txt`))).state).toBe(state);
  });
});

describe('errors on an idle screen', () => {
  const claude = catalog.get('claude').screensFor(undefined);
  const screen = { lines: ['● Hello', '', '❯ fail now', '  ⎿  API Error: 500 boom', '', '  ? for shortcuts'] };

  it('are the current state when nothing was said after them', () => {
    expect(classifyScreen(claude, screen)).toMatchObject({ state: 'error', error: '⎿  API Error: 500 boom' });
  });

  it('are history once a reply follows them', () => {
    const later = { lines: [...screen.lines.slice(0, 4), '', '● A later reply', '', '  ? for shortcuts'] };
    expect(classifyScreen(claude, later).state).toBe('idle');
  });

  it('follow the caller when it knows the turn', () => {
    expect(classifyScreen(claude, screen, () => false).state).toBe('idle');
  });
});
