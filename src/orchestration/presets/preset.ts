/**
 * A team preset (seed 003's Team Preset): the roles of a team, each bound to an agent profile, a
 * folder, an approval policy, a stuck limit, an optional git worktree and an optional check; one
 * role plans. Validated with zod, every problem named with where it is (`roles[1].agent: …`), so a
 * person editing a preset by hand is told which field to fix.
 */
import { z } from 'zod';
import { SwitchboardError } from '../../core/errors.js';
import { issueProblems } from '../../core/zod-issues.js';
import { parsePolicy } from '../../approvals/index.js';

/** A preset's or a role's name: what a CLI argument, a URL and a pane title can all carry. */
const NAME_PATTERN = /^[a-z][a-z0-9-]{0,39}$/;
const name = (what: string): z.ZodString => z.string().regex(NAME_PATTERN, `${what} is 1 to 40 lower-case letters, digits or '-', starting with a letter`);

/** The longest a role's brief or a nudge may be: it is typed into an agent's input box. */
const MAX_BRIEF_CHARS = 4_000;
/** Roles in a preset, at most. */
const MAX_ROLES = 12;
/** Agents a team opens at its start, at most: more is more than one machine's worth of CLIs (each is hundreds of MB). */
const MAX_AGENTS = 16;

/** What a stuck worker is sent first, unless the preset says otherwise. */
const DEFAULT_NUDGE = 'You have been quiet for a while. If you are stuck, say what blocks you; if you are done, say so.';

/**
 * How a role's approval prompts are answered: the built-in policies by name, or a policy of its
 * own (`{rules, default}`, checked by the approval policy's own parser, which names the rule).
 */
const approvalsSchema = z.union([z.enum(['auto', 'ask']), z.record(z.string(), z.unknown())], { error: "'auto', 'ask', or an approval policy ({rules, default})" });

const roleSchema = z.strictObject({
  /** The role's name, unique in the preset: on the pane's title and badge, and what tools name. */
  name: name('a role name'),
  /** An agent profile's name (claude, codex, gemini, opencode, aider, shell, or the user's own). */
  agent: z.string().min(1).max(64),
  /** What the role is for, in a sentence: told to the planner, and to the worker when it starts. */
  brief: z.string().max(MAX_BRIEF_CHARS).default(''),
  /** The worker's folder: relative to the run's folder, or absolute. */
  folder: z.string().min(1).max(4_096).default('.'),
  /** How the worker's approval prompts are answered: `auto` (the auto-approve policy), `ask` (a person), or rules. */
  approvals: approvalsSchema.default('auto'),
  /** Busy on an unchanged screen, or waiting, for longer than this: the worker is stuck. */
  stuck_after_s: z.number().int().min(10).max(86_400).default(300),
  /** A git worktree of the run's repository on a branch of its own, so workers do not write over each other. */
  worktree: z.boolean().default(false),
  /** A command run in the worker's folder when it says it is done (a quality gate, such as `npm test`); failing, its output goes back to the worker. */
  check: z.string().min(1).max(4_096).optional(),
  /** Workers of this role the run opens at its start (0: the planner makes them when it wants). */
  count: z.number().int().min(0).max(MAX_ROLES).default(1),
});

const presetSchema = z
  .strictObject({
    /** The preset's name: unique among presets, what `team run --preset` takes. */
    name: name('a preset name'),
    description: z.string().max(1_000).default(''),
    /** The role that plans and drives the others (seed 003's Planner TAB). */
    planner: name('the planner role'),
    roles: z.array(roleSchema).min(2).max(MAX_ROLES),
    /** Text the planner sends workers (`tabs.send`, broadcasts), by risk: `high` always waits for a person; `medium` as set here. */
    risk: z.strictObject({ medium: z.enum(['confirm', 'pass']).default('confirm') }).default({ medium: 'confirm' }),
    /** What a stuck worker gets: a nudge first, then (with the person's consent) a restart, each within a cap. */
    stuck: z
      .strictObject({
        nudge: z.string().min(1).max(MAX_BRIEF_CHARS).default(DEFAULT_NUDGE),
        max_nudges: z.number().int().min(0).max(10).default(2),
        max_restarts: z.number().int().min(0).max(5).default(1),
      })
      .default({ nudge: DEFAULT_NUDGE, max_nudges: 2, max_restarts: 1 }),
  })
  .superRefine((preset, ctx) => {
    const seen = new Set<string>();
    preset.roles.forEach((role, i) => {
      if (seen.has(role.name)) ctx.addIssue({ code: 'custom', path: ['roles', i, 'name'], message: `'${role.name}' is a second role of that name` });
      seen.add(role.name);
    });
    const agents = preset.roles.reduce((sum, role) => sum + role.count, 0);
    if (agents > MAX_AGENTS) ctx.addIssue({ code: 'custom', path: ['roles'], message: `the team opens ${agents} agents at its start (at most ${MAX_AGENTS})` });
    const planner = preset.roles.findIndex((role) => role.name === preset.planner);
    if (planner < 0) ctx.addIssue({ code: 'custom', path: ['planner'], message: `no role is named '${preset.planner}'` });
    // A planner alone at the start is fine: it makes the workers it wants with tabs.create.
    else if (preset.roles[planner]?.count !== 1) ctx.addIssue({ code: 'custom', path: ['roles', planner, 'count'], message: 'a team has one planner' });
  });

/** A preset as written (defaults may be left out). */
export type PresetInput = z.input<typeof presetSchema>;
/** A validated preset, every default filled in. */
export type TeamPreset = z.output<typeof presetSchema>;
/** One role of a preset. */
export type TeamRole = TeamPreset['roles'][number];

/**
 * Validates a preset (parsed from JSON or YAML). INVALID_PARAMS names every problem with its
 * field; `knownAgents`, when given, are the profiles a role may name.
 */
export function parsePreset(input: unknown, knownAgents?: readonly string[]): TeamPreset {
  const parsed = presetSchema.safeParse(input);
  const problems = parsed.success ? [] : issueProblems(parsed.error, 'key');
  if (parsed.success) {
    parsed.data.roles.forEach((role, i) => {
      if (knownAgents && !knownAgents.includes(role.agent)) problems.push(`roles[${i}].agent: no agent profile is named '${role.agent}' (known: ${knownAgents.join(', ')})`);
      if (typeof role.approvals === 'object') {
        try {
          // Kept as the policy's parser reads it (its defaults filled in), as every other field is.
          role.approvals = { ...parsePolicy(role.approvals) };
        } catch (err) {
          problems.push(`roles[${i}].approvals: ${err instanceof Error ? err.message : String(err)}`);
        }
      }
    });
  }
  if (!parsed.success || problems.length > 0) {
    throw new SwitchboardError('INVALID_PARAMS', `invalid team preset: ${problems.join('; ')}`, { problems });
  }
  return parsed.data;
}

/** The role that plans. */
export function plannerOf(preset: TeamPreset): TeamRole {
  const role = preset.roles.find((r) => r.name === preset.planner);
  // parsePreset made sure of it; a preset built around it by hand is a bug.
  if (!role) throw new SwitchboardError('INTERNAL_ERROR', `preset ${preset.name} has no planner role '${preset.planner}'`);
  return role;
}

/** Absolute on any platform (a preset may come from another machine): `/x`, `C:\x`, a UNC path. */
const isAbsolute = (folder: string): boolean => /^([\\/]|[A-Za-z]:)/.test(folder);

/** What a person should look at in a preset someone else wrote, before a run uses it. */
export interface PresetReviewItem {
  preset: string;
  role: string;
  what: 'check' | 'folder' | 'approvals';
  value: string;
}

/**
 * The parts of a preset that act outside the workers' own judgement: commands Switchboard runs
 * (`check`), folders outside the run's folder (absolute, or `..`), and approval rules of its own
 * (they may allow more than the built-in policies).
 */
export function presetReview(preset: TeamPreset): PresetReviewItem[] {
  const items: PresetReviewItem[] = [];
  for (const role of preset.roles) {
    if (role.check !== undefined) items.push({ preset: preset.name, role: role.name, what: 'check', value: role.check });
    if (isAbsolute(role.folder) || role.folder.split(/[\\/]/).includes('..')) items.push({ preset: preset.name, role: role.name, what: 'folder', value: role.folder });
    if (typeof role.approvals === 'object') items.push({ preset: preset.name, role: role.name, what: 'approvals', value: JSON.stringify(role.approvals) });
  }
  return items;
}
