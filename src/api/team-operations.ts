/**
 * Seed 003's team presets (`team_preset_*`): the daemon's sealed preset store, with each role's
 * agent checked against the profiles the daemon knows.
 */
import { presetReview } from '../orchestration/index.js';
import type { Handler } from './handler.js';
import type { OperationContext } from './context.js';

type TeamMethods = 'team_preset_list' | 'team_preset_get' | 'team_preset_validate' | 'team_preset_save' | 'team_preset_remove' | 'team_preset_export' | 'team_preset_import';

/** The agent profiles a role may name: the built-in ones and the user's. */
const knownAgents = (ctx: OperationContext): string[] => ctx.agents.list().map((profile) => profile.data.name);

export const teamHandlers: { [M in TeamMethods]: Handler<M> } = {
  team_preset_list(ctx) {
    return { presets: ctx.teamPresets.list() };
  },

  team_preset_get(ctx, p) {
    return ctx.teamPresets.get(p.name);
  },

  team_preset_validate(ctx, p) {
    return { preset: ctx.teamPresets.validate(p.preset, { knownAgents: knownAgents(ctx) }) };
  },

  team_preset_save(ctx, p) {
    return ctx.teamPresets.save(p.preset, { knownAgents: knownAgents(ctx) });
  },

  team_preset_remove(ctx, p) {
    return { removed: true, restored_builtin: ctx.teamPresets.remove(p.name).restoredBuiltin };
  },

  team_preset_export(ctx, p) {
    return { name: p.name, text: ctx.teamPresets.export(p.name) };
  },

  team_preset_import(ctx, p) {
    const imported = ctx.teamPresets.import(p.text, { knownAgents: knownAgents(ctx), ...(p.replace !== undefined ? { replace: p.replace } : {}) });
    return { imported: imported.map((preset) => preset.name), review: imported.flatMap(presetReview) };
  },
};
