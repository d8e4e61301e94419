import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { SwitchboardError } from '../../core/errors.js';
import { isolatedHomeEnv } from '../../platform/index.js';
import { describeIssues } from '../../core/zod-issues.js';
import { profileSchema, type ProfileData, type ProfileInput, type Screens } from './schema.js';
import { profileProblems } from './check-profile.js';
import { compareVersions, rangeFloor, satisfies } from './version-range.js';

/** How a CLI starts Switchboard's MCP server on stdio. */
export interface McpServerCommand {
  command: string;
  args: string[];
}

/** Running an agent against a model server from an isolated HOME (tests, demos, offline use). */
export interface SandboxOptions {
  /** The HOME the agent runs with; config is written into it. Never the user's own HOME. */
  home: string;
  /** Base URL of the model server, e.g. http://127.0.0.1:4010 (no /v1). */
  modelUrl: string;
  /** The directory the agent works in. */
  cwd: string;
  /** The environment the agent starts from (for settings such as SWITCHBOARD_OPENCODE_PLUGIN_DIR). */
  env?: NodeJS.ProcessEnv;
  /** Switchboard's MCP server, added to the CLI's configuration in the isolated HOME (agent-env.ts). */
  mcp?: McpServerCommand;
}

/** What a launch adds to the profile's own arguments and environment. */
export interface LaunchAdditions {
  args: string[];
  env: Record<string, string>;
}

/** An agent CLI: its data, plus how to point it at a model server from an isolated HOME. */
export interface AgentProfile {
  readonly data: ProfileData;
  /** Writes what the CLI needs into `sandbox.home` and says what to add to its launch. */
  prepareSandbox(sandbox: SandboxOptions): LaunchAdditions;
  /** The screen patterns for a CLI version (the nearest set when none lists it; the newest when the version is unknown). */
  screensFor(version: string | undefined): Screens;
  /** How well Switchboard knows `version`'s screens, and which pattern set reads them. */
  versionSupport(version: string | undefined): VersionSupport;
  /** Where the program is, when the profile knows better than a PATH search (the shell profile). */
  resolveBinary?(env: NodeJS.ProcessEnv): string | undefined;
  /** True for profiles that ship with Switchboard. */
  readonly builtin: boolean;
}

/**
 * How well a profile knows a CLI version: `exact` when its screens were recorded with that version;
 * `nearest` when the version is only inside a set's range, or outside every range (then the set
 * closest to it is used); `none` when the version is unknown (it could not be read), and the newest
 * set is the guess. The structural rules (input box, menus, spinners) apply at every level.
 */
export interface VersionSupport {
  level: 'exact' | 'nearest' | 'none';
  screens: Screens;
  /** The chosen set's range. */
  versions: string;
  /** In words, for evidence and `switchboard doctor`. */
  note: string;
}

/** Writes `files` (paths relative to `home`) into `home`, creating directories. */
export function writeHomeFiles(home: string, files: Record<string, string>): void {
  for (const [relative, content] of Object.entries(files)) {
    const target = path.join(home, relative);
    if (!target.startsWith(path.resolve(home) + path.sep)) {
      throw new SwitchboardError('INVALID_PARAMS', `home file ${relative} would land outside the home`);
    }
    mkdirSync(path.dirname(target), { recursive: true });
    writeFileSync(target, content, { mode: 0o600 });
  }
}

/** Replaces {cwd}, {home} and {model_url} in a template. */
function expand(template: string, sandbox: SandboxOptions): string {
  return template.replaceAll('{cwd}', sandbox.cwd).replaceAll('{home}', sandbox.home).replaceAll('{model_url}', sandbox.modelUrl);
}

export interface ProfileHooks {
  sandbox?: (s: SandboxOptions) => LaunchAdditions;
  resolveBinary?: (env: NodeJS.ProcessEnv) => string | undefined;
  builtin?: boolean;
}

/** Builds a profile from data (validated) and, for built-ins, a sandbox hook. */
export function defineProfile(input: ProfileInput, hooks: ProfileHooks | ((s: SandboxOptions) => LaunchAdditions) = {}): AgentProfile {
  const { sandbox, resolveBinary, builtin = true } = typeof hooks === 'function' ? { sandbox: hooks } : hooks;
  const parsed = profileSchema.safeParse(input);
  if (!parsed.success) {
    const given = (input as { name?: unknown } | null | undefined)?.name;
    const name = typeof given === 'string' ? given : '?';
    throw new SwitchboardError('INVALID_PARAMS', `invalid agent profile '${name}': ${describeIssues(parsed.error)}`);
  }
  const data = parsed.data;
  const problems = profileProblems(data);
  if (problems.length > 0) throw new SwitchboardError('INVALID_PARAMS', `invalid agent profile '${data.name}': ${problems.join('; ')}`);
  const support = (version: string | undefined): VersionSupport => versionSupportOf(data.screens, version);
  return {
    data,
    builtin,
    ...(resolveBinary ? { resolveBinary } : {}),
    prepareSandbox(s) {
      const files = Object.fromEntries(Object.entries(data.home_files).map(([k, v]) => [k, expand(v, s)]));
      writeHomeFiles(s.home, files);
      const base: LaunchAdditions = { args: [], env: isolatedHomeEnv(s.home) };
      const extra = sandbox?.(s) ?? { args: [], env: {} };
      return { args: [...base.args, ...extra.args], env: { ...base.env, ...extra.env } };
    },
    screensFor(version) {
      return support(version).screens;
    },
    versionSupport: support,
  };
}

/** The newest set: the guess when the version is unknown. */
function newestSet(sets: readonly Screens[]): Screens {
  return sets.reduce((a, b) => (compareVersions(rangeFloor(b.versions), rangeFloor(a.versions)) >= 0 ? b : a));
}

/**
 * The set for `version`: one that recorded it; else one whose range holds it; else the nearest
 * one (see below).
 */
export function versionSupportOf(sets: readonly Screens[], version: string | undefined): VersionSupport {
  if (version === undefined) {
    const screens = newestSet(sets);
    return { level: 'none', screens, versions: screens.versions, note: `version unknown; reading with the newest patterns (${screens.versions}) and the structural rules` };
  }
  const recorded = sets.find((s) => s.recorded.includes(version));
  if (recorded) return { level: 'exact', screens: recorded, versions: recorded.versions, note: `version ${version} recorded` };
  const inRange = sets.find((s) => satisfies(version, s.versions));
  if (inRange) {
    const seen = inRange.recorded.length > 0 ? `; recorded: ${inRange.recorded.join(', ')}` : '';
    return { level: 'nearest', screens: inRange, versions: inRange.versions, note: `version ${version} not recorded; within ${inRange.versions}${seen}` };
  }
  // The newest set known before this version (a release looks most like the one just before it),
  // else, for a version older than everything known, the oldest set.
  const anchor = (set: Screens): string => set.recorded.reduce((a, b) => (compareVersions(a, b) >= 0 ? a : b), rangeFloor(set.versions));
  const before = sets.filter((set) => compareVersions(anchor(set), version) <= 0);
  const pool = before.length > 0 ? before : [...sets];
  const pick = before.length > 0 ? (a: Screens, b: Screens) => (compareVersions(anchor(b), anchor(a)) > 0 ? b : a) : (a: Screens, b: Screens) => (compareVersions(anchor(b), anchor(a)) < 0 ? b : a);
  const best = pool.reduce(pick);
  return { level: 'nearest', screens: best, versions: best.versions, note: `version ${version} is outside every known range; reading with the nearest patterns (${best.versions}) and the structural rules` };
}
