import { writeHomeFiles, defineProfile } from '../profile.js';

/** The version the patterns below were recorded against. */
export const CLAUDE_VERSION = '2.1.197';

/** Claude Code (`@anthropic-ai/claude-code`). */
export const claude = defineProfile(
  {
    name: 'claude',
    display_name: 'Claude Code',
    binary: { names: ['claude'], env: 'SWITCHBOARD_CLAUDE_BIN' },
    // Ask before tools: Switchboard answers approvals by its own policy.
    interactive_args: ['--permission-mode', 'default'],
    headless_args: ['-p', '{prompt}', '--output-format', 'stream-json', '--verbose'],
    screens: [
      {
        versions: '>=2.1.0 <3',
        recorded: ['2.1.197'],
        idle: [{ pattern: '^\\s*\\? for shortcuts', rows: 3 }],
        busy: [{ pattern: 'esc to interrupt', rows: 3 }, { pattern: '^[·✢✳✶✻✽*] \\S.*…', rows: 8 }],
        approval: ['^\\s*Do you want to (proceed|create|make this edit|overwrite)', '^\\s*❯ 1\\. Yes'],
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
            // " Bash command", a blank row, then the command (its first row; the description follows).
            { kind: 'shell', pattern: '^ (?<tool>Bash) command *\\n(?: *\\n)? +(?<command>\\S.*)' },
            // Documented, not recorded: "Create file / ../fake_written.txt / (diff) / Do you want to create …?".
            { kind: 'file_write', tool_name: 'Write', pattern: '^ Create file *\\n(?: *\\n)? *(?<path>\\S.*)' },
            { kind: 'other', pattern: '^ Do you want to ' },
          ],
          options: { layout: 'list', pattern: '^ (?<selected>❯)? *(?<number>\\d+)\\. +(?<label>.*\\S)' },
          // The number chooses at once ("1" is what the end-to-end tests press); Esc also says no.
          select: ['number'],
          // 2.1.330 offers "3. Yes, and switch to auto mode": more than this call, never a policy's pick.
          meanings: [{ pattern: 'switch to auto mode', meaning: null }],
        },
        dialogs: [
          {
            id: 'trust_folder',
            when: ['Is this a project you created or one you trust', 'Yes, I trust this folder'],
            decides: 'trust_folder',
            accept: ['Enter'],
            decline: ['Escape'],
          },
          {
            id: 'use_api_key',
            when: ['Detected a custom API key', 'Do you want to use this API key'],
            decides: 'use_env_api_key',
            options: { pattern: '^ +(?<selected>❯)? *\\d+\\. +(?<label>.*\\S)' },
            accept: { choose: '^Yes$' },
            decline: { choose: '^No\\b' },
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
      },
    };
  },
);
