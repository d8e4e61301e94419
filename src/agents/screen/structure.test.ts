import { describe, expect, it } from 'vitest';
import path from 'node:path';
import { AgentCatalog } from '../profiles/catalog.js';
import { detectScreen } from './detect.js';
import { findInputBox, findMenu, findWorkSign, isRule } from './structure.js';
import { FIXTURES_DIR, loadScreen } from '../../../test/support/screen-fixtures.js';

const lines = (file: string): string[] => loadScreen(path.join(FIXTURES_DIR, file)).lines;
const labels = (file: string): string[] | undefined => findMenu(lines(file))?.options.map((o) => `${o.selected ? '*' : ''}${o.label}`);

describe('menus read by their shape', () => {
  it('reads numbered menus with the highlighted option, and wrapped labels as one', () => {
    expect(labels('screens/claude-2.1.197/approval.txt')).toEqual(['*Yes', 'Yes, and always allow access to sb-claude-work-XXXXXX/ from this project', 'No']);
    expect(labels('cli-captures/codex-tui-onboarding-model-migration.txt')).toEqual(['*Try new model', 'Use existing model']);
    expect(labels('cli-captures/gemini-tui-onboarding-auth.txt')).toEqual(['Sign in with Google', '*Use Gemini API Key', 'Vertex AI']);
    const wrapped = [' Do you want to make this edit to a.txt?', ' ❯ 1. Yes', '   2. Yes, and switch to accept edits (auto-approve file edits and common file commands) for this', '      session (shift+tab)', '   3. No', '', ' Esc to cancel · Tab to amend'];
    expect(findMenu(wrapped)?.options.map((o) => o.label)).toEqual(['Yes', 'Yes, and switch to accept edits (auto-approve file edits and common file commands) for this session (shift+tab)', 'No']);
  });

  it('reads unnumbered menus (Claude Code 2.1.330 lists "❯ No, exit" first) by their alignment and confirm hint', () => {
    const trust = [' Security guide', '', ' ❯ No, exit', '   Yes, I trust this folder', '', ' Enter to confirm · Esc to cancel'];
    expect(findMenu(trust)?.options.map((o) => `${o.selected ? '*' : ''}${o.label}`)).toEqual(['*No, exit', 'Yes, I trust this folder']);
    const apiKey = ['  Do you want to use this API key?', '    Yes', '  ❯ No (recommended)', '', '  Enter to confirm · Esc to cancel'];
    expect(findMenu(apiKey)?.options.map((o) => `${o.selected ? '*' : ''}${o.label}`)).toEqual(['Yes', '*No (recommended)']);
  });

  it('is not fooled by lists that wait for nothing: tips, history, a single marked row', () => {
    expect(findMenu(lines('screens/codex-0.169.0/idle-start.txt'))).toBeUndefined();
    expect(findMenu(lines('cli-captures/gemini-tui-startup-seeded.txt'))).toBeUndefined();
    expect(findMenu(['❯ say hello', '● Hello.', '❯ write a file'])).toBeUndefined();
    // Numbered, but nothing highlighted and no hint: Gemini's tips.
    expect(findMenu(['1. Create GEMINI.md files', '2. /help for more information', '3. Ask coding questions'])).toBeUndefined();
  });
});

const catalog = new AgentCatalog();

describe('the input box and signs of work', () => {
  it('finds the input box of every CLI on its idle screen, never a menu option', () => {
    expect(findInputBox(lines('screens/claude-2.1.197/done-idle.txt'))?.text).toBe('');
    expect(findInputBox(lines('screens/codex-0.169.0/done-idle.txt'))?.text).toBe('Ask Codex to do anything');
    expect(findInputBox(lines('screens/gemini-0.61.0/done-idle.txt'))?.text).toBe('Type your message or @path/to/file');
    expect(findInputBox(lines('cli-captures/opencode-tui-startup.txt'))?.text).toMatch(/^Ask anything/);
    expect(findInputBox(lines('screens/aider-standin-0.86.1/idle-start.txt'))?.text).toBe('');
    expect(findInputBox(lines('screens/claude-2.1.197/approval.txt'))).toBeUndefined();
    expect(findInputBox(lines('screens/codex-0.169.0/approval.txt'))).toBeUndefined();
  });

  it('sees work by the hint on how to interrupt it, or a spinner row, not by a menu hint', () => {
    expect(findWorkSign(lines('screens/claude-2.1.197/thinking.txt'))).toMatchObject({ kind: 'interrupt' });
    expect(findWorkSign(lines('screens/gemini-0.61.0/thinking.txt'))).toMatchObject({ kind: 'interrupt' });
    expect(findWorkSign(['', '✽ Percolating…', '────────', '❯'])).toMatchObject({ kind: 'spinner', row: 1 });
    expect(findWorkSign(['✻ Worked for 2s · done 2:33 PM', '────────', '❯'])).toBeUndefined();
    expect(findWorkSign(lines('screens/claude-2.1.197/approval.txt'))).toBeUndefined();
  });

  it('sees work by a progress bar opening a row, whatever the words after it, and never in a logo or a rule', () => {
    const thinking = lines('screens/opencode-1.18.33/thinking.txt');
    const footer = thinking.findIndex((l) => l.includes('esc interrupt'));
    // OpenCode redraws its footer in place: a deep working folder's path written over the hint
    // (as seen once under a long test folder) leaves the bar and loses the words.
    const overwritten = thinking.map((l, i) => (i === footer ? l.replace(/esc interrupt.*$/, 'esc /tmp/sbt-AbC123/sb-doctor-XyZ789/opencode-Qw3rTy/work   7.2K (6%)  ctrl+p commands') : l));
    expect(findWorkSign(overwritten)).toMatchObject({ kind: 'progress', row: footer });
    expect(detectScreen(catalog.get('opencode').screensFor('1.18.33'), overwritten)).toMatchObject({ kind: 'busy', evidence: { rule: 'structure:work', row: footer } });
    for (const idle of ['idle-start', 'reply-idle', 'done-idle', 'error']) expect(findWorkSign(lines(`screens/opencode-1.18.33/${idle}.txt`)), idle).toBeUndefined();
    expect(findWorkSign(['  ▰▰▱▱▱▱  Loading', '────────'])).toMatchObject({ kind: 'progress', row: 0 });
    expect(findWorkSign(['█▀▀█ █▀▀█ █▀▀█', '▀▀▀▀▀▀▀▀▀▀▀▀', '  ╹▀▀▀▀▀▀▀▀▀▀'])).toBeUndefined();
  });

  it('knows a rule when it sees one', () => {
    expect(isRule('─'.repeat(40))).toBe(true);
    expect(isRule('╭' + '─'.repeat(40) + '╮')).toBe(true);
    expect(isRule('▄'.repeat(40))).toBe(true);
    expect(isRule('-- not a rule --')).toBe(false);
  });
});

describe('shape where the patterns say nothing', () => {
  // A profile that knows none of the screen's words: only the structural rules can read it.
  const blank = { ...catalog.get('claude').screensFor('2.1.330'), idle: ['never-matches-anything'], busy: [], approval: [], dialogs: [], error: [] };

  it('reads an idle prompt, work, and a menu of unknown meaning, saying the evidence came from the shape', () => {
    const idle = ['❯ say hello', '● Hello.', '─'.repeat(60), '❯ ', '─'.repeat(60), '  ⏸ manual mode on · ? for shortcuts'];
    expect(detectScreen(blank, idle)).toMatchObject({ kind: 'idle', evidence: { rule: 'structure:input', row: 3 } });
    const busy = ['❯ say hello', '✽ Percolating…', '─'.repeat(60), '❯ ', '─'.repeat(60), '  esc to interrupt'];
    expect(detectScreen(blank, busy)).toMatchObject({ kind: 'busy', evidence: { rule: 'structure:work' } });
    const offer = [' Try the new fullscreen renderer?', ' ❯ 1. Yes, try it', '   2. Not now', '', ' Enter to confirm · Esc to cancel'];
    const d = detectScreen(blank, offer);
    expect(d).toMatchObject({ kind: 'dialog', evidence: { rule: 'structure:menu', row: 1 } });
    expect(d.dialog).toBeUndefined();
  });

  it('never takes an offer for an approval: Claude Code 2.1.330 names its renderer offer as a dialog to decline', () => {
    const offer = [' Try the new fullscreen renderer?', ' ❯ 1. Yes, try it', '   2. Not now', '', ' Enter to confirm · Esc to cancel'];
    const d = detectScreen(catalog.get('claude').screensFor('2.1.330'), offer);
    expect(d.kind).toBe('dialog');
    expect(d.dialog?.id).toBe('fullscreen_renderer');
  });

  it('takes a menu left above the input box for history', () => {
    const screen = [' ❯ 1. Yes', '   2. No', ' Esc to cancel', '● Done.', '─'.repeat(60), '❯ ', '─'.repeat(60)];
    expect(detectScreen(blank, screen).kind).toBe('idle');
  });
});
