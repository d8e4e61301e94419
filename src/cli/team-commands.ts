/**
 * `switchboard team presets` and `switchboard team preset show|validate|save|rm|export|import`:
 * seed 003's team presets, kept sealed by the daemon (the run subcommands are team-run-commands.ts). A preset file is JSON or YAML; it is read
 * here and sent whole, so what the daemon keeps is what the person wrote, with defaults filled in.
 * Editing a preset is exporting it, changing the file and saving it again.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { SwitchboardError } from '../core/errors.js';
import type { PresetInfo } from '../protocol/methods.js';
import { parseCommandArgs, UsageError } from './args.js';
import { out, withClient, type CliContext } from './context.js';
import { table } from './format.js';
import { readInput } from './task-input.js';
import { teamRunSubcommand } from './team-run-commands.js';

/** How an import's review names each thing to look at. */
const REVIEW_WORDS = { check: 'runs this command when a worker says it is done:', folder: 'works outside the run’s folder, in', approvals: 'answers approvals by its own rules:' } as const;

const SUBCOMMANDS = 'run, runs, board, answer, send, mark, pause, resume, end, report, presets or preset';

/** `team …` */
export async function teamCommand(ctx: CliContext, argv: string[]): Promise<number> {
  const [what, ...rest] = argv;
  if (what === 'presets') return listCommand(ctx, rest);
  if (what === 'preset') return presetCommand(ctx, rest);
  const run = what === undefined ? undefined : teamRunSubcommand(what);
  if (run) return run(ctx, rest);
  throw new UsageError(what === undefined ? `missing the subcommand: ${SUBCOMMANDS}` : `unknown subcommand '${what}': ${SUBCOMMANDS}`);
}

async function listCommand(ctx: CliContext, argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, { json: { type: 'boolean' } });
  if (positionals.length > 0) throw new UsageError(`unexpected argument '${positionals[0]}'`);
  const { presets } = await withClient(ctx, (c) => c.teamPresetList());
  if (values.json === true) out(ctx, JSON.stringify(presets));
  else out(ctx, table(['NAME', 'FROM', 'ROLES', 'DESCRIPTION'], presets.map(presetRow)));
  return 0;
}

function presetRow(info: PresetInfo): string[] {
  const preset = info.preset as { name: string; description: string; planner: string; roles: { name: string; agent: string }[] };
  const roles = preset.roles.map((r) => `${r.name === preset.planner ? '*' : ''}${r.name}:${r.agent}`).join(' ');
  return [preset.name, info.builtin ? 'built-in' : 'yours', roles, preset.description.length > 60 ? `${preset.description.slice(0, 59)}…` : preset.description];
}

async function presetCommand(ctx: CliContext, argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, { json: { type: 'boolean' }, out: { type: 'string' }, replace: { type: 'boolean' } });
  const [action, arg, extra] = positionals;
  if (extra !== undefined) throw new UsageError(`unexpected argument '${extra}'`);
  if (arg === undefined) throw new UsageError(action === undefined ? 'missing the action: show, validate, save, rm, export or import' : `team preset ${action} needs ${action === 'show' || action === 'rm' || action === 'export' ? 'NAME' : 'FILE or -'}`);
  switch (action) {
    case 'show': {
      const info = await withClient(ctx, (c) => c.teamPresetGet(arg));
      out(ctx, JSON.stringify(values.json === true ? info : info.preset, null, values.json === true ? undefined : 2));
      return 0;
    }
    case 'validate': {
      const preset = await presetFile(ctx, arg);
      const checked = await withClient(ctx, (c) => c.teamPresetValidate(preset));
      out(ctx, `${String(checked.preset.name)}: valid`);
      return 0;
    }
    case 'save': {
      const preset = await presetFile(ctx, arg);
      const saved = await withClient(ctx, (c) => c.teamPresetSave(preset));
      out(ctx, `${String(saved.preset.name)}: ${saved.replaced ? 'saved in place of the one before' : 'saved'}`);
      return 0;
    }
    case 'rm': {
      const removed = await withClient(ctx, (c) => c.teamPresetRemove(arg));
      out(ctx, `${arg}: removed${removed.restored_builtin ? ' (the built-in preset of that name is back)' : ''}`);
      return 0;
    }
    case 'export': {
      const { text } = await withClient(ctx, (c) => c.teamPresetExport(arg));
      if (typeof values.out === 'string') {
        writeFileSync(path.resolve(values.out), text, { flag: 'wx' });
        out(ctx, `${arg}: written to ${values.out}`);
      } else ctx.stdout.write(text);
      return 0;
    }
    case 'import': {
      const text = await readInput(ctx, arg);
      const { imported, review } = await withClient(ctx, (c) => c.teamPresetImport(text, values.replace === true ? { replace: true } : {}));
      out(ctx, `imported: ${imported.join(', ')}`);
      if (review.length > 0) {
        out(ctx, 'look at these before a run uses them:');
        for (const item of review) out(ctx, `  ${item.preset}/${item.role}: ${REVIEW_WORDS[item.what]} ${item.value}`);
      }
      return 0;
    }
    default:
      throw new UsageError(`unknown action '${String(action)}': show, validate, save, rm, export or import`);
  }
}

/** A preset file's object (JSON or YAML); a file that holds no object is INVALID_PARAMS, naming it. */
async function presetFile(ctx: CliContext, file: string): Promise<Record<string, unknown>> {
  const text = await readInput(ctx, file);
  let value: unknown;
  try {
    value = parseYaml(text) as unknown; // YAML reads JSON too
  } catch (err) {
    throw new SwitchboardError('INVALID_PARAMS', `${file === '-' ? 'standard input' : file} is neither JSON nor YAML: ${err instanceof Error ? (err.message.split('\n')[0] ?? '') : String(err)}`, { file });
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new SwitchboardError('INVALID_PARAMS', `${file === '-' ? 'standard input' : file} holds no preset (an object with name, planner and roles)`, { file });
  return value as Record<string, unknown>;
}
