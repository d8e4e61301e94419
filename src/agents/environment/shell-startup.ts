/**
 * Switchboard's commands on an isolated HOME's login PATH. An agent asks another from its shell
 * tool (`lask --async "…"`), and some CLIs run that tool through a login shell whose startup
 * files set PATH afresh: Codex 0.169 replays a snapshot of `bash -l`, and Debian's /etc/profile
 * then sets PATH to the system's folders only, so the folder the daemon appended to the pane's
 * PATH is gone and `lask: command not found`. The sandbox HOME's own startup files (sh and bash
 * read `.profile` at login, interactive bash `.bashrc`, zsh always `.zshenv`) append the folder
 * again, named by a variable every pane gets, so no path is written into the HOME. A user's own
 * HOME is never written: there, the commands are on PATH where Switchboard was installed.
 */
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

/** The folder of Switchboard's commands for a pane's programs (the daemon sets it). */
export const COMMANDS_DIR_VARIABLE = 'SWITCHBOARD_BIN';

const MARK = '# switchboard: its commands on PATH';
const SNIPPET = [
  `${MARK} (lask, cask, gask, oask, switchboard), after the system's.`,
  `if [ -n "\${${COMMANDS_DIR_VARIABLE}:-}" ]; then case ":$PATH:" in *":$${COMMANDS_DIR_VARIABLE}:"*) ;; *) PATH="$PATH:$${COMMANDS_DIR_VARIABLE}"; export PATH ;; esac; fi`,
  '',
].join('\n');

/** The startup files that get the lines. */
export const SHELL_STARTUP_FILES: readonly string[] = ['.profile', '.bashrc', '.zshenv'];

/** Appends the lines to each startup file of the sandbox `home` that does not have them yet. */
export function seedShellStartup(home: string): void {
  for (const name of SHELL_STARTUP_FILES) {
    const file = path.join(home, name);
    const had = existsSync(file) ? readFileSync(file, 'utf8') : '';
    if (had.includes(MARK)) continue;
    appendFileSync(file, `${had === '' || had.endsWith('\n') ? '' : '\n'}${SNIPPET}`, { mode: 0o600 });
  }
}
