/**
 * The environment rules every agent process follows, in a pane or headless: in a sandbox, the
 * user's keys and cloud settings are withheld and the profile seeds an isolated HOME; in a pane,
 * the CI markers are withheld too (a pane is a real terminal). One place, so the pane launch and
 * the drivers cannot drift apart.
 */
import { SwitchboardError } from '../../core/errors.js';
import { composeEnv } from '../../platform/index.js';
import type { AgentProfile, LaunchAdditions, SandboxOptions } from '../profiles/profile.js';
import type { PrivateTemp } from './private-temp.js';
import { installMcpServer, isMcpConfigAgent, withJsonServer } from './mcp-config.js';
import { seedShellStartup } from './shell-startup.js';
import { normalizeModelUrl, prepareSandboxHome, SANDBOX_SCRUBBED_ENV } from './sandbox.js';

/**
 * Variables by which CLIs decide they run under CI and so must not be interactive: Gemini CLI then
 * refuses an untrusted folder and exits instead of asking, and Ink-based screens draw only their last
 * frame. An agent in a pane has a real terminal and someone (or Switchboard) answering it, whatever
 * started the daemon, so these are withheld: removed, never set to "false". supports-color, which
 * Claude Code and Gemini CLI use, turns colour off whenever `CI` exists at all, whatever its value,
 * and is-in-ci counts any `CI_*` variable as CI once `CI` is gone, so those go too.
 */
export const CI_MARKER_ENV: readonly string[] = ['CI', 'CI_*', 'CONTINUOUS_INTEGRATION', 'GITHUB_ACTIONS', 'BUILD_NUMBER', 'BUILD_ID', 'RUN_ID', 'GITLAB_CI', 'BUILDKITE', 'CIRCLECI', 'TRAVIS', 'TF_BUILD', 'JENKINS_URL'];

/**
 * The variables that give an agent process its private temporary folder: the ones every program
 * reads, and the profile's own (`temp_env`).
 */
export function agentTempEnv(profile: AgentProfile, temp: PrivateTemp): Record<string, string> {
  return { ...temp.env, ...Object.fromEntries(profile.data.temp_env.map((name) => [name, temp.dir])) };
}

/** A sandbox as the caller gave it: an isolated HOME and the model server's URL. */
export interface SandboxRequest {
  home: string;
  modelUrl: string;
}

/** The sandbox checked: never the user's own HOME, a plain http(s) URL. Throws INVALID_PARAMS. */
export function checkSandbox(sandbox: SandboxRequest): SandboxRequest {
  return { home: prepareSandboxHome(sandbox.home), modelUrl: normalizeModelUrl(sandbox.modelUrl) };
}

/** The variable patterns an agent process must not inherit. */
export function agentUnsetEnv(profile: AgentProfile, options: { sandboxed: boolean; terminal: boolean }): string[] {
  return [...(options.terminal ? CI_MARKER_ENV : []), ...(options.sandboxed ? [...SANDBOX_SCRUBBED_ENV, ...profile.data.sandbox_unset] : [])];
}

/**
 * Seeds the sandbox HOME, with Switchboard's MCP server in the CLI's configuration when there is
 * one to add (the agent gets the tools with no setup) and its commands on the login shell's PATH
 * (shell-startup.ts); a file-system failure is the caller's
 * agent_home, and says so.
 */
export function seedSandbox(profile: AgentProfile, sandbox: SandboxOptions): LaunchAdditions {
  try {
    const additions = profile.prepareSandbox(sandbox);
    seedShellStartup(sandbox.home);
    const agent = profile.data.name;
    if (!sandbox.mcp || !isMcpConfigAgent(agent)) return additions;
    const inline = additions.env.OPENCODE_CONFIG_CONTENT;
    if (agent === 'opencode' && inline !== undefined) {
      // OpenCode's sandbox configuration travels in a variable: the server goes there.
      const config = JSON.parse(inline) as Record<string, unknown>;
      return { ...additions, env: { ...additions.env, OPENCODE_CONFIG_CONTENT: JSON.stringify(withJsonServer('opencode', config, sandbox.mcp)) } };
    }
    installMcpServer(agent, sandbox.home, sandbox.mcp, additions.env);
    return additions;
  } catch (err) {
    if (err instanceof SwitchboardError) throw err;
    throw new SwitchboardError('INVALID_PARAMS', `cannot prepare agent_home ${sandbox.home}: ${(err as Error).message}`, { agent_home: sandbox.home });
  }
}

export interface HeadlessEnvOptions {
  cwd: string;
  sandbox?: SandboxRequest;
  /** The process's private temporary folder, under the caller's own variables. */
  temp?: PrivateTemp;
  /** Variables on top of the profile's, the sandbox's and the temporary folder's. */
  extra?: Record<string, string>;
  /** The environment to start from (default: this process's). */
  base?: NodeJS.ProcessEnv;
}

/**
 * The environment and extra arguments of a headless agent process (no terminal): the base less
 * what the sandbox withholds and less any pane's own markers, then the profile's variables, the
 * sandbox's, and the caller's.
 */
export function headlessAgentEnv(profile: AgentProfile, options: HeadlessEnvOptions): { env: Record<string, string>; args: string[] } {
  const base = options.base ?? process.env;
  // A driver started from inside a pane must not look like that pane's program to its reaper.
  const unset = [...agentUnsetEnv(profile, { sandboxed: options.sandbox !== undefined, terminal: false }), 'SWITCHBOARD_PANE*'];
  const temp = options.temp ? agentTempEnv(profile, options.temp) : undefined;
  if (!options.sandbox) return { env: composeEnv(base, unset, [profile.data.env, temp, options.extra]), args: [] };
  const sandbox = checkSandbox(options.sandbox);
  const additions = seedSandbox(profile, { ...sandbox, cwd: options.cwd, env: composeEnv(base, unset, []) });
  return { env: composeEnv(base, unset, [profile.data.env, additions.env, temp, options.extra]), args: additions.args };
}
