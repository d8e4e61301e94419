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
