/**
 * The test run's own temporary folder. Everything the run starts (workers, daemons, agent CLIs,
 * the programs those start) inherits TMPDIR, TMP and TEMP pointing at it, so what a program leaves
 * in its temporary folder lands here, where the teardown sees it, and never in the system's. The
 * path is short (/tmp/sbt-XXXXXX) on purpose: CLIs show the working folder in their screens, and a
 * long one pushes other text out of a footer.
 */
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** The variables that name a temporary folder, on any platform (TMPDIR on POSIX, TMP and TEMP on Windows). */
const TEMP_VARIABLES = ['TMPDIR', 'TMP', 'TEMP'] as const;
/** Names the run's folder for the workers (they read os.tmpdir() too, but this one is unambiguous). */
export const RUN_TEMP_VARIABLE = 'SWITCHBOARD_TEST_TMP';
/**
 * The default Switchboard home of the run's own processes ($SWITCHBOARD_HOME), inside the folder:
 * a library object made without a home (an AgentCatalog, say) keeps its agents' temporary folders
 * under it, never under the user's ~/.switchboard.
 */
const RUN_HOME_FOLDER = 'home';

export interface RunTemp {
  readonly dir: string;
  /** What is left in the folder, one line per entry (a folder with what it holds, a few names deep). */
  leftovers(): string[];
  /** Removes the folder and everything in it. */
  remove(): void;
}

/**
 * Makes the run's folder in the system's temporary folder and points this process's environment at
 * it (set before vitest forks its workers, which inherit it). tsx's compile cache, which a few
 * tests start, is switched off: a cache is not a leftover we want to excuse.
 */
export function useRunTempFolder(): RunTemp {
  const dir = mkdtempSync(path.join(tmpdir(), 'sbt-'));
  for (const name of TEMP_VARIABLES) process.env[name] = dir;
  process.env[RUN_TEMP_VARIABLE] = dir;
  process.env.SWITCHBOARD_HOME = path.join(dir, RUN_HOME_FOLDER);
  process.env.TSX_DISABLE_CACHE = '1';
  return {
    dir,
    leftovers: () => leftoversIn(dir),
    remove: () => rmSync(dir, { recursive: true, force: true, maxRetries: 3 }),
  };
}

/**
 * What is left in a run's temporary folder: every entry (a folder with what it holds, a few names
 * deep). The default home may hold what a test made there on purpose; only its agents' temporary
 * folders must be gone (src/agents/environment/private-temp.ts).
 */
export function leftoversIn(dir: string): string[] {
  return [
    ...describeEntries(dir, 3).filter((entry) => entry.split('/')[0] !== RUN_HOME_FOLDER),
    ...describeEntries(path.join(dir, RUN_HOME_FOLDER, 'tmp'), 2).map((entry) => `${RUN_HOME_FOLDER}/tmp/${entry}`),
  ];
}

function safeList(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/** `dir`'s entries as paths relative to it, descending `depth` levels into folders. */
function describeEntries(dir: string, depth: number, prefix = ''): string[] {
  return safeList(dir).flatMap((name) => {
    const full = path.join(dir, name);
    const shown = prefix === '' ? name : `${prefix}/${name}`;
    let folder = false;
    try {
      folder = statSync(full).isDirectory();
    } catch {
      // gone while we looked
    }
    if (!folder) return [shown];
    const inside = depth > 1 ? describeEntries(full, depth - 1, shown) : [];
    return inside.length > 0 ? inside : [`${shown}/`];
  });
}
