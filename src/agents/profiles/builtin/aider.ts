import { defineProfile } from '../profile.js';

/**
 * Aider. It is a Python program (pip), which this project cannot install where its tests run, so
 * its screens come from aider's documented prompts and its tests run against a stand-in
 * (test/fixtures/aider-standin) that reproduces them.
 */
export const aider = defineProfile(
  {
    name: 'aider',
    display_name: 'Aider',
    binary: { names: ['aider'], env: 'SWITCHBOARD_AIDER_BIN' },
    interactive_args: ['--no-auto-commits', '--no-check-update', '--no-show-release-notes', '--analytics-disable'],
    headless_args: ['--message', '{prompt}', '--yes-always', '--no-auto-commits', '--no-check-update'],
    screens: [
      {
        versions: '>=0.50.0 <1',
        // The input prompt: "> ", or "<mode>> " in ask/architect modes.
        idle: [{ pattern: '^(\\w+ )?>$', rows: 1 }],
        busy: [{ pattern: '(Waiting for|Thinking)\\b', rows: 3 }],
        approval: [{ pattern: '\\(Y\\)es/\\(N\\)o', rows: 3 }],
        error: ['litellm\\.\\w+Error', 'APIError', 'The API provider'],
        reply_end: ['^Tokens: \\d'],
        // No recording shows a command running ("Running <command>" and its output, with nothing the
        // busy patterns match), and none shows a question that is not an approval.
        executing: [],
        question: [],
        approval_request: {
          kinds: [
            // The command in a fenced block, then the question.
            { kind: 'shell', pattern: '^```\\w*\\n(?<command>(?:[^`\\n].*\\n|\\n)*)```\\n *Run shell commands?\\?' },
            { kind: 'file_write', pattern: '^Allow creation of new file (?<path>.+?)\\? \\(Y\\)es' },
          ],
          options: {
            layout: 'inline',
            // "(Y)es/(N)o/(D)on't ask again [Yes]:", the default in brackets.
            pattern: '\\? (?<options>\\([A-Za-z]\\)[^[]*?) *\\[(?<selected>[^\\]]*)\\]:',
            separator: '/',
            shortcut: { pattern: '\\((?<key>[A-Za-z])\\)', strip: false },
          },
          // It reads a line: the letter, then Enter.
          select: ['shortcut'],
          submit: ['Enter'],
        },
        dialogs: [],
      },
    ],
    approval_keys: { allow_once: ['y', 'Enter'], deny: ['n', 'Enter'] },
    input: { separate_enter: true, echo_timeout_ms: 1_000, enter_delay_ms: 50, paste_multiline: true },
    transcript: { format: 'aider-markdown', dir: '{cwd}', pattern: '.aider.chat.history.md' },
  },
  (s) => ({
    args: ['--model', 'openai/scripted-model'],
    env: { OPENAI_API_BASE: `${s.modelUrl}/v1`, OPENAI_API_KEY: 'sk-switchboard-scripted' },
  }),
);
