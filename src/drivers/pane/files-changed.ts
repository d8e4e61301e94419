/**
 * Which files a task changed in its workdir. In a git work tree the candidates are what git lists
 * (tracked files and untracked ones that are not ignored, so new files count and build output does
 * not); elsewhere, a walk of the folder. Each candidate is fingerprinted before and after, so a
 * file that was already dirty and changed again is caught as well.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { lstat, readdir, readFile } from 'node:fs/promises';
import path from 'node:path';

type FileChangeKind = 'added' | 'modified' | 'deleted';

export interface FileChange {
  /** Relative to the workdir, with forward slashes. */
  path: string;
  change: FileChangeKind;
}

export interface WorkdirSnapshot {
  workdir: string;
  source: 'git' | 'walk';
  /** Path → fingerprint (size, and a content hash for files up to HASH_LIMIT). */
  files: Map<string, string>;
  /** True when the walk stopped at MAX_FILES (changes beyond it are not seen). */
  truncated: boolean;
}

/** Files larger than this are fingerprinted by size and modification time instead of content. */
const HASH_LIMIT = 8 * 1024 * 1024;
/** A walk (outside git) looks at no more files than this. */
const MAX_FILES = 50_000;
/** Folders a walk skips: dependency and VCS stores, not the task's work. */
const SKIPPED_DIRS = new Set(['.git', 'node_modules', '.hg', '.svn']);

function run(file: string, args: string[], cwd: string): Promise<string | null> {
  return new Promise((resolve) => {
    execFile(file, args, { cwd, maxBuffer: 64 * 1024 * 1024, windowsHide: true }, (err, stdout) => resolve(err ? null : stdout));
  });
}

/** Files git would show (tracked, and untracked but not ignored), relative to `workdir`; null outside git. */
async function gitFiles(workdir: string): Promise<string[] | null> {
  const out = await run('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard', '--', '.'], workdir);
  if (out === null) return null;
  return [...new Set(out.split('\0').filter((f) => f.length > 0))];
}

async function walkFiles(workdir: string): Promise<{ files: string[]; truncated: boolean }> {
  const files: string[] = [];
  const pending = [''];
  while (pending.length > 0) {
    const rel = pending.pop() ?? '';
    let entries;
    try {
      entries = await readdir(path.join(workdir, rel), { withFileTypes: true });
    } catch {
      continue;
    }
    for (const entry of entries) {
      const child = rel === '' ? entry.name : `${rel}/${entry.name}`;
      if (entry.isDirectory()) {
        if (!SKIPPED_DIRS.has(entry.name)) pending.push(child);
      } else {
        if (files.length >= MAX_FILES) return { files, truncated: true };
        files.push(child);
      }
    }
  }
  return { files, truncated: false };
}

async function fingerprint(file: string): Promise<string | null> {
  try {
    const stat = await lstat(file);
    if (stat.isSymbolicLink()) return `link:${stat.size}`;
    if (!stat.isFile()) return null;
    if (stat.size > HASH_LIMIT) return `big:${stat.size}:${stat.mtimeMs}`;
    return `${stat.size}:${createHash('sha1').update(await readFile(file)).digest('hex')}`;
  } catch {
    return null;
  }
}

/** Fingerprints the files of `workdir` (git's view when it is in a work tree). */
export async function snapshotWorkdir(workdir: string): Promise<WorkdirSnapshot> {
  const listed = await gitFiles(workdir);
  const { files: names, truncated } = listed ? { files: listed, truncated: false } : await walkFiles(workdir);
  const files = new Map<string, string>();
  for (const name of names) {
    const print = await fingerprint(path.join(workdir, name));
    if (print !== null) files.set(name.split(path.sep).join('/'), print);
  }
  return { workdir, source: listed ? 'git' : 'walk', files, truncated };
}

/** What changed between two snapshots of one workdir, sorted by path. */
export function diffSnapshots(before: WorkdirSnapshot, after: WorkdirSnapshot): FileChange[] {
  const changes: FileChange[] = [];
  for (const [name, print] of after.files) {
    const was = before.files.get(name);
    if (was === undefined) changes.push({ path: name, change: 'added' });
    else if (was !== print) changes.push({ path: name, change: 'modified' });
  }
  for (const name of before.files.keys()) if (!after.files.has(name)) changes.push({ path: name, change: 'deleted' });
  return changes.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}
