/**
 * Where an agent CLI keeps a conversation its own resume reads, under the HOME it runs with: the
 * file a cluster node copies off while the run goes on, so that a resume on another host goes on
 * with it (issue 26). Tried against the pinned CLIs:
 * - Claude Code: ~/.claude/projects/<the folder, dashed>/<id>.jsonl (CLAUDE_CONFIG_DIR in place of
 *   ~/.claude when set). `--resume <id>` reads it there for the folder it runs in, so on another
 *   host it goes under that host's name for the folder.
 * - Codex: $CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl (CODEX_HOME defaults to
 *   ~/.codex). `thread/resume` finds it by the id in its name, in whatever day's folder.
 * Gemini CLI's resume is refused (its session/load overwrites the conversation), and OpenCode keeps
 * its conversations in a database of its own: neither is carried.
 */
import { readdir, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { dashedCwd } from '../agents/index.js';

/** Where a run's CLI keeps its files: its HOME, the folder it works in, and CLAUDE_CONFIG_DIR and CODEX_HOME when set. */
export interface ConversationPlace {
  home: string;
  cwd: string;
  claudeConfigDir?: string | undefined;
  codexHome?: string | undefined;
}

/** A conversation's file, and where it sits under its CLI's own folder (forward slashes). */
export interface ConversationFile {
  file: string;
  relative: string;
}

/** A conversation id as both CLIs make them, a UUID: never a path, nor part of another id. */
const CONVERSATION_ID = /^[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}$/;
/** A Codex rollout's place under CODEX_HOME. */
const CODEX_ROLLOUT = /^sessions\/\d{4}\/\d{2}\/\d{2}\/rollout-[A-Za-z0-9._:-]+\.jsonl$/;
/** Most day folders looked into for a rollout: years of daily use, never a walk without end. */
const MAX_DAYS_LOOKED_AT = 2_000;

/** True when `backend`'s CLI keeps its conversations in files this module knows. */
export function carriesBackend(backend: string): boolean {
  return backend === 'claude' || backend === 'codex';
}

/** True when `backend`'s conversations are files this module knows, and `id` one of theirs. */
export function carriesConversation(backend: string, id: string): boolean {
  return carriesBackend(backend) && CONVERSATION_ID.test(id);
}

/** The CLI's own folder: what `relative` is relative to. */
function cliRoot(backend: string, place: ConversationPlace): string {
  return backend === 'claude' ? (place.claudeConfigDir ?? path.join(place.home, '.claude')) : (place.codexHome ?? path.join(place.home, '.codex'));
}

/**
 * Claude Code's folder name for the run's folder: it names it after the folder as the system
 * gives it to a process working there (links resolved).
 */
async function claudeProject(cwd: string): Promise<string> {
  try {
    return dashedCwd(await realpath(cwd));
  } catch {
    return dashedCwd(cwd);
  }
}

/** The conversation's file as the CLI keeps it here, or undefined when there is none (yet). */
export async function findConversationFile(backend: string, place: ConversationPlace, id: string): Promise<ConversationFile | undefined> {
  if (!carriesConversation(backend, id)) return undefined;
  if (backend === 'claude') {
    const relative = `projects/${await claudeProject(place.cwd)}/${id}.jsonl`;
    const file = path.join(cliRoot(backend, place), ...relative.split('/'));
    return (await isFile(file)) ? { file, relative } : undefined;
  }
  return findRollout(cliRoot(backend, place), id);
}

/**
 * Where a copy of conversation `id` that sat at `relative` on another host goes here, or undefined
 * when that place is not one the CLI would read it from (a copy never names a file of its own
 * choosing: a Claude transcript goes under this host's name for the folder, a Codex rollout only
 * into the sessions' dated folders).
 */
export async function conversationTarget(backend: string, place: ConversationPlace, id: string, relative: string): Promise<string | undefined> {
  if (!carriesConversation(backend, id)) return undefined;
  if (backend === 'claude') return path.join(cliRoot(backend, place), 'projects', await claudeProject(place.cwd), `${id}.jsonl`);
  if (!CODEX_ROLLOUT.test(relative) || !relative.endsWith(`-${id}.jsonl`)) return undefined;
  return path.join(cliRoot(backend, place), ...relative.split('/'));
}

/** The newest day folders first: a conversation resumed is usually a recent one. */
async function findRollout(root: string, id: string): Promise<ConversationFile | undefined> {
  let looked = 0;
  for (const year of await namesDescending(path.join(root, 'sessions'), /^\d{4}$/)) {
    for (const month of await namesDescending(path.join(root, 'sessions', year), /^\d{2}$/)) {
      for (const day of await namesDescending(path.join(root, 'sessions', year, month), /^\d{2}$/)) {
        if (++looked > MAX_DAYS_LOOKED_AT) return undefined;
        const folder = path.join(root, 'sessions', year, month, day);
        const name = (await namesDescending(folder, /^rollout-.*\.jsonl$/)).find((n) => n.endsWith(`-${id}.jsonl`));
        if (name !== undefined) return { file: path.join(folder, name), relative: `sessions/${year}/${month}/${day}/${name}` };
      }
    }
  }
  return undefined;
}

async function namesDescending(folder: string, test: RegExp): Promise<string[]> {
  try {
    return (await readdir(folder))
      .filter((n) => test.test(n))
      .sort()
      .reverse();
  } catch {
    return [];
  }
}

async function isFile(file: string): Promise<boolean> {
  try {
    return (await stat(file)).isFile();
  } catch {
    return false;
  }
}
