/** Seed 003's orchestrator: team presets (sealed at rest), team runs over agent panes with the planner's tools, their boards and reports. */
import path from 'node:path';
import { KeyFile, keyFileOf, SealedFolder } from './sealed-store.js';
import { PresetStore } from './presets/preset-store.js';

export { keyFileOf } from './sealed-store.js';
export { PresetStore } from './presets/preset-store.js';
export { presetReview, type TeamPreset } from './presets/preset.js';
export { TeamRuns } from './team-runs.js';
export type { TeamBoard, TeamHost, TeamRun } from './team-run.js';

/** The folder of a Switchboard home where team presets (and team runs' metadata) are kept sealed. */
const TEAMS_FOLDER = 'teams';

/** The sealed folder of a Switchboard home's teams, under the home's key (keyFileOf). */
function teamsFolderOf(home: string): SealedFolder {
  return new SealedFolder(path.join(home, TEAMS_FOLDER), new KeyFile(keyFileOf(home)));
}

/** The team presets of a Switchboard home. */
export function presetStoreOf(home: string): PresetStore {
  return new PresetStore(teamsFolderOf(home));
}

/**
 * Makes the home's sealing key now, if there is none and nothing sealed needs one (the daemon
 * does it before it jails agent panes, so the jail covers the key). Throws what making it met.
 */
export function prepareSealingKey(home: string): void {
  teamsFolderOf(home).prepareKey();
}
