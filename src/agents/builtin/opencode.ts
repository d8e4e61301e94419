import { defineProfile } from '../profile.js';

export const OPENCODE_VERSION = '1.18.33';

/** OpenCode (`opencode-ai`). */
export const opencode = defineProfile(
  {
    name: 'opencode',
    display_name: 'OpenCode',
    binary: { names: ['opencode'], env: 'SWITCHBOARD_OPENCODE_BIN' },
    interactive_args: [],
    headless_args: ['run', '--format', 'json', '{prompt}'],
    screens: [
      {
        versions: '>=1.10.0 <2',
        idle: [{ pattern: 'ctrl\\+p commands', rows: 3 }],
        busy: [{ pattern: 'esc interrupt', rows: 3 }],
        approval: ['△ Permission required', 'Allow once\\s+Allow always\\s+Reject'],
        error: ['Error:', 'APICallError', 'Internal server error'],
        dialogs: [],
      },
    ],
    // "Allow once" is selected first; the others are to its right.
    approval_keys: { allow_once: ['Enter'], allow_always: ['Right', 'Enter'], deny: ['Right', 'Right', 'Enter'] },
    input: { separate_enter: true, echo_timeout_ms: 1_500, enter_delay_ms: 150, paste_multiline: true },
    transcript: { format: 'opencode-sqlite', dir: '.local/share/opencode', pattern: 'opencode.db' },
  },
  (s) => {
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
