/**
 * Screens of the newest CLIs captured by `scripts/capture-screens.ts` (test/fixtures/cases/), one
 * per case and size: the state each must be read as and, for approval prompts, what the read says
 * and whether it is sure. Each was a misread once (issue 20) or is the fail-closed side of a fix.
 */
import { describe, expect, it } from 'vitest';
import path from 'node:path';
import { AgentCatalog } from '../profiles/catalog.js';
import { classifyScreen, INTERRUPTED_RULE, RETRYING_RULE } from './classify.js';
import { parseApproval } from './approval-prompt.js';
import { errorText } from './screen-text.js';
import { FIXTURES_DIR, loadScreen } from '../../../test/support/screen-fixtures.js';

const catalog = new AgentCatalog();
const SIZES = ['80x24', '120x40', '200x50'] as const;
const SLOW = 'printf "%s\\n" "the answer, written slowly to a file of its own" > slow.txt';

interface Expected {
  state: string;
  rule?: string;
  approval?: { certain: boolean; tool?: string; command?: string | RegExp; path?: RegExp | string };
  line?: RegExp;
  /** The error message a task ends with, read around the evidence row. */
  message?: RegExp;
}

const cases: [string, string, Expected][] = [
  ...SIZES.map((s): [string, string, Expected] => ['claude', `claude-2.1.332/shell-approval-${s}`, { state: 'waiting_approval', approval: { certain: true, tool: 'shell', command: SLOW } }]),
  // A row of prose between the command and the question says why Claude Code asks.
  ['claude', 'claude-2.1.332/nested-approval-120x40', { state: 'waiting_approval', approval: { certain: true, tool: 'shell', command: 'cd .. && ls $(pwd)' } }],
  // A command with a blank line, then rows that read like prose: all of it is the command (a blank
  // row closes nothing). And rows whose tails sit far right in the same column are no side panel.
  ['claude', 'claude-2.1.332/blank-line-command-approval-120x40', { state: 'waiting_approval', approval: { certain: true, tool: 'shell', command: 'echo hello\n\nRemove the old notes now\nrm notes.txt' } }],
  ['claude', 'claude-2.1.332/gap-command-approval-120x40', { state: 'waiting_approval', approval: { certain: true, tool: 'shell', command: /; rm notes\.txt$/ } }],
  ['claude', 'claude-2.1.332/write-outside-approval-120x40', { state: 'waiting_approval', approval: { certain: true, tool: 'file_write', path: '../outside-note.txt' } }],
  // The diff pushed the heading with the file's path off a short screen; the question names only
  // the file's base name ("outside-note.txt" for ../outside-note.txt): not sure.
  ['claude', 'claude-2.1.332/edit-long-approval-80x24', { state: 'waiting_approval', approval: { certain: false } }],

  ...SIZES.map((s): [string, string, Expected] => ['codex', `codex-0.171.0/write-outside-approval-${s}`, { state: 'waiting_approval', approval: { certain: true, tool: 'file_edit', path: /^\/.*\/outside-note\.txt$/ } }]),
  ...SIZES.map((s): [string, string, Expected] => ['codex', `codex-0.171.0/streaming-${s}`, { state: 'thinking', rule: 'turn_open' }]),
  // The prompt and the reply's first row scrolled away: the reply's rows go on at the top.
  ...SIZES.map((s): [string, string, Expected] => ['codex', `codex-0.171.0/streaming-late-${s}`, { state: 'thinking', rule: 'turn_open' }]),
  ...SIZES.map((s): [string, string, Expected] => ['codex', `codex-0.171.0/stream-done-idle-${s}`, { state: 'idle' }]),
  ...SIZES.map((s): [string, string, Expected] => ['codex', `codex-0.171.0/refused-idle-${s}`, { state: 'idle', rule: INTERRUPTED_RULE }]),
  // Codex shows a command's rows after a blank one unboxed: they are not prose, the read is unsure.
  ['codex', 'codex-0.171.0/blank-line-command-approval-120x40', { state: 'waiting_approval', approval: { certain: false } }],
  ['codex', 'codex-0.171.0/gap-command-approval-120x40', { state: 'waiting_approval', approval: { certain: false } }],
  // /status's output at 80x24: the banner's slash commands at the top, a box, no turn going on.
  ['codex', 'codex-0.171.0/status-output-idle-80x24', { state: 'idle' }],

  ...SIZES.map((s): [string, string, Expected] => ['gemini', `gemini-0.61.0/edit-approval-${s}`, { state: 'waiting_approval', approval: { certain: true, tool: 'file_edit', path: 'settings.txt' } }]),
  ['gemini', 'gemini-0.61.0/edit-long-approval-80x24', { state: 'waiting_approval', approval: { certain: true, tool: 'file_edit', path: 'long.txt' } }],
  ['gemini', 'gemini-0.61.0/shell-approval-120x40', { state: 'waiting_approval', approval: { certain: true, tool: 'shell', command: SLOW } }],
  ['gemini', 'gemini-0.61.0/shell-approval-200x50', { state: 'waiting_approval', approval: { certain: true, tool: 'shell', command: SLOW } }],
  // Word-wrapped in its box, and the header above cuts it short with "…": a space or a line break
  // where it broke cannot be told apart, so the read is not sure (and a policy asks).
  ['gemini', 'gemini-0.61.0/shell-approval-80x24', { state: 'waiting_approval', approval: { certain: false } }],
  // Gemini CLI retrying a failing model without end (ui.errorVerbosity "low", its default) draws
  // only its spinner: nothing to read. The profile sets "full", and Gemini asks instead, which the
  // policy answers Stop; the error then shows.
  ['gemini', 'gemini-0.61.0/retry-storm-120x40', { state: 'thinking' }],
  ['gemini', 'gemini-0.61.0/keep-trying-dialog-80x24', { state: 'waiting_input', rule: 'dialog:keep_trying' }],
  ['gemini', 'gemini-0.61.0/keep-trying-dialog-120x40', { state: 'waiting_input', rule: 'dialog:keep_trying' }],
  ['gemini', 'gemini-0.61.0/error500-stopped-120x40', { state: 'error', message: /API Error: .*"code":500/ }],

  // 80x24: the command word-wrapped in the box, whole in the conversation above; 200x50: the side
  // panel's folder and version drawn on the prompt's rows.
  ...SIZES.map((s): [string, string, Expected] => ['opencode', `opencode-1.18.33/shell-approval-${s}`, { state: 'waiting_approval', approval: { certain: true, tool: 'shell', command: SLOW } }]),
  ['opencode', 'opencode-1.18.33/blank-line-command-approval-120x40', { state: 'waiting_approval', approval: { certain: false } }],
  ['opencode', 'opencode-1.18.33/retrying-first-80x24', { state: 'thinking' }],
  ...SIZES.map((s): [string, string, Expected] => ['opencode', `opencode-1.18.33/retrying-again-${s}`, { state: 'error', rule: RETRYING_RULE, line: /scripted server failure for the capture \[retrying in \d+s/, message: /^scripted server failure for the capture \[retrying in \d+s attempt #2\]$/ }]),
  // The message without the side panel beside it at 200 columns.
  ...SIZES.map((s): [string, string, Expected] => ['opencode', `opencode-1.18.33/error400-${s}`, { state: 'error', message: /^[^┃]*scripted bad request for the capture(?![^]*(Context|tokens|OpenCode 1))/ }]),
];

describe('captured screens of the newest CLIs', () => {
  it.each(cases)('%s %s', (agent, file, expected) => {
    const version = /-(\d[\w.]*)\//.exec(file)?.[1];
    const screens = catalog.get(agent).screensFor(version);
    const screen = loadScreen(path.join(FIXTURES_DIR, 'cases', `${file}.txt`));
    const read = classifyScreen(screens, screen);
    expect(read.state, JSON.stringify(read.evidence)).toBe(expected.state);
    if (expected.rule) expect(read.evidence?.rule).toBe(expected.rule);
    if (expected.line) expect(read.evidence?.line).toMatch(expected.line);
    if (expected.message) expect(errorText(screens, { lines: screen.lines, ansiLines: screen.ansiLines ?? [] }, read.evidence?.row, '')).toMatch(expected.message);
    if (!expected.approval) return;
    const approval = parseApproval(screens, screen);
    expect(approval?.certain, JSON.stringify(approval?.doubts)).toBe(expected.approval.certain);
    if (expected.approval.tool) expect(approval?.tool).toBe(expected.approval.tool);
    if (typeof expected.approval.command === 'string') expect(approval?.command).toBe(expected.approval.command);
    else if (expected.approval.command) expect(approval?.command).toMatch(expected.approval.command);
    if (expected.approval.path) expect(approval?.path).toMatch(expected.approval.path);
    // A sure read always offers the answers a policy picks from.
    if (approval?.certain) expect(approval.options.some((o) => o.meaning === 'allow_once')).toBe(true);
  });
});

describe('a retry notice (constructed rows, OpenCode 1.18.33 patterns)', () => {
  const screens = catalog.get('opencode').screensFor('1.18.33');
  const read = (rows: string[]): string | null => classifyScreen(screens, { lines: ['  ┃  fail please', '', ...rows, '   ctrl+p commands'] }).state;
  it('counts the attempt, not another number on the row, also when it wrapped', () => {
    expect(read(['   ■■■⬝⬝⬝⬝⬝ see issue #12 [retrying in 2s attempt #1]   esc interrupt'])).toBe('thinking');
    expect(read(['   ■■■⬝⬝⬝⬝⬝ see issue #1 [retrying in 2s attempt #5]   esc interrupt'])).toBe('error');
    expect(read(['   ■■■⬝⬝⬝⬝⬝ a long message from the provider [retrying in 2s attempt', '   #3]   esc interrupt'])).toBe('error');
  });
});
