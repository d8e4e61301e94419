/**
 * `doctor --save DIR`: every distinct screen each CLI drew, plain and with colours, named in the
 * order they came with the step and how the profile read them, plus the report as JSON: what a bug
 * report needs, and what new detector fixtures are made from. Temporary paths and ports are
 * replaced by fixed ones, as the recorded fixtures have them.
 */
import { mkdirSync, realpathSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { DoctorReport } from './report.js';
import type { LiveCheck } from './live-check.js';

/** Where the isolated HOME and the workdir show in saved screens (as in test/fixtures/screens). */
const HOME_AS = '/home/dev';
const WORK_AS = '/home/dev/work';

function realOr(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
}

/**
 * What a check's temporary folders look like in text, and what they become: first the full paths
 * (the workdir, the isolated HOME, as given and with links resolved), then the bare random names of
 * the check's folder and the run's (`…/sb-doctor-XXXXXX/<agent>-XXXXXX`), which CLIs show where
 * they shorten a long path from its start (OpenCode's footer: `…OYj5M/sb-doctor-cZFQfV/opencode-…/work`)
 * and so leave no full path to replace.
 */
interface FolderMasks {
  paths: [string, string][];
  names: [string, string][];
}

function masksOf(check: Pick<LiveCheck, 'home' | 'work'>): FolderMasks {
  const paths: [string, string][] = [];
  for (const [from, to] of [
    [check.work, WORK_AS],
    [check.home, HOME_AS],
  ] as const) {
    paths.push([from, to]);
    const real = realOr(from);
    if (real !== from) paths.push([real, to]);
  }
  const agentFolder = path.dirname(check.work);
  const names = [path.basename(agentFolder), path.basename(path.dirname(agentFolder))]
    .filter((name) => /-[A-Za-z0-9]{6}$/.test(name))
    .map((name) => [name, name.replace(/[A-Za-z0-9]{6}$/, 'XXXXXX')] as [string, string]);
  return { paths, names };
}

/**
 * Replaces the folders of every check, full paths of all of them before any bare name (so one
 * check's masked run folder never hides another's full path), the longest path first (so a path
 * with links resolved, /private/var/… on macOS, is not half-replaced by the /var/… it contains), and ports.
 */
function normalizeAll(masks: readonly FolderMasks[], text: string): string {
  let out = text;
  const paths = masks.flatMap((m) => m.paths).sort((a, b) => b[0].length - a[0].length);
  for (const [from, to] of paths) out = out.split(from).join(to);
  for (const m of masks) for (const [from, to] of m.names) out = out.split(from).join(to);
  return out.replace(/127\.0\.0\.1:\d+/g, '127.0.0.1:PORT');
}

/** Replaces the check's temporary folders (also by their bare names, which CLIs show) and ports. */
export function normalizer(check: Pick<LiveCheck, 'home' | 'work'>): (text: string) => string {
  const masks = [masksOf(check)];
  return (text) => normalizeAll(masks, text);
}

/** Writes the report and each CLI's screens under `dir`; sets `savedTo` on the report. */
export function saveDoctorRun(dir: string, report: DoctorReport, checks: ReadonlyMap<string, LiveCheck>): void {
  const root = path.resolve(dir);
  mkdirSync(root, { recursive: true });
  report.savedTo = root;
  const masks: FolderMasks[] = [];
  for (const agent of report.agents) {
    const check = checks.get(agent.name);
    if (!check) continue;
    const mask = masksOf(check);
    masks.push(mask);
    const normalize = (text: string): string => normalizeAll([mask], text);
    const folder = path.join(root, `${agent.name}-${agent.version ?? 'unknown'}`);
    mkdirSync(folder, { recursive: true });
    agent.savedTo = folder;
    for (const screen of check.screens) {
      const stem = `${String(screen.index).padStart(3, '0')}-${screen.step}-${screen.read}`;
      writeFileSync(path.join(folder, `${stem}.txt`), `${normalize(screen.lines.join('\n'))}\n`);
      writeFileSync(path.join(folder, `${stem}.ansi.txt`), `${normalize(screen.ansiLines.join('\n'))}\n`);
    }
  }
  const json = JSON.stringify(report, null, 2);
  writeFileSync(path.join(root, 'report.json'), `${normalizeAll(masks, json)}\n`);
}
