/** Seed 003's orchestrator: team presets (sealed at rest) now; team runs, the planner's tools, the board and the report next. */
import path from 'node:path';
import { KeyFile, keyFileOf, SealedFolder } from './sealed-store.js';
import { PresetStore } from './presets/preset-store.js';

export { keyFileOf } from './sealed-store.js';
export { PresetStore } from './presets/preset-store.js';

/** The folder of a Switchboard home where team presets (and team runs' metadata) are kept sealed. */
const TEAMS_FOLDER = 'teams';

/** The team presets of a Switchboard home, sealed with the home's key (keyFileOf). */
export function presetStoreOf(home: string): PresetStore {
  return new PresetStore(new SealedFolder(path.join(home, TEAMS_FOLDER), new KeyFile(keyFileOf(home))));
}
