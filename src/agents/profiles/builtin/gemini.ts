import { writeHomeFiles, defineProfile } from '../profile.js';

/** Gemini CLI (`@google/gemini-cli`). */
export const gemini = defineProfile(
  {
    name: 'gemini',
    display_name: 'Gemini CLI',
    binary: { names: ['gemini'], env: 'SWITCHBOARD_GEMINI_BIN', npm_package: '@google/gemini-cli' },
    interactive_args: [],
    // --skip-trust: headless Gemini exits (code 55) in a folder it was not told to trust; the caller chose it.
    headless_args: ['-p', '{prompt}', '--output-format', 'stream-json', '--skip-trust'],
    // No --skip-trust here: in ACP mode an untrusted folder still works (project hooks and agents
    // stay off), and every tool call is asked for, which is what Switchboard's policy answers.
    acp_args: ['--acp'],
    // Checked before its settings and trustedFolders.json; "false" is how GEMINI_RESTRICTED_MODE runs.
    trust_env: { accept: { GEMINI_CLI_TRUST_WORKSPACE: 'true' }, decline: { GEMINI_CLI_TRUST_WORKSPACE: 'false' } },
    screens: [
      {
        versions: '>=0.50.0 <1',
        recorded: ['0.61.0'],
        idle: ['Type your message or @path/to/file'],
        busy: [{ pattern: '\\(esc to cancel', rows: 16 }],
        approval: ['Allow execution of', 'Apply this change\\?', 'Allow (once|for this session)'],
        // No recording shows a tool running: the tool box reads "? Shell" while it asks and "✓ Shell"
        // once done (gemini-tui-after-approve already shows ✓ beside "Thinking...").
        executing: [],
        // No recorded screen shows a question that is not a tool approval.
        question: [],
        error: ['\\[API Error', 'API Error:', '✕ '],
        reply: ['^✦ '],
        approval_request: {
          kinds: [
            // "│ ? Shell  <command>" and the command again in an inner box (taken from the box).
            { kind: 'shell', pattern: '^│ \\? (?<tool>Shell) .*\\n│ ╭─*╮ │\\n│ │ (?<command>.*?) *│ │$' },
            { kind: 'shell', pattern: '^│ \\? (?<tool>Shell) +(?<command>.*?) *│$' },
            // "? WriteFile  Writing to b.txt", then the new content in an inner box (recorded by doctor
            // and the file-edit e2e test), then "Apply this change?".
            { kind: 'file_write', pattern: '^│ \\? (?<tool>WriteFile) +Writing to (?<path>.*?) *│(?:\\n│ [╭│╰].*│)*$' },
            // "? Edit  a.txt: alpha => beta", the diff in an inner box. The path ends at the first ": "
            // and no other ": " may come before " => ": a path with ": " in it is not read (asked).
            { kind: 'file_edit', pattern: '^│ \\? (?<tool>Edit) +(?<path>[^\\s:│]+): (?:[^:│]|:[^ ])* => .*│(?:\\n│ [╭│╰].*│)*$' },
            { kind: 'other', pattern: '^│ \\? (?<tool>\\S+)' },
          ],
          options: {
            layout: 'list',
            pattern: '^│ (?<selected>●)? *(?<number>\\d+)\\. +(?<label>.*?) *│$',
            shortcut: { pattern: ' *\\((?<key>[a-z]+)\\)$', strip: true },
          },
          // "1" and "2" choose at once; "No, suggest changes (esc)" is Esc (approval_keys has the same).
          select: ['shortcut', 'number'],
          // Hints Gemini adds under a shell command it could run in more than one way.
          decorations: ['^Redirection detected\\.', 'To auto-accept, press Shift\\+Tab'],
        },
        dialogs: [
          {
            // A model that keeps failing (500, overloaded), with ui.errorVerbosity "full" (0.61):
            // "We are currently experiencing high demand. … ● 1. Keep trying  2. Stop". Stop ends
            // the turn with the error on screen ("✕ [API Error: …]").
            id: 'keep_trying',
            when: ['We are currently experiencing high demand', 'Keep trying'],
            decides: 'keep_retrying',
            accept: { choose: '^Keep trying' },
            decline: { choose: '^Stop' },
          },
          {
            id: 'trust_folder',
            when: ['Do you trust the files in this folder\\?', 'Trust folder'],
            decides: 'trust_folder',
            accept: { choose: '^Trust folder' },
            decline: { choose: "^Don't trust" },
          },
          {
            // Switchboard's own prompt folder, added with --include-directories for long prompts.
            id: 'trust_added_folders',
            when: ['Do you trust the following folders being added to this workspace'],
            decides: 'trust_folder',
            accept: { choose: '^Yes$' },
            decline: { choose: '^No$' },
          },
          {
            // After choosing "Use Gemini API Key", the key from the environment is filled in.
            id: 'enter_api_key',
            when: ['Enter Gemini API Key', 'Press Enter to submit'],
            decides: 'use_env_api_key',
            accept: ['Enter'],
            decline: ['Escape'],
          },
          {
            id: 'choose_auth',
            when: ['How would you like to authenticate', 'Use Gemini API Key'],
            decides: 'use_env_api_key',
            accept: { choose: '^Use Gemini API Key' },
            decline: ['Escape'],
          },
        ],
      },
    ],
    approval_keys: { allow_once: ['1'], allow_always: ['2'], deny: ['Escape'] },
    input: {
      separate_enter: true,
      echo_timeout_ms: 1_000,
      enter_delay_ms: 150,
      paste_multiline: true,
      // Measured on 0.61.0: a 20 KB paste takes it about 10 s to send, a 200 KB one it never sends
      // (the input box empties, no request goes out, and a 408 shows two minutes later). An @ file
      // reference of the same 200 KB reaches the model in under 3 s, whole once its lines stay
      // within the 2,000 characters Gemini reads of a line (DEFAULT_MAX_LINES_TEXT_FILE and
      // MAX_LINE_LENGTH_TEXT_FILE are both 2e3 in its bundle; longer lines are cut, with a note).
      long_prompt: { above_chars: 8_000, template: '@{path}', launch_args: ['--include-directories', '{dir}'], max_line_chars: 1_900 },
    },
    transcript: { format: 'gemini-chat', dir: '.gemini/tmp/{project}/chats', pattern: 'session-*.jsonl' },
  },
  (s) => {
    // An API key alone is not enough: the auth type must be chosen in settings, or the CLI stops
    // with "Invalid auth method selected". Folder trust is left to the first-run policy.
    writeHomeFiles(s.home, {
      '.gemini/settings.json': JSON.stringify(
        {
          security: { auth: { selectedType: 'gemini-api-key' } },
          // One attempt: a scripted error should show at once, not after minutes of retries.
          general: { enableAutoUpdate: false, enableAutoUpdateNotification: false, maxAttempts: 1 },
          // With the default ("low"), a model failing with 500 is retried by the TUI's fallback
          // handler without end or pause (0.61: about 9,500 requests a minute, nothing on screen);
          // "full" asks instead ("Keep trying / Stop"), which the policy answers (keep_retrying).
          ui: { errorVerbosity: 'full' },
          privacy: { usageStatisticsEnabled: false },
          telemetry: { enabled: false },
          ide: { enabled: false, hasSeenNudge: true },
        },
        null,
        2,
      ),
    });
    // A pinned model skips the model router's extra classifier request.
    return { args: ['-m', 'gemini-2.5-flash'], env: { GEMINI_API_KEY: 'switchboard-scripted', GOOGLE_GEMINI_BASE_URL: s.modelUrl } };
  },
);
