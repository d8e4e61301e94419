import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseYaml } from '../../core/yaml.js';
import { SwitchboardError } from '../../core/errors.js';
import { aider } from './builtin/aider.js';
import { claude } from './builtin/claude.js';
import { codex } from './builtin/codex.js';
import { gemini } from './builtin/gemini.js';
import { opencode } from './builtin/opencode.js';
import { shell } from './builtin/shell.js';
import { defineProfile, type AgentProfile } from './profile.js';
import { agentTempRoot } from '../../platform/index.js';
import type { ProfileInput } from './schema.js';

export const BUILTIN_PROFILES: readonly AgentProfile[] = [claude, codex, gemini, opencode, aider, shell];

/** Where user-defined profiles are read from, in the Switchboard home. */
export const AGENT_FILES = ['agents.yaml', 'agents.yml', 'agents.json'];

/** The agents Switchboard knows: the built-in profiles, and the user's own from a config file. */
export class AgentCatalog {
  private readonly byName = new Map<string, AgentProfile>();
  /** What was wrong with the user's profile file: each problem names the file, the entry and the field. */
  readonly problems: string[] = [];
  /**
   * Where every agent started from this catalog gets its private temporary folder: under the
   * Switchboard home the catalog belongs to (the default home when none is given).
   */
  readonly tempRoot: string;

  constructor(profiles: readonly AgentProfile[] = BUILTIN_PROFILES, options: { home?: string } = {}) {
    for (const p of profiles) this.byName.set(p.data.name, p);
    this.tempRoot = agentTempRoot(options.home);
  }

  /**
   * The built-ins plus the profiles in `file` (or the first of agents.yaml / .yml / .json in
   * `home`). A user profile with a built-in's name replaces it. Never throws: one broken entry must
   * not cost the user the others, or the daemon its start. What could not be used is in `problems`.
   */
  static load(options: { home?: string; file?: string } = {}): AgentCatalog {
    const file = options.file ?? (options.home ? AGENT_FILES.map((f) => path.join(options.home as string, f)).find((f) => existsSync(f)) : undefined);
    const catalog = new AgentCatalog(BUILTIN_PROFILES, options.home !== undefined ? { home: options.home } : {});
    if (!file) return catalog;
    const { profiles, problems } = readProfiles(file);
    catalog.problems.push(...problems);
    for (const profile of profiles) catalog.byName.set(profile.data.name, profile);
    return catalog;
  }

  /** The profile called `name`; throws INVALID_PARAMS listing the known ones. */
  get(name: string): AgentProfile {
    const profile = this.byName.get(name);
    if (!profile) {
      throw new SwitchboardError('INVALID_PARAMS', `unknown agent '${name}' (known: ${[...this.byName.keys()].join(', ')})`, { agent: name });
    }
    return profile;
  }

  find(name: string): AgentProfile | undefined {
    return this.byName.get(name);
  }

  list(): AgentProfile[] {
    return [...this.byName.values()];
  }
}

/** Parses a profile file (`agents: [ … ]` or a bare list, in YAML or JSON), keeping every sound entry. */
function readProfiles(file: string): { profiles: AgentProfile[]; problems: string[] } {
  let data: unknown;
  try {
    const text = readFileSync(file, 'utf8');
    data = file.endsWith('.json') ? JSON.parse(text) : parseYaml(text);
  } catch (err) {
    return { profiles: [], problems: [`cannot read agent profiles from ${file}: ${(err as Error).message}`] };
  }
  const list: unknown = Array.isArray(data) ? data : typeof data === 'object' && data !== null ? (data as { agents?: unknown }).agents : undefined;
  if (!Array.isArray(list)) return { profiles: [], problems: [`${file}: expected a list of agent profiles under "agents"`] };
  const profiles: AgentProfile[] = [];
  const problems: string[] = [];
  const seen = new Set<string>();
  list.forEach((entry: unknown, i) => {
    try {
      const profile = defineProfile(entry as ProfileInput, { builtin: false });
      if (seen.has(profile.data.name)) problems.push(`${file}: profile ${i + 1}: '${profile.data.name}' is defined twice; the later one is used`);
      seen.add(profile.data.name);
      profiles.push(profile);
    } catch (err) {
      problems.push(`${file}: profile ${i + 1}: ${(err as Error).message}`);
    }
  });
  return { profiles, problems };
}
