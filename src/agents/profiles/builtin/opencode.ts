import { copyFileSync, existsSync, lstatSync, mkdirSync, symlinkSync, unlinkSync } from 'node:fs';
import path from 'node:path';
import { defineProfile } from '../profile.js';

/**
 * OpenCode installs its plugin package into ~/.config/opencode from the npm registry whenever it
 * starts with a fresh HOME. Given a directory where that package is already installed
 * ($SWITCHBOARD_OPENCODE_PLUGIN_DIR), the sandbox HOME is seeded from it, so OpenCode starts offline.
 */
function seedPlugin(home: string, env: NodeJS.ProcessEnv): void {
  const source = env.SWITCHBOARD_OPENCODE_PLUGIN_DIR;
  if (!source || !existsSync(path.join(source, 'node_modules', '@opencode-ai', 'plugin'))) return;
  const config = path.join(home, '.config', 'opencode');
  mkdirSync(config, { recursive: true });
  for (const file of ['package.json', 'package-lock.json']) {
    if (existsSync(path.join(source, file))) copyFileSync(path.join(source, file), path.join(config, file));
  }
  // A link, not a copy: the tree is 60 MB. A junction needs no privileges on Windows. A link left
  // by an earlier run (perhaps to a tree since removed) is replaced; a real folder is left alone.
  const link = path.join(config, 'node_modules');
  const existing = lstatOrUndefined(link);
  if (existing?.isSymbolicLink()) unlinkSync(link);
  if (!existing || existing.isSymbolicLink()) symlinkSync(path.join(source, 'node_modules'), link, 'junction');
}

function lstatOrUndefined(file: string): ReturnType<typeof lstatSync> | undefined {
  try {
    return lstatSync(file);
  } catch {
    return undefined;
  }
}

/** OpenCode (`opencode-ai`). */
export const opencode = defineProfile(
  {
    name: 'opencode',
    display_name: 'OpenCode',
    binary: { names: ['opencode'], env: 'SWITCHBOARD_OPENCODE_BIN', npm_package: 'opencode-ai' },
    interactive_args: [],
    headless_args: ['run', '--format', 'json', '{prompt}'],
    acp_args: ['acp'],
    screens: [
      {
        versions: '>=1.10.0 <2',
        recorded: ['1.18.33'],
        idle: [{ pattern: 'ctrl\\+p commands', rows: 3 }],
        busy: [{ pattern: 'esc interrupt', rows: 3 }],
        approval: ['△ Permission required', 'Allow once\\s+Allow always\\s+Reject'],
        // OpenCode marks an error only by colour: the message's left border is red (the default
        // theme's error colour) where a user's message has a blue one. Retries say so in words.
        error: [{ pattern: '\\x1b\\[0;38;2;224;108;117(;48;2;\\d+;\\d+;\\d+)?m┃', ansi: true }, 'retrying attempt #\\d+'],
        reply_end: ['^ +▣  \\S'],
        // A failed request retried with backoff, in the footer: "<message> [retrying in 8s attempt #4]"
        // (1.18.33, model answering 500), wrapped on a narrow terminal.
        retrying: ['\\[retrying in \\d+\\w*\\s+attempt\\s+#\\d+'],
        // A shell call not yet finished is one unboxed row, "$ <command>" (recorded while it waits
        // for approval: opencode-tui-approval); once it has output it becomes a ┃ block with the
        // output, as when done. So this catches a running command only until it prints something.
        executing: ['^ +\\$ \\S'],
        // No recorded screen shows a question that is not a tool approval.
        question: [],
        approval_request: {
          kinds: [
            // A command longer than the box is word-wrapped under its "$ ", each row behind the bar and
            // two spaces (seen at 80x24): the rows right under it, up to the first blank one.
            { kind: 'shell', tool_name: 'bash', pattern: '^ *┃ +△ Permission required *\\n *┃ +# .*\\n(?: *┃ *\\n)* *┃ +\\$ (?<command>.*\\S(?:\\n *┃ {2}\\S.*\\S)*)', gutter: '^ *┃ {2}', wrap: 'word' },
            // A write or an edit: "→ Edit b.txt", then the diff (recorded by doctor and the e2e file tests).
            { kind: 'file_edit', tool_name: 'edit', pattern: '^ *┃ +△ Permission required *\\n *┃ +→ Edit (?<path>.*\\S) *(?:\\n *┃.*)*$' },
            // Before a tool may touch a folder outside the project, OpenCode asks for the folder itself.
            { kind: 'other', tool_name: 'external_directory', pattern: '^ *┃ +△ Permission required *\\n *┃ +← Access external directory (?<path>.*\\S)' },
            { kind: 'other', pattern: '^ *┃ +△ Permission required' },
          ],
          options: {
            layout: 'inline',
            // "Allow once   Allow always   Reject", then the key hints far to the right.
            pattern: '^ *┃ +(?<options>Allow once\\b.*?\\S)(?: {6,}\\S.*)? *$',
            // The highlighted option has the theme's accent as background; the others have none.
            highlight: '48;2;245;167;66m(?: |\\x1b\\[[0-9;]*m)*(?<label>[A-Za-z][^\\x1b]*)',
          },
          select: ['arrows'],
          // The call as the conversation shows it above the prompt, "$ <command>" unboxed, wrapped
          // character by character at the screen's edge and its rows indented under the command.
          witnesses: ['^ {3,}\\$ (?<command>\\S.*(?:\\n {5,}\\S.*)*)$'],
        },
        dialogs: [],
      },
    ],
    // "Allow once" is selected first; the others are to its right.
    approval_keys: { allow_once: ['Enter'], allow_always: ['Right', 'Enter'], deny: ['Right', 'Right', 'Enter'] },
    input: { separate_enter: true, echo_timeout_ms: 1_500, enter_delay_ms: 150, paste_multiline: true, submit_patience_ms: 60_000 },
    transcript: { format: 'opencode-sqlite', dir: '.local/share/opencode', pattern: 'opencode.db' },
  },
  (s) => {
    seedPlugin(s.home, s.env ?? process.env);
    const config = {
      autoupdate: false,
      share: 'disabled',
      model: 'scripted/scripted-model',
      small_model: 'scripted/scripted-model',
      // OpenCode runs tools without asking by default; ask, so Switchboard's policy decides.
      permission: { bash: 'ask', edit: 'ask' },
      provider: {
        scripted: {
          npm: '@ai-sdk/openai-compatible',
          name: 'Scripted',
          options: { baseURL: `${s.modelUrl}/v1`, apiKey: 'sk-switchboard-scripted' },
          models: { 'scripted-model': { name: 'Scripted Model', tool_call: true, limit: { context: 128_000, output: 8_192 } } },
        },
      },
    };
    return {
      args: [],
      env: {
        OPENCODE_CONFIG_CONTENT: JSON.stringify(config),
        OPENCODE_DISABLE_AUTOUPDATE: '1',
        OPENCODE_DISABLE_MODELS_FETCH: '1',
        OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
        OPENCODE_DISABLE_SHARE: '1',
      },
    };
  },
);
