import { writeHomeFiles, defineProfile } from '../profile.js';

/** The newest version the patterns below were recorded against (the one the tests pin). */
const CLAUDE_VERSION = '2.1.332';

/** Claude Code (`@anthropic-ai/claude-code`). */
export const claude = defineProfile(
  {
    name: 'claude',
    display_name: 'Claude Code',
    binary: { names: ['claude'], env: 'SWITCHBOARD_CLAUDE_BIN', npm_package: '@anthropic-ai/claude-code' },
    // Ask before tools: Switchboard answers approvals by its own policy.
    interactive_args: ['--permission-mode', 'default'],
    headless_args: ['-p', '{prompt}', '--output-format', 'stream-json', '--verbose'],
    // Claude Code keeps /tmp/claude-<uid> (a folder per working folder) and /tmp/cc-socks whatever
    // TMPDIR says; this moves both into the agent's private temporary folder.
    temp_env: ['CLAUDE_CODE_TMPDIR'],
    screens: [
      // 2.1.197: the command under its heading, then the description Claude always fills ("Run
      // shell command" when the model gave none). Kept so that version's screens stay readable.
      {
        versions: '>=2.1.0 <2.1.300',
        recorded: ['2.1.197'],
        idle: [{ pattern: '^\\s*\\? for shortcuts', rows: 3 }],
        busy: [{ pattern: 'esc to interrupt', rows: 3 }, { pattern: '^[·✢✳✶✻✽*] \\S.*…', rows: 8 }],
        approval: ['^\\s*Do you want to (proceed|create|make this edit|overwrite)'],
        // No recording tells a running tool from thinking: after an approval the collapsed tool
        // group keeps its "Reading 1 file…" header while the model is already answering
        // (claude-tui-after-approve-thinking), so nothing on these screens marks `executing`.
        executing: [],
        // No recorded screen shows a question that is not a tool approval.
        question: [],
        error: ['API Error', '^\\s*⎿\\s+(Error|API Error)'],
        reply: ['^● '],
        approval_request: {
          kinds: [
            // " Bash command", a blank row, the command's rows, the description's row, a blank row,
            // the question: the whole block, so a row of any other kind leaves the prompt unread.
            { kind: 'shell', pattern: '^ (?<tool>Bash) command *\\n(?: *\\n)?(?<command>(?: {3}\\S.*\\n)+?) {3}\\S.*\\n *\\n', gutter: '^ {3}' },
            { kind: 'file_write', tool_name: 'Write', pattern: '^ Create file *\\n (?<path>\\S.*)\\n╌{8,}\\n(?:.*\\n)*?╌{8,}$' },
            { kind: 'file_edit', tool_name: 'Edit', pattern: '^ Edit file *\\n (?<path>\\S.*)\\n╌{8,}\\n(?:.*\\n)*?╌{8,}$' },
            { kind: 'other', pattern: '^ Do you want to ' },
          ],
          options: { layout: 'list', pattern: '^ (?<selected>❯)? *(?<number>\\d+)\\. +(?<label>.*\\S)', continuation: '^ {6}(?<label>\\S.*)' },
          // The number chooses at once ("1" is what the end-to-end tests press); Esc also says no.
          select: ['number'],
          witnesses: [
            '^● Bash\\((?<command>[^\\n]*(?:\\n {6}[^\\n]*)*)\\)$',
            '^\\s+⎿\\s+\\$ (?<command>.*\\S)',
            '^● (?:Write|Update|Edit)\\((?<path>[^\\n]*)\\)$',
            '^ Do you want to (?:create|make this edit to|overwrite) (?<path>.+)\\?$',
          ],
        },
        dialogs: [
          {
            id: 'trust_folder',
            when: ['Is this a project you created or one you trust', 'Yes, I trust this folder'],
            decides: 'trust_folder',
            accept: { choose: 'I trust this folder' },
            decline: { choose: '^No\\b' },
          },
          {
            id: 'use_api_key',
            when: ['Detected a custom API key', 'Do you want to use this API key'],
            decides: 'use_env_api_key',
            accept: { choose: '^Yes$' },
            decline: { choose: '^No\\b' },
          },
        ],
      },
      // 2.1.330: a footer before "? for shortcuts" ("⏸ manual mode on · …"); menus without numbers
      // in dialogs ("❯ No, exit" listed first); the command between dashed rules, a tip and the
      // description above it, a " │ " gutter on each row of a multi-row command.
      {
        versions: '>=2.1.300 <2.2',
        recorded: ['2.1.330', '2.1.332'],
        idle: [{ pattern: '\\? for shortcuts', rows: 3 }],
        busy: [{ pattern: 'esc to interrupt', rows: 3 }, { pattern: '^[·✢✳✶✻✽*] \\S.*…', rows: 8 }],
        approval: ['^\\s*Do you want to (proceed|create|make this edit|overwrite)'],
        executing: [],
        question: [],
        error: ['API Error', '^\\s*⎿\\s+(Error|API Error)'],
        reply: ['^● '],
        approval_request: {
          kinds: [
            // The heading, then a tip and the description (each wrapped on a narrow terminal), then the
            // command between dashed rules: only what is between the rules is the command. A fake rule
            // in the description leaves the real command's rows unplaced, and the witness disagrees.
            { kind: 'shell', pattern: '^ (?<tool>Bash) command *\\n(?:.*\\n){0,6}?╌{8,}\\n(?<command>(?: .*\\n)+?)╌{8,}$', gutter: '^ (?:│(?: |$))?' },
            { kind: 'file_write', tool_name: 'Write', pattern: '^ Create file *\\n (?<path>\\S.*)\\n╌{8,}\\n(?:.*\\n)*?╌{8,}$' },
            { kind: 'file_edit', tool_name: 'Edit', pattern: '^ Edit file *\\n (?<path>\\S.*)\\n╌{8,}\\n(?:.*\\n)*?╌{8,}$' },
            // " Tool use", the server and the tool as it names them ("switchboard — Tasks Add Tool: (MCP)"),
            // the call's arguments between dashed rules, then "About the …:" and the tool's description
            // on " │ " rows: every row named, so any other leaves the prompt unsure.
            { kind: 'mcp', pattern: '^ Tool use *\\n (?<tool>\\S.*?): \\(MCP\\) *\\n╌{8,}\\n(?:.*\\n)*?╌{8,}\\n About the .*: *(?:\\n │ .*)*' },
            { kind: 'other', pattern: '^ Do you want to ' },
          ],
          options: { layout: 'list', pattern: '^ (?<selected>❯)? *(?<number>\\d+)\\. +(?<label>.*\\S)', continuation: '^ {6}(?<label>\\S.*)' },
          select: ['number'],
          // "Yes, and switch to auto mode": more than this call, never a policy's pick.
          meanings: [{ pattern: 'switch to auto mode', meaning: null }],
          witnesses: [
            '^● Bash\\((?<command>[^\\n]*(?:\\n {6}[^\\n]*)*)\\)$',
            '^● (?:Write|Update|Edit)\\((?<path>[^\\n]*)\\)$',
            '^ Do you want to (?:create|make this edit to|overwrite) (?<path>.+)\\?$',
          ],
        },
        dialogs: [
          {
            id: 'trust_folder',
            when: ['Is this a project you created or one you trust', 'Yes, I trust this folder'],
            decides: 'trust_folder',
            accept: { choose: 'I trust this folder' },
            decline: { choose: '^No\\b' },
          },
          {
            id: 'use_api_key',
            when: ['Detected a custom API key', 'Do you want to use this API key'],
            decides: 'use_env_api_key',
            accept: { choose: '^Yes$' },
            decline: { choose: '^No\\b' },
          },
          {
            id: 'fullscreen_renderer',
            when: ['Try the new fullscreen renderer'],
            decides: 'try_new_feature',
            accept: { choose: '^Yes' },
            decline: { choose: '^(Not now|No)\\b' },
          },
        ],
      },
    ],
    approval_keys: { allow_once: ['1'], allow_always: ['2'], deny: ['Escape'] },
    transcript: { format: 'claude-jsonl', dir: '.claude/projects/{cwd_dashed}', pattern: '*.jsonl' },
    // Kept up to date while it runs: "busy", "idle", or "waiting" with waitingFor ("permission prompt"
    // while an approval is up), as seen with 2.1.197.
    status_file: { path: '.claude/sessions/{pid}.json', field: 'status', idle: ['idle'], busy: ['busy'], waiting: ['waiting'] },
  },
  (s) => {
    // Onboarding (connectivity check, theme, login) cannot pass offline: mark it done. Folder trust
    // and the API key question are left for the first-run policy to answer on screen.
    writeHomeFiles(s.home, {
      '.claude.json': JSON.stringify({ hasCompletedOnboarding: true, lastOnboardingVersion: CLAUDE_VERSION, theme: 'dark', fullscreenUpsellSeenCount: 3 }, null, 2),
    });
    return {
      args: [],
      env: {
        ANTHROPIC_BASE_URL: s.modelUrl,
        ANTHROPIC_API_KEY: 'sk-ant-switchboard-scripted',
        DISABLE_AUTOUPDATER: '1',
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
        DISABLE_TELEMETRY: '1',
        DISABLE_ERROR_REPORTING: '1',
        CLAUDE_CODE_MAX_RETRIES: '0',
        // Otherwise it clones its plugin marketplace from GitHub at start (seen with strace).
        CLAUDE_CODE_DISABLE_OFFICIAL_MARKETPLACE_AUTOINSTALL: '1',
      },
    };
  },
);
