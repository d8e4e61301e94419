import { describe, expect, it } from 'vitest';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { AgentCatalog } from '../profiles/catalog.js';
import { detectScreen, lowestMatchOf, type Detection } from './detect.js';
import { defineProfile } from '../profiles/profile.js';
import type { Screens } from '../profiles/schema.js';
import { satisfies } from '../profiles/version-range.js';
import { FIXTURES_DIR, loadScreen } from '../../../test/support/screen-fixtures.js';

const fixtures = FIXTURES_DIR;
const catalog = new AgentCatalog();

const load = loadScreen;

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
    expect([...new Set(dirs.map((d) => d.split('-')[0]))].sort()).toEqual(['aider', 'claude', 'codex', 'gemini', 'opencode']);
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
    // The pattern's leading \s* starts its match on the blank rows above; the evidence is the question's row.
    const d = detectScreen(claude, ['', '', ' Do you want to proceed?', ' ❯ 1. Yes', '   2. No']);
    expect(d.kind).toBe('approval');
    expect(d.evidence?.row).toBe(2);
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

describe('executing and question patterns on the recorded screens', () => {
  const screenFiles = (): [string, string][] => {
    const out: [string, string][] = [];
    for (const dir of readdirSync(path.join(fixtures, 'screens'))) {
      for (const f of readdirSync(path.join(fixtures, 'screens', dir))) if (!f.endsWith('.ansi.txt')) out.push([dir.split('-')[0] ?? '', `screens/${dir}/${f}`]);
    }
    for (const f of readdirSync(path.join(fixtures, 'cli-captures'))) if (/-tui-.*(?<!\.ansi)\.txt$/.test(f)) out.push([f.split('-')[0] ?? '', `cli-captures/${f}`]);
    return out;
  };
  /** Whether any of `patterns` matches, with detectScreen's rules (rows, ansi), and nothing else (no structural rules). */
  const matches = (_agent: string, patterns: Screens['busy'], lines: readonly string[]): boolean => lowestMatchOf(patterns, { lines }) !== undefined;
  const executing = (agent: string, lines: readonly string[]): boolean => matches(agent, catalog.get(agent).screensFor(undefined).executing, lines);

  // Only Codex and OpenCode draw a pending tool call differently from a finished one, and no
  // recording catches a command mid-run (the scripted commands end in milliseconds): the screens
  // that show the pending form are their approval prompts ("• Running <cmd>", an unboxed
  // "$ <cmd>"). The after-approval screens already show the finished form ("• Ran", a ┃ block,
  // "✓ Shell") beside the model's spinner, so they are thinking, not executing. Claude Code keeps
  // "Reading 1 file…" on screen through both, Gemini's running icon and Aider's "Running <cmd>"
  // are not recorded: their lists stay empty.
  const EXECUTING = new Set(['screens/codex-0.169.0/approval.txt', 'screens/codex-0.171.0/approval.txt', 'cli-captures/codex-tui-approval.txt', 'screens/opencode-1.18.33/approval.txt', 'cli-captures/opencode-tui-approval.txt']);

  it.each(screenFiles())('%s %s', (agent, file) => {
    expect(executing(agent, load(path.join(fixtures, file)).lines)).toBe(EXECUTING.has(file));
  });

  it('Codex: the exec cell while its command runs is busy and executing (synthetic: after-tool with the cell not yet "Ran")', () => {
    const lines = load(path.join(fixtures, 'cli-captures', 'codex-tui-after-tool.txt')).lines.map((l) => l.replace(/^• Ran /, '• Running '));
    expect(detectScreen(catalog.get('codex').screensFor(undefined), lines).kind).toBe('busy');
    expect(executing('codex', lines)).toBe(true);
  });

  it('OpenCode: a shell call with no output yet is busy and executing (synthetic: thinking with the pending row)', () => {
    const lines = [...load(path.join(fixtures, 'screens', 'opencode-1.18.33', 'thinking.txt')).lines];
    lines[6] = '     $ npm test';
    expect(detectScreen(catalog.get('opencode').screensFor(undefined), lines).kind).toBe('busy');
    expect(executing('opencode', lines)).toBe(true);
  });

  it('no question pattern matches a recorded screen (none of them shows a question that is not an approval)', () => {
    for (const [agent, file] of screenFiles()) expect(matches(agent, catalog.get(agent).screensFor(undefined).question, load(path.join(fixtures, file)).lines), file).toBe(false);
  });
});
