/**
 * Reads the state a CLI reports about itself in a file (Claude Code keeps
 * ~/.claude/sessions/<pid>.json up to date: "busy", "idle", or "waiting" with what for). A second
 * opinion beside the screen: a redraw can look idle mid-turn, the CLI's own word cannot.
 */
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import type { ProfileData } from '../profiles/schema.js';

export type StatusFileSpec = NonNullable<ProfileData['status_file']>;

export interface SelfReport {
  state: 'idle' | 'busy' | 'waiting' | 'unknown';
  /** The value as the file has it. */
  value: string;
  /** When the file was last written (ms since the epoch). */
  writtenAt: number;
  file: string;
}

/** The status file's path for a CLI process under `home`. */
export function statusFilePath(spec: StatusFileSpec, home: string, pid: number): string {
  return path.join(home, spec.path.replaceAll('{pid}', String(pid)));
}

/** What the file says now; undefined when it is missing, half-written or not the JSON expected. */
export function readStatusFile(spec: StatusFileSpec, home: string, pid: number): SelfReport | undefined {
  const file = statusFilePath(spec, home, pid);
  try {
    const writtenAt = statSync(file).mtimeMs;
    const parsed: unknown = JSON.parse(readFileSync(file, 'utf8'));
    if (typeof parsed !== 'object' || parsed === null) return undefined;
    const raw = (parsed as Record<string, unknown>)[spec.field];
    if (typeof raw !== 'string') return undefined;
    const state = spec.idle.includes(raw) ? 'idle' : spec.busy.includes(raw) ? 'busy' : spec.waiting.includes(raw) ? 'waiting' : 'unknown';
    return { state, value: raw, writtenAt, file };
  } catch {
    return undefined;
  }
}
