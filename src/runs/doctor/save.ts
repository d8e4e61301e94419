/**
 * `doctor --save DIR`: every distinct screen each CLI drew, plain and with colours, named in the
 * order they came with the step and how the profile read them, plus the report as JSON: what a bug
 * report needs, and what new detector fixtures are made from. Temporary paths and ports are
 * replaced by fixed ones, as the recorded fixtures have them.
 */
import { mkdirSync, realpathSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { DoctorReport } from './doctor.js';
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

/** Replaces the check's temporary folders (also by their bare names, which CLIs show) and ports. */
export function normalizer(check: Pick<LiveCheck, 'home' | 'work'>): (text: string) => string {
  const pairs: [string, string][] = [];
  for (const [from, to] of [
    [check.work, WORK_AS],
    [check.home, HOME_AS],
  ] as const) {
    pairs.push([from, to]);
    const real = realOr(from);
    if (real !== from) pairs.push([real, to]);
  }
  // The check's own folder (…/sb-doctor-XXXXXX/<agent>-XXXXXX) also shows as a bare name.
  const parent = path.basename(path.dirname(check.work));
  const masked = parent.replace(/[A-Za-z0-9]{6}$/, 'XXXXXX');
  return (text) => {
    let out = text;
    for (const [from, to] of pairs) out = out.split(from).join(to);
    if (parent !== masked) out = out.split(parent).join(masked);
    return out.replace(/127\.0\.0\.1:\d+/g, '127.0.0.1:PORT');
  };
}

/** Writes the report and each CLI's screens under `dir`; sets `savedTo` on the report. */
export function saveDoctorRun(dir: string, report: DoctorReport, checks: ReadonlyMap<string, LiveCheck>): void {
  const root = path.resolve(dir);
  mkdirSync(root, { recursive: true });
  report.savedTo = root;
  const normalizers = new Map<string, (text: string) => string>();
  for (const agent of report.agents) {
    const check = checks.get(agent.name);
    if (!check) continue;
    const normalize = normalizer(check);
    normalizers.set(agent.name, normalize);
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
  const normalizedJson = [...normalizers.values()].reduce((text, normalize) => normalize(text), json);
  writeFileSync(path.join(root, 'report.json'), `${normalizedJson}\n`);
}
