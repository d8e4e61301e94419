import path from 'node:path';
import { writeHomeFiles, defineProfile } from '../profile.js';
import type { ScreensInput } from '../schema.js';

const toml = (s: string): string => JSON.stringify(s);

/** What Codex 0.160 to 0.169 draw (recorded with 0.169.0); the newer set below builds on it. */
const SCREENS_0_169 = {
  idle: [{ pattern: '\\? for shortcuts', rows: 3 }],
  busy: [{ pattern: 'esc to interrupt', rows: 6 }],
  // The last: an MCP tool's approval (0.169, seen live with Switchboard's `ask`), a form with
  // "Field 1/1" above the question and "enter to submit | esc to cancel" below the options.
  approval: ['Would you like to (run the following command|make the following edits|grant)', 'Press enter to confirm or esc to cancel', '^ *Allow the .+ MCP server to run tool "'],
  // The exec cell's header reads "Running <command>" until the command ends and "Ran" after
  // (both recorded: codex-tui-approval, codex-tui-after-tool). No recording catches a command
  // mid-run (the scripted ones end in milliseconds). Plain text: an agent message that starts
  // "• Running" would match too (the cell's "Running" is bold, but state tracking reads plain rows).
  executing: ['^[•◦] Running \\S'],
  // No recorded screen shows a question that is not a tool approval (request_user_input).
  question: [],
  error: ['^\\s*■ ', 'stream error', 'unexpected status \\d{3}', 'error sending request'],
  reply: ['^• '],
  chrome: ['^\\s+Worked for '],
  interrupted: ['■ Conversation interrupted'],
  approval_request: {
    kinds: [
      // The question, the environment and the model's reason, then "$ <command>": every row
      // named, so anything else between them leaves the prompt unread (and asked).
      { kind: 'shell', pattern: '^ *Would you like to run the following command\\?\\n(?: *\\n| *Environment: .*\\n| *Reason: .*\\n)*? *\\$ (?<command>.*\\S)' },
      // The question, then the call's arguments, one "name: value" row each (0.171: "  title: write notes.md").
      // The tool is named with its server ('switchboard MCP server to run tool "ask"'): a policy rule
      // for one server's tool must not allow another server's tool of the same name.
      { kind: 'mcp', pattern: '^ *Allow the (?<tool>\\S+ MCP server to run tool "[^"]+")\\?(?:\\n {2}[A-Za-z_][\\w-]*: .*|\\n *$)*' },
      { kind: 'other', pattern: '^ *Would you like to ' },
    ],
    options: {
      layout: 'list',
      // The MCP tool form indents its options, the marker too ("  › 1. Allow").
      pattern: '^ *(?<selected>›)? *(?<number>\\d+)\\. +(?<label>.*\\S)',
      // Not recorded: a long option (option 2 quotes the command) wraps under its label.
      continuation: '^ {5}(?<label>\\S.*)',
      shortcut: { pattern: ' *\\((?<key>[a-z]+)\\)$', strip: true },
    },
    // "y", "p" and Esc, as the labels say (and as approval_keys has them). The MCP tool form
    // shows no key beside its options and says "enter to submit": arrows to the option, then Enter.
    select: ['shortcut', 'arrows'],
    // The exec cell above the prompt names the same command.
    witnesses: ['^[•◦] Running (?<command>.*\\S)'],
  },
  dialogs: [
    {
      id: 'trust_folder',
      when: ['Trust this folder\\?', 'Trust and continue'],
      decides: 'trust_folder',
      accept: { choose: '^Trust and continue' },
      decline: { choose: '^(Back|Quit|Exit|No)\\b' },
    },
    {
      id: 'model_migration',
      when: ['Try new model', 'Use existing model'],
      decides: 'keep_current_model',
      options: { pattern: '^(?<selected>›)? *\\d+\\. +(?<label>.*\\S)' },
      accept: { choose: '^Use existing model' },
      decline: { choose: '^Try new model' },
    },
  ],
} satisfies Omit<ScreensInput, 'versions'>;

/** OpenAI Codex CLI (`@openai/codex`). */
export const codex = defineProfile(
  {
    name: 'codex',
    display_name: 'Codex CLI',
    binary: { names: ['codex'], env: 'SWITCHBOARD_CODEX_BIN', npm_package: '@openai/codex' },
    // --no-daemon: otherwise the TUI starts an app-server daemon that outlives it.
    interactive_args: ['--no-daemon'],
    headless_args: ['exec', '--json', '--skip-git-repo-check', '{prompt}'],
    screens: [
      { versions: '>=0.160.0 <0.170.0', recorded: ['0.169.0'], ...SCREENS_0_169 },
      {
        versions: '>=0.170.0 <1',
        recorded: ['0.171.0'],
        ...SCREENS_0_169,
        // Its errors and notices start at the row's first column; a reply's rows are indented, so a
        // model writing "■ Conversation interrupted" in its reply does not end the turn.
        error: ['^■ ', 'stream error', 'unexpected status \\d{3}', 'error sending request'],
        interrupted: ['^■ Conversation interrupted'],
        // 0.171 draws no spinner while a reply streams, and closes every finished turn, however short,
        // with "Worked for <1s • 13:42" under it: a reply under the latest prompt without that row
        // (or an error, or the refusal notice) is a turn still going. The end row is matched in full,
        // so a reply's own text seldom looks like it; a reply's rows go on indented by two, never
        // with a slash command's "/name - …" list.
        turn: { end: ['^ {2}Worked for [<\\dhms ]+ • \\d{1,2}:\\d{2}(?::\\d{2})?\\s*$'], prompt: ['^› \\S'], continued: ['^ {2}[^\\s/]'] },
        approval_request: {
          ...SCREENS_0_169.approval_request,
          kinds: [
            ...SCREENS_0_169.approval_request.kinds.slice(0, -1),
            // A file written outside the writable roots: "Would you like to make the following edits?",
            // "Description: …", then "Destination:" and the path, on its own row(s) when it is long
            // (wrapped at the screen's edge, character by character, so its rows join as they are).
            { kind: 'file_edit', tool_name: 'apply_patch', pattern: '^ *Would you like to make the following edits\\?\\n(?: *\\n| *Description: .*\\n| *Reason: .*\\n)*? *Destination:\\s+(?<path>\\S+(?:\\n {2}\\S+)*)$', gutter: '^ {2}' },
            ...SCREENS_0_169.approval_request.kinds.slice(-1),
          ],
          witnesses: [...SCREENS_0_169.approval_request.witnesses, '^• (?:Added|Edited|Deleted) (?<path>\\S+)'],
        },
      },
    ],
    approval_keys: { allow_once: ['y'], allow_always: ['p'], deny: ['Escape'] },
    input: { separate_enter: true, echo_timeout_ms: 1_000, enter_delay_ms: 150, paste_multiline: true },
    transcript: { format: 'codex-rollout', dir: '.codex/sessions', pattern: '**/rollout-*.jsonl' },
  },
  (s) => {
    const config = [
      'model = "gpt-5.5"',
      'model_provider = "scripted"',
      'approval_policy = "on-request"',
      'sandbox_mode = "workspace-write"',
      'check_for_update_on_startup = false',
      '',
      '[analytics]',
      'enabled = false',
      '',
      '[tui]',
      'screen_reader_detection_done = true',
      '',
      // The shell tool's commands must reach the daemon (`lask --async …` from Codex): the
      // workspace-write sandbox otherwise refuses every connect, even to the daemon's Unix socket
      // (Codex 0.169: "connect EPERM …/switchboard.sock"). Files stay confined to the workspace.
      '[sandbox_workspace_write]',
      'network_access = true',
      '',
      '[model_providers.scripted]',
      'name = "Scripted"',
      `base_url = ${toml(`${s.modelUrl}/v1`)}`,
      'env_key = "SWITCHBOARD_SCRIPTED_KEY"',
      'wire_api = "responses"',
      'request_max_retries = 0',
      'stream_max_retries = 0',
      '',
      // The nudge to move from the configured model to a newer one, answered up front as the
      // first-run policy answers it (keep the configured model: the sandbox's model server serves
      // that one). Seconds after start it opened over a task being pasted, and Codex 0.171, closing
      // it, gave up discarding the pasted input and exited ("timed out discarding buffered terminal
      // input"). A pane on the user's own configuration still gets it, answered by the responder.
      '[notice.model_migrations]',
      '"gpt-5.5" = "gpt-6-sol"',
      '',
    ].join('\n');
    writeHomeFiles(s.home, { '.codex/config.toml': config });
    return { args: [], env: { SWITCHBOARD_SCRIPTED_KEY: 'sk-switchboard-scripted', CODEX_HOME: path.join(s.home, '.codex') } };
  },
);
