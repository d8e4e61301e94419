/**
 * Makes Claude Code ask before every tool call, so that Switchboard's policy decides before the act
 * rather than reading afterwards what the CLI did on its own authority. Facts from Claude Code
 * 2.1.332 (`-p`, stream-json, `--permission-prompt-tool stdio`), found against the scripted model:
 *
 * - Without more, it runs reads (Read, Glob, Grep), the Agent tool, Bash commands it deems
 *   read-only (`echo hi`, `tail file.txt`) and any Bash command the user's own
 *   `~/.claude/settings.json` allows, without asking.
 * - `--settings '{"permissions":{"ask":["*"]}}'` makes every tool call (Bash, Read, Glob, Grep,
 *   Write, Edit, WebFetch, MCP tools, Agent and each of the subagent's calls, Skill, ToolSearch,
 *   ListAgents) a `can_use_tool` question first. The ask rule ranks above the user's and the
 *   project's allow rules, `--allowedTools`, a hook that answers allow, and every permission mode
 *   tried (default, auto, dontAsk). Only deny rules come before it, and they deny without asking.
 * - It fails open two ways: a settings value that fails validation is dropped without a word
 *   (`"ask":"*"` instead of a list), and a second `--settings` replaces the first. So the value is
 *   a constant its test checks, and a caller's arguments that would turn the questions off are
 *   refused rather than merged.
 */
import { SwitchboardError } from '../core/errors.js';

/** The settings that make Claude Code ask about every tool call. */
const ASK_ALL_SETTINGS = JSON.stringify({ permissions: { ask: ['*'] } });

/** Arguments that make Claude Code ask about every tool call (before any of the caller's). */
export const CLAUDE_ASK_ALL_ARGS: readonly string[] = Object.freeze(['--settings', ASK_ALL_SETTINGS]);

/** Options that would turn the questions off, and why (the option alone, whatever its value). */
const SILENCING_OPTIONS: ReadonlyMap<string, string> = new Map([
  ['--settings', 'a second --settings replaces the one that makes Claude Code ask'],
  ['--dangerously-skip-permissions', 'it skips every permission check'],
  ['--allow-dangerously-skip-permissions', 'it lets the session skip every permission check'],
  ['--permission-prompt-tool', 'the questions must come to Switchboard over stdio'],
]);

/** Options whose value decides: the option with the values that turn the questions off. */
const SILENCING_VALUES: ReadonlyMap<string, { allowed: (value: string) => boolean; why: string }> = new Map([
  ['--permission-mode', { allowed: (v: string) => v !== 'bypassPermissions', why: 'it skips every permission check' }],
  ['--permission-prompts', { allowed: (v: string) => v === 'host', why: 'only "host" puts the questions to Switchboard' }],
]);

function refuse(argument: string, why: string): never {
  throw new SwitchboardError('INVALID_PARAMS', `claude cannot run with ${argument} here: ${why}, and Switchboard has Claude Code ask about every tool call so that the policy decides before each one. Leave it out (the approval policy allows what it should)`, { argument });
}

/**
 * Throws INVALID_PARAMS when a caller's arguments for Claude Code would turn its questions off
 * (the session's own arguments come from this module and are not checked).
 */
export function refuseArgsThatSilenceQuestions(args: readonly string[]): void {
  for (const [i, arg] of args.entries()) {
    const eq = arg.indexOf('=');
    const option = arg.startsWith('--') && eq > 0 ? arg.slice(0, eq) : arg;
    const why = SILENCING_OPTIONS.get(option);
    if (why !== undefined) refuse(option, why);
    const valued = SILENCING_VALUES.get(option);
    if (valued === undefined) continue;
    const value = option === arg ? args[i + 1] : arg.slice(eq + 1);
    if (value === undefined || !valued.allowed(value)) refuse(`${option} ${value ?? '(no value)'}`, valued.why);
  }
}
