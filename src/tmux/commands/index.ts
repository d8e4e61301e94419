/** Every tmux command the front end implements, by its full name. */
import { OPTION_COMMANDS } from './option-commands.js';
import { PANE_COMMANDS } from './pane-commands.js';
import { SESSION_COMMANDS, type Command } from './session-commands.js';
import { SCRIPT_COMMANDS } from './script-commands.js';

export const COMMAND_IMPLEMENTATIONS: Readonly<Record<string, Command>> = {
  ...SESSION_COMMANDS,
  ...PANE_COMMANDS,
  ...OPTION_COMMANDS,
  ...SCRIPT_COMMANDS,
};

export type { Command };
