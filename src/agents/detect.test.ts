import { describe, expect, it } from 'vitest';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { AgentCatalog } from './catalog.js';
import { detectScreen, type Detection } from './detect.js';
import { defineProfile } from './profile.js';
import { satisfies } from './version-range.js';

const fixtures = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'test', 'fixtures');
const catalog = new AgentCatalog();

function load(file: string): { lines: string[]; ansiLines?: string[] } {
  const rows = (f: string): string[] => readFileSync(f, 'utf8').replace(/\n$/, '').split('\n');
  const ansi = file.replace(/\.txt$/, '.ansi.txt');
  return { lines: rows(file), ...(existsSync(ansi) ? { ansiLines: rows(ansi) } : {}) };
}

function detect(agent: string, version: string | undefined, file: string): Detection {
  return detectScreen(catalog.get(agent).screensFor(version), load(file));
}

const describeKind = (d: Detection): string => `${d.kind}${d.dialog ? `:${d.dialog.id}` : ''}${d.error ? '+error' : ''}`;

describe('screen detectors on the captures of the real CLIs', () => {
  // Captured from Claude Code 2.1.197, Codex 0.169.0, Gemini CLI 0.61.0 and OpenCode 1.18.33.
  const expected: Record<string, string> = {
    'claude-tui-startup-seeded-idle': 'idle',
    'claude-tui-idle-start': 'idle',
    'claude-tui-thinking': 'busy',
    'claude-tui-approval': 'approval',
    'claude-tui-after-approve-thinking': 'busy',
    'claude-tui-done-idle': 'idle',
    'claude-tui-done-write': 'idle',
    'claude-tui-trust-dialog': 'dialog:trust_folder',
    'claude-tui-onboarding-apikey-dialog': 'dialog:use_api_key',
    // The connectivity check of onboarding: nothing to detect (Switchboard seeds onboarding as done).
    'claude-tui-onboarding-preflight-fail': 'unknown',
    'codex-tui-startup-seeded': 'idle',
    'codex-tui-startup-nodaemon': 'idle',
    'codex-tui-idle-start': 'idle',
    'codex-tui-thinking': 'busy',
    'codex-tui-approval': 'approval',
    'codex-tui-after-approve-thinking': 'busy',
    'codex-tui-after-tool': 'busy',
    'codex-tui-done-idle': 'idle',
    'codex-tui-trust-dialog': 'dialog:trust_folder',
    'codex-tui-onboarding-model-migration': 'dialog:model_migration',
    'gemini-tui-startup-seeded': 'idle',
    'gemini-tui-idle-start': 'idle',
    'gemini-tui-thinking': 'busy',
    'gemini-tui-approval': 'approval',
    'gemini-tui-after-approve': 'busy',
    'gemini-tui-done-idle': 'idle',
    'gemini-tui-onboarding-trust': 'dialog:trust_folder',
    'gemini-tui-onboarding-auth': 'dialog:choose_auth',
    'gemini-tui-onboarding-apikey': 'dialog:enter_api_key',
    'opencode-tui-startup': 'idle',
    'opencode-tui-thinking': 'busy',
    'opencode-tui-approval': 'approval',
    'opencode-tui-done-idle': 'idle',
  };

  it.each(Object.entries(expected))('%s → %s', (name, kind) => {
    const agent = name.split('-')[0] as string;
    const d = detect(agent, undefined, path.join(fixtures, 'cli-captures', `${name}.txt`));
    expect(describeKind(d)).toBe(kind);
    if (d.kind !== 'unknown') expect(d.evidence?.line.length).toBeGreaterThan(0);
  });

  it('covers every captured TUI screen', () => {
    const captured = readdirSync(path.join(fixtures, 'cli-captures')).filter((f) => /-tui-.*(?<!\.ansi)\.txt$/.test(f));
    expect(captured.map((f) => f.replace(/\.txt$/, '')).sort()).toEqual(Object.keys(expected).sort());
  });
});

describe('screen detectors on the screens the end-to-end tests recorded', () => {
  const stages: Record<string, string> = {
    'idle-start': 'idle',
    thinking: 'busy',
    'reply-idle': 'idle',
    approval: 'approval',
    'done-idle': 'idle',
    error: 'idle+error',
  };
  const dirs = readdirSync(path.join(fixtures, 'screens'));
  const cases = dirs.flatMap((dir) => Object.entries(stages).map(([stage, kind]) => [dir, stage, kind] as const));

  it('has recordings for every agent', () => {
    expect(dirs.map((d) => d.split('-')[0]).sort()).toEqual(['aider', 'claude', 'codex', 'gemini', 'opencode']);
  });

  it.each(cases)('%s %s → %s', (dir, stage, kind) => {
    // "<agent>-<version>", or "<agent>-standin-<version>" for a program that stands in for the CLI.
    const [label = '', version = ''] = dir.split(/-(?=\d)/);
    const agent = label.split('-')[0] ?? '';
    expect(satisfies(version, catalog.get(agent).screensFor(version).versions)).toBe(true);
    expect(describeKind(detect(agent, version, path.join(fixtures, 'screens', dir, `${stage}.txt`)))).toBe(kind);
  });
});

describe('detection rules', () => {
  const screens = catalog.get('gemini').screensFor(undefined);

  it('ignores a dialog left on screen above the idle prompt', () => {
    const lines = ['│ Do you trust the files in this folder?', '│ ● 1. Trust folder (x)', 'Gemini CLI is restarting…', ' >   Type your message or @path/to/file'];
    expect(detectScreen(screens, lines).kind).toBe('idle');
    expect(detectScreen(screens, lines.slice(0, 2)).kind).toBe('dialog');
  });

  it('counts a spinner as work even with the input box drawn below it', () => {
    const lines = [' > do something', ' ⠧ Thinking... (esc to cancel, 1s)', '────', ' >   Type your message or @path/to/file'];
    const d = detectScreen(screens, lines);
    expect(d.kind).toBe('busy');
    expect(d.evidence).toMatchObject({ row: 1, line: '⠧ Thinking... (esc to cancel, 1s)' });
  });

  it('reports the line where the match starts and its row', () => {
    const claude = catalog.get('claude').screensFor(undefined);
    const d = detectScreen(claude, ['', '', ' Do you want to proceed?', ' ❯ 1. Yes', '   3. No']);
    expect(d.kind).toBe('approval');
    expect(d.evidence?.row).toBe(3);
  });

  it('finishes on a crafted screen even with a catastrophic pattern from a user profile', () => {
    // On a backtracking engine this pattern takes 2^n steps on n letters; the daemon must not hang.
    const profile = defineProfile({ name: 'crafted', binary: { names: ['x'] }, screens: [{ versions: '*', idle: [{ pattern: '^(a|aa)+$', flags: 'i' }] }], approval_keys: { allow_once: ['y'], deny: ['n'] } }, { builtin: false });
    const line = `${'a'.repeat(5_000)}b`;
    expect(detectScreen(profile.screensFor(undefined), [line, line]).kind).toBe('unknown');
    expect(detectScreen(profile.screensFor(undefined), ['AAAA']).kind).toBe('idle');
  });

  it('places matches on the right row of a large screen', () => {
    const lines = Array.from({ length: 300 }, (_, i) => `row ${i} ${'x'.repeat(200)}`);
    lines[250] = ' >   Type your message or @path/to/file';
    expect(detectScreen(screens, lines).evidence).toMatchObject({ row: 250, rule: 'idle' });
  });

  it('says unknown when nothing matches', () => {
    expect(detectScreen(screens, ['hello', 'world'])).toEqual({ kind: 'unknown' });
  });
});
