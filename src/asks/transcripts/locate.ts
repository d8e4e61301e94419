/**
 * Where a target's CLI writes its transcript: the profile's `transcript` (a directory under HOME
 * with {cwd_dashed} and {project} in it, and a file pattern), expanded for one pane.
 */
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { dashedCwd } from '../../agents/index.js';
import { TRANSCRIPT_FORMATS, type TranscriptFormat } from './types.js';

/** A pane's transcript, as the ask engine is told about it. */
export interface TranscriptLocation {
  format: TranscriptFormat;
  /** The HOME the CLI runs with (an isolated one, or the user's). */
  home: string;
  /** The folder the CLI works in. */
  cwd: string;
  /** The profile's directory template, relative to HOME. */
  dir: string;
  /** The profile's file pattern (`*`, and `**` for any folders between). */
  pattern: string;
  /** The CLI's environment (CODEX_HOME moves Codex's files; OpenCode's query runs with it). */
  env?: Record<string, string>;
  /** The CLI's program (OpenCode's database is queried through it). */
  binary?: string;
}

/** True for a profile transcript format this layer reads. */
export function isReadableFormat(format: string): format is TranscriptFormat {
  return (TRANSCRIPT_FORMATS as readonly string[]).includes(format);
}

/** Most files looked at per listing: a transcript folder of years of sessions is not walked whole. */
const MAX_LISTED_FILES = 5_000;

/**
 * The folders to look in. {project} (Gemini's per-project folder, named after the working folder
 * and made unique by Gemini itself) matches any folder. Codex's dated folders are narrowed to the
 * days around now, so a long history is never walked.
 */
export function transcriptDirs(location: TranscriptLocation, now = new Date()): string[] {
  const codexHome = location.env?.CODEX_HOME;
  const relative = location.dir.replaceAll('{cwd_dashed}', dashedCwd(location.cwd)).replaceAll('{cwd}', location.cwd);
  const base = location.format === 'codex-rollout' && codexHome ? path.join(codexHome, 'sessions') : path.resolve(location.home, relative);
  if (location.format === 'codex-rollout') {
    const days = new Set<string>();
    for (const offset of [-1, 0, 1]) {
      const d = new Date(now.getTime() + offset * 86_400_000);
      const pad = (n: number): string => String(n).padStart(2, '0');
      days.add(path.join(base, String(d.getFullYear()), pad(d.getMonth() + 1), pad(d.getDate())));
      days.add(path.join(base, String(d.getUTCFullYear()), pad(d.getUTCMonth() + 1), pad(d.getUTCDate())));
    }
    return [...days];
  }
  if (!base.includes('{project}')) return [base];
  const [head = '', tail = ''] = base.split('{project}');
  try {
    return readdirSync(head, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => path.join(head, e.name, tail));
  } catch {
    return [];
  }
}

/** The file-name test of a pattern's last segment. */
function nameTest(pattern: string): RegExp {
  const last = pattern.split('/').pop() ?? '*';
  return new RegExp(`^${last.split('*').map((s) => s.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`);
}

/** Files in `dirs` whose names fit the pattern, with their sizes. */
export function listTranscripts(location: TranscriptLocation, dirs: readonly string[]): Map<string, number> {
  const test = nameTest(location.pattern);
  const found = new Map<string, number>();
  for (const dir of dirs) {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      continue;
    }
    for (const name of names) {
      if (found.size >= MAX_LISTED_FILES) return found;
      if (!test.test(name)) continue;
      try {
        const st = statSync(path.join(dir, name));
        if (st.isFile()) found.set(path.join(dir, name), st.size);
      } catch {
        // Gone between the listing and the look: not ours.
      }
    }
  }
  return found;
}
