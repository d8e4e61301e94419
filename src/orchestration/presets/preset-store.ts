/**
 * The team presets a person has: the built-in ones and their own, kept sealed in one file of the
 * Switchboard home (`teams/team-presets.v1.enc`, seed 003 §9.2). A preset of the person's own
 * with a built-in's name takes its place; a preset is edited by saving it again; export gives the
 * plain JSON to share, import takes JSON or YAML, one preset or a list.
 */
import { parseYaml } from '../../core/yaml.js';
import { SwitchboardError } from '../../core/errors.js';
import type { SealedFolder } from '../sealed-store.js';
import { BUILTIN_PRESETS } from './builtin.js';
import { parsePreset, type TeamPreset } from './preset.js';

const FILE = 'team-presets.v1';
const PURPOSE = 'switchboard team presets v1';
/** A person's own presets, at most: each is a few KB, and a list past this is a mistake. */
const MAX_OWN_PRESETS = 200;
/** An import's text, at most. */
const MAX_IMPORT_CHARS = 1024 * 1024;

/** A preset as listed: where it comes from. */
export interface ListedPreset {
  preset: TeamPreset;
  /** True for a built-in preset the person has not replaced. */
  builtin: boolean;
}

/** What a save or an import checks a preset against. */
export interface PresetChecks {
  /** The agent profiles a role may name. */
  knownAgents?: readonly string[];
}

export class PresetStore {
  constructor(private readonly folder: SealedFolder) {}

  /** Every preset: the person's own, then the built-ins they have not replaced, each by name. */
  list(): ListedPreset[] {
    const own = this.own();
    const names = new Set(own.map((p) => p.name));
    return [...own.map((preset) => ({ preset, builtin: false })), ...BUILTIN_PRESETS.filter((p) => !names.has(p.name)).map((preset) => ({ preset, builtin: true }))].sort((a, b) =>
      a.preset.name.localeCompare(b.preset.name),
    );
  }

  /** One preset by name; INVALID_PARAMS naming the presets there are when there is none. */
  get(name: string): ListedPreset {
    const all = this.list();
    const found = all.find((p) => p.preset.name === name);
    if (!found) throw new SwitchboardError('INVALID_PARAMS', `no team preset is named '${name}' (there are: ${all.map((p) => p.preset.name).join(', ')})`, { preset: name });
    return found;
  }

  /** Checks a preset without keeping it: the preset with its defaults, or INVALID_PARAMS naming each problem's field. */
  validate(input: unknown, checks: PresetChecks = {}): TeamPreset {
    return parsePreset(input, checks.knownAgents);
  }

  /** Validates and keeps a preset, in place of one of the same name (that is how a preset is edited). */
  save(input: unknown, checks: PresetChecks = {}): { preset: TeamPreset; replaced: boolean } {
    const preset = parsePreset(input, checks.knownAgents);
    const own = this.own();
    const at = own.findIndex((p) => p.name === preset.name);
    if (at >= 0) own[at] = preset;
    else if (own.length >= MAX_OWN_PRESETS) throw new SwitchboardError('LIMIT_EXCEEDED', `there are ${MAX_OWN_PRESETS} team presets already: remove one first`, { max: MAX_OWN_PRESETS });
    else own.push(preset);
    this.folder.write(FILE, PURPOSE, { presets: own });
    return { preset, replaced: at >= 0 || BUILTIN_PRESETS.some((p) => p.name === preset.name) };
  }

  /** Removes a person's own preset (a built-in one it replaced comes back); a built-in cannot be removed. */
  remove(name: string): { restoredBuiltin: boolean } {
    const own = this.own();
    const kept = own.filter((p) => p.name !== name);
    if (kept.length === own.length) {
      const builtin = BUILTIN_PRESETS.some((p) => p.name === name);
      throw new SwitchboardError('INVALID_PARAMS', builtin ? `'${name}' is a built-in team preset: it cannot be removed (save one of that name to replace it)` : `no team preset of yours is named '${name}'`, { preset: name });
    }
    this.folder.write(FILE, PURPOSE, { presets: kept });
    return { restoredBuiltin: BUILTIN_PRESETS.some((p) => p.name === name) };
  }

  /** The preset as plain JSON, to share or keep elsewhere (what import takes back). */
  export(name: string): string {
    return `${JSON.stringify(this.get(name).preset, null, 2)}\n`;
  }

  /**
   * Takes presets from JSON or YAML text: one preset, a list, or `{presets: [...]}`. Every one is
   * checked before any is kept; one that has a preset of the person's of the same name is
   * CONFLICT unless `replace`.
   */
  import(text: string, options: PresetChecks & { replace?: boolean } = {}): TeamPreset[] {
    if (text.length > MAX_IMPORT_CHARS) throw new SwitchboardError('INVALID_PARAMS', `the import is over ${MAX_IMPORT_CHARS} characters`, { max_chars: MAX_IMPORT_CHARS });
    const inputs = presetsIn(parseText(text));
    const presets = inputs.map((input, i) => {
      try {
        return parsePreset(input, options.knownAgents);
      } catch (err) {
        if (err instanceof SwitchboardError && inputs.length > 1) throw new SwitchboardError(err.code, `preset ${i + 1} of ${inputs.length}: ${err.message}`, err.details ? { ...err.details } : undefined);
        throw err;
      }
    });
    const names = presets.map((p) => p.name);
    const twice = names.find((n, i) => names.indexOf(n) !== i);
    if (twice) throw new SwitchboardError('INVALID_PARAMS', `the import has two presets named '${twice}'`, { preset: twice });
    const own = this.own();
    const clash = presets.find((p) => own.some((o) => o.name === p.name));
    if (clash && !options.replace) throw new SwitchboardError('CONFLICT', `you have a team preset named '${clash.name}' already: import with replace to take its place`, { preset: clash.name });
    const kept = [...own.filter((o) => !names.includes(o.name)), ...presets];
    if (kept.length > MAX_OWN_PRESETS) throw new SwitchboardError('LIMIT_EXCEEDED', `that would make ${kept.length} team presets (at most ${MAX_OWN_PRESETS})`, { max: MAX_OWN_PRESETS });
    this.folder.write(FILE, PURPOSE, { presets: kept });
    return presets;
  }

  /** The person's own presets, as sealed. A file that holds something else is refused, not overwritten. */
  private own(): TeamPreset[] {
    const stored = this.folder.read(FILE, PURPOSE);
    if (stored === undefined) return [];
    const list = (stored as { presets?: unknown }).presets;
    if (!Array.isArray(list)) throw new SwitchboardError('INTERNAL_ERROR', `the sealed team presets in ${this.folder.dir} hold no list`);
    return list.map((p) => parsePreset(p));
  }
}

function parseText(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    try {
      return parseYaml(text);
    } catch (err) {
      throw new SwitchboardError('INVALID_PARAMS', `the import is neither JSON nor YAML: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`);
    }
  }
}

function presetsIn(value: unknown): unknown[] {
  const list = Array.isArray(value)
    ? value
    : typeof value === 'object' && value !== null
      ? Array.isArray((value as { presets?: unknown }).presets)
        ? (value as { presets: unknown[] }).presets
        : [value]
      : [];
  if (list.length === 0) throw new SwitchboardError('INVALID_PARAMS', 'the import holds no preset (a preset, a list of presets, or {presets: [...]})');
  return list;
}
