/**
 * A CLI as the session drivers start it: its profile, where its program is, whether it answers
 * for its version, and the environment of a session (the same rules as the headless driver's and a
 * pane's, from agents/environment/agent-env.ts).
 */
import { statSync } from 'node:fs';
import { SwitchboardError } from '../core/errors.js';
import { AgentCatalog, agentVersion, createPrivateTemp, defaultBinaryDirs, findAgentBinary, headlessAgentEnv, type AgentProfile, type PrivateTemp } from '../agents/index.js';
import type { AgentHealth } from './capabilities.js';
import type { ConversationOptions } from './conversation.js';

export interface SessionDriverOptions {
  catalog?: AgentCatalog;
  /** Where to look for the program after PATH (default: SWITCHBOARD_AGENT_PATH and Switchboard's own). */
  binaryDirs?: string[];
}

/** What a session starts its processes with, worked out once when it opens. */
export interface SessionLaunch {
  binary: string;
  env: Record<string, string>;
  /** The sandbox's arguments, then the caller's. */
  args: string[];
  /** The session's private temporary folder (in `env`), for every process it starts; the session releases it when it closes. */
  temp: PrivateTemp;
}

export class AgentProgram {
  readonly profile: AgentProfile;
  /** Where a session's private temporary folder is made: the catalog's home. */
  private readonly tempRoot: string;

  constructor(
    tool: string,
    private readonly options: SessionDriverOptions,
  ) {
    const catalog = options.catalog ?? AgentCatalog.load();
    this.profile = catalog.get(tool);
    this.tempRoot = catalog.tempRoot;
  }

  get name(): string {
    return this.profile.data.name;
  }

  async health(): Promise<AgentHealth> {
    const env = headlessAgentEnv(this.profile, { cwd: process.cwd() }).env;
    const binary = this.binary(env);
    if (!binary) return { ok: false, binary: null, version: null, problem: `${this.name} not found on PATH` };
    const version = await agentVersion(binary, this.profile.data.version_args ?? ['--version'], env, { npmPackage: this.profile.data.binary.npm_package, tempRoot: this.tempRoot });
    return version ? { ok: true, binary, version } : { ok: false, binary, version: null, problem: `${binary} did not say its version` };
  }

  /**
   * Checks the options and prepares a session's processes: the folder exists, the sandbox HOME is
   * seeded (once: a respawned process finds it as the first one left it), the program is found.
   */
  launch(options: ConversationOptions): SessionLaunch {
    if (!isDirectory(options.cwd)) throw new SwitchboardError('INVALID_PARAMS', `cwd is not a folder: ${options.cwd}`, { cwd: options.cwd });
    const temp = createPrivateTemp(this.tempRoot);
    return temp.guard(() => {
      const { env, args } = headlessAgentEnv(this.profile, { cwd: options.cwd, sandbox: options.sandbox, temp, extra: options.env });
      const binary = this.binary(env);
      if (!binary) throw new SwitchboardError('SPAWN_FAILED', `${this.name} not found: install it so that ${this.profile.data.binary.names.join(' or ')} is on PATH`, { agent: this.name });
      return { binary, env, args: [...args, ...(options.args ?? [])], temp };
    });
  }

  private binary(env: NodeJS.ProcessEnv): string | undefined {
    return this.profile.resolveBinary?.(env) ?? findAgentBinary(this.profile.data, env, this.options.binaryDirs ?? defaultBinaryDirs(env));
  }
}

function isDirectory(dir: string): boolean {
  try {
    return statSync(dir).isDirectory();
  } catch {
    return false;
  }
}
