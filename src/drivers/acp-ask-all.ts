/**
 * Makes an ACP agent ask before every tool call, so that Switchboard's policy decides before the
 * act rather than reading afterwards what the agent did on its own authority. Each CLI has its own
 * switches, found on the pinned versions (see docs/agents.md):
 *
 * - Gemini CLI runs read-only tools and a built-in list of "known safe" shell commands (ls, cat,
 *   echo, …) without asking, and follows the user's `defaultApprovalMode` and `tools.allowed`.
 *   `--approval-mode default` and a policy file of our own with one rule (every tool, any arguments:
 *   ask) at the user tier's top priority override all of those; a rule with an argument pattern is
 *   what turns its safe-command shortcut off.
 * - OpenCode allows every tool by default; `"permission": "ask"` in OPENCODE_CONFIG_CONTENT (which
 *   ranks above the user's own config) makes it ask for all of them.
 *
 * An agent named here is one whose permission requests the bridge can rely on; any other ACP agent
 * asks what it asks, and the bridge reads the rest afterwards.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';

/** What to add to an agent's launch so that it asks before every tool call. */
export interface AskEverything {
  args: string[];
  env: Record<string, string>;
}

/** Gemini CLI's policy: one rule, every tool with any arguments asks, above the user's own rules. */
const GEMINI_ASK_ALL_POLICY = ['[[rule]]', 'toolName = "*"', 'argsPattern = "[\\\\s\\\\S]*"', 'decision = "ask_user"', 'priority = 999', ''].join('\n');

/** The agents whose asking can be made complete. */
export function asksEverything(tool: string): boolean {
  return tool === 'gemini' || tool === 'opencode';
}

/**
 * The additions for `tool` (none for an agent this does not know), given the launch's environment
 * and a private folder of the session's for any file the agent must read.
 */
export function askEverything(tool: string, env: Record<string, string | undefined>, folder: string): AskEverything {
  if (tool === 'gemini') {
    const policy = path.join(folder, 'switchboard-ask-all.toml');
    writeFileSync(policy, GEMINI_ASK_ALL_POLICY, { mode: 0o600 });
    return { args: ['--approval-mode', 'default', '--policy', policy], env: {} };
  }
  if (tool === 'opencode') {
    let config: Record<string, unknown> = {};
    const given = env.OPENCODE_CONFIG_CONTENT;
    if (given !== undefined && given !== '') {
      try {
        const parsed: unknown = JSON.parse(given);
        if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) config = parsed as Record<string, unknown>;
      } catch {
        // Not JSON: OpenCode would refuse it too; ours replaces it.
      }
    }
    return { args: [], env: { OPENCODE_CONFIG_CONTENT: JSON.stringify({ ...config, permission: 'ask' }) } };
  }
  return { args: [], env: {} };
}
