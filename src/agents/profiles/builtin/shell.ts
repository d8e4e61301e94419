import { defaultShell } from '../../../platform/index.js';
import { defineProfile } from '../profile.js';

/** The user's own shell, for panes that need a prompt rather than an agent. */
export const shell = defineProfile(
  {
    name: 'shell',
    display_name: 'Shell',
    binary: { names: ['bash', 'zsh', 'fish', 'sh', 'pwsh', 'powershell'], env: 'SWITCHBOARD_SHELL_BIN' },
    screens: [
      {
        versions: '*',
        // A prompt is the last non-empty row, ending in one of the usual prompt characters.
        idle: [{ pattern: '[$#%>❯]$', rows: 1 }],
        busy: [],
        approval: [{ pattern: '\\[(y/N|Y/n|y/n)\\]\\s*\\??$', rows: 1 }],
      },
    ],
    approval_keys: { allow_once: ['y', 'Enter'], deny: ['n', 'Enter'] },
    input: { separate_enter: false, echo_timeout_ms: 0, enter_delay_ms: 0, paste_multiline: true },
  },
  { resolveBinary: (env) => (env.SWITCHBOARD_SHELL_BIN ? undefined : defaultShell(env).file) },
);
