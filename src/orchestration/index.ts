/** Seed 003's orchestrator: team presets (sealed at rest), team runs over agent panes with the planner's tools, their boards and reports. */
import path from 'node:path';
import { KeyFile, keyFileOf, SealedFolder } from './sealed-store.js';
import { PresetStore } from './presets/preset-store.js';
import type { Logger } from '../core/logger.js';
import type { TeamRows } from '../ledger/index.js';
import { TeamRecord } from './team-record.js';

export { keyFileOf } from './sealed-store.js';
export { PresetStore } from './presets/preset-store.js';
export { presetReview, type TeamPreset } from './presets/preset.js';
export { TeamRuns } from './team-runs.js';
export type { TeamRecord } from './team-record.js';
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

/** The sealed file that says the ledger keeps team runs sealed under the home's key (seed 003 §9.2's name). */
const RUNS_FILE = 'runs.v1';
const RUNS_PURPOSE = 'switchboard team runs v1';

/**
 * The home's team runs kept in the ledger's `rows`, sealed under the home's key. Before the first
 * is sealed, the teams folder gets `runs.v1.enc` saying so: while it is there no new key is made
 * (one would lose them). Nothing is made until a run is recorded.
 */
export function teamRecordOf(home: string, rows: TeamRows, logger: Logger): TeamRecord {
  const folder = teamsFolderOf(home);
  const markSealed = (): void => {
    if (folder.read(RUNS_FILE, RUNS_PURPOSE) !== undefined) return;
    folder.write(RUNS_FILE, RUNS_PURPOSE, { team_runs: 'sealed in the run ledger (ledger.db: team_runs, team_events) under this key', since: new Date().toISOString() });
  };
  return new TeamRecord(rows, folder, { logger, beforeFirstSeal: markSealed });
}
