/**
 * Seed 003's team presets: list, read, validate, save (which is also how one is edited), remove,
 * export and import. A preset travels as the object a person writes (JSON or YAML's shape); its
 * fields are checked where presets live (orchestration/presets/preset.ts), which names the field
 * of every problem.
 */
import { z } from 'zod';
import { optional } from './common.js';

const presetName = z.string().min(1, 'name must not be empty').max(64);
/** A preset as written: an object whose fields the preset's own schema checks. */
const presetObject = z.record(z.string(), z.unknown());
/** An import's text: JSON or YAML, one preset or a list. */
const MAX_IMPORT_CHARS = 1024 * 1024;

export const teamParams = {
  /** Every preset: the user's own and the built-ins they have not replaced. */
  team_preset_list: z.strictObject({}),
  team_preset_get: z.strictObject({ name: presetName }),
  /** Checks a preset without keeping it: INVALID_PARAMS naming every problem's field, or the preset with its defaults. */
  team_preset_validate: z.strictObject({ preset: presetObject }),
  /** Validates and keeps a preset, in place of one of the same name. */
  team_preset_save: z.strictObject({ preset: presetObject }),
  /** Removes one of the user's presets; a built-in one it replaced comes back. */
  team_preset_remove: z.strictObject({ name: presetName }),
  /** The preset as plain JSON text, to share. */
  team_preset_export: z.strictObject({ name: presetName }),
  /** Presets from JSON or YAML text; CONFLICT for a name the user has unless `replace`. */
  team_preset_import: z.strictObject({ text: z.string().min(1).max(MAX_IMPORT_CHARS), replace: optional(z.boolean()) }),
} as const;

/** A preset as the daemon answers it: every default filled in, and where it comes from. */
export const presetInfoSchema = z.object({ builtin: z.boolean(), preset: presetObject });

export const teamResults = {
  team_preset_list: z.object({ presets: z.array(presetInfoSchema) }),
  team_preset_get: presetInfoSchema,
  team_preset_validate: z.object({ preset: presetObject }),
  team_preset_save: z.object({ preset: presetObject, replaced: z.boolean() }),
  team_preset_remove: z.object({ removed: z.literal(true), restored_builtin: z.boolean() }),
  team_preset_export: z.object({ name: z.string(), text: z.string() }),
  /** `review`: what the imported presets do beyond their workers' own judgement (commands run as checks, folders outside the run's, approval rules of their own), for the person to look at. */
  team_preset_import: z.object({
    imported: z.array(z.string()),
    review: z.array(z.object({ preset: z.string(), role: z.string(), what: z.enum(['check', 'folder', 'approvals']), value: z.string() })),
  }),
} as const;
