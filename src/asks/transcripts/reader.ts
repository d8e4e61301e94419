/**
 * Reads one ask's reply out of its target's transcript. JSONL transcripts (Claude, Codex, Gemini)
 * are tailed: the sizes of the candidate files are noted before the question is typed, and each
 * look reads only the complete lines added since, through the format's fold, until one file shows
 * the question; from then on only that file is read. A file that shrank was rewritten and is read
 * again from its start. OpenCode's database is queried, read-only, through OpenCode's own `db`
 * command, only when the target's screen shows it idle (each query starts OpenCode, about 3 s).
 */
import { execFile } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, readSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { tempFolderEnv } from '../../platform/index.js';
import { claudeFold } from './claude.js';
import { codexFold } from './codex.js';
import { geminiFold } from './gemini.js';
import { listTranscripts, transcriptDirs, type TranscriptLocation } from './locate.js';
import { askRowsSql, readOpenCodeRows, type OpenCodeRow } from './opencode.js';
import { NOTHING_YET, type ReplyRead, type TranscriptFold } from './types.js';

/** One ask's view of its target's transcript. */
export interface TranscriptReader {
  /** Notes what the transcripts hold now; call it before the question is typed. */
  begin(): void;
  /** What is known now; `idle` says whether the target's screen shows it idle. */
  read(context: { idle: boolean }): Promise<ReplyRead>;
}

/** Runs a read-only SQL query on OpenCode's database and returns its rows. */
export type OpenCodeQuery = (sql: string) => Promise<unknown[]>;

/** Most bytes read from one file per look (a look after a long turn catches up over several). */
const MAX_READ_BYTES = 8 * 1024 * 1024;
/** Until the question is found, the transcript folders are listed again at most this often (new files). */
const LIST_INTERVAL_MS = 500;
/** Between two OpenCode queries, at least this long (each one starts OpenCode). */
const OPENCODE_QUERY_INTERVAL_MS = 1_000;
/** Longest an OpenCode query may take. */
const OPENCODE_QUERY_TIMEOUT_MS = 20_000;

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- each format's fold has its own state
const FOLDS: Record<'claude-jsonl' | 'codex-rollout' | 'gemini-chat', TranscriptFold<any>> = {
  'claude-jsonl': claudeFold,
  'codex-rollout': codexFold,
  'gemini-chat': geminiFold,
};

/** A reader of `location`'s transcript for ask `askId`. */
export function createTranscriptReader(location: TranscriptLocation, askId: string, options: { opencodeQuery?: OpenCodeQuery; now?: () => number } = {}): TranscriptReader {
  if (location.format === 'opencode-sqlite') return new OpenCodeReader(askId, options.opencodeQuery ?? opencodeDbQuery(location), options.now ?? Date.now);
  return new JsonlReader(location, askId, FOLDS[location.format]);
}

interface Tail<S> {
  offset: number;
  state: S;
  /** Inside a line longer than MAX_READ_BYTES (no record the readers need is that long): dropped. */
  skipping: boolean;
}

class JsonlReader<S> implements TranscriptReader {
  private readonly tails = new Map<string, Tail<S>>();
  private bound: string | undefined;
  private begun = new Map<string, number>();
  private listed: string[] = [];
  private listedAt = -Infinity;

  constructor(
    private readonly location: TranscriptLocation,
    private readonly askId: string,
    private readonly fold: TranscriptFold<S>,
  ) {}

  begin(): void {
    this.begun = listTranscripts(this.location, transcriptDirs(this.location));
  }

  read(): Promise<ReplyRead> {
    if (this.bound === undefined && performance.now() - this.listedAt >= LIST_INTERVAL_MS) {
      this.listed = [...listTranscripts(this.location, transcriptDirs(this.location)).keys()];
      this.listedAt = performance.now();
    }
    const files = this.bound !== undefined ? [this.bound] : this.listed;
    for (const file of files) {
      const view = this.advance(file);
      if (view?.found) {
        this.bound = file;
        return Promise.resolve({ ...view, source: file });
      }
    }
    return Promise.resolve(NOTHING_YET);
  }

  /** Folds the lines added to `file` since the last look. */
  private advance(file: string): Omit<ReplyRead, 'source'> | undefined {
    let size: number;
    try {
      size = statSync(file).size;
    } catch {
      return undefined;
    }
    let tail = this.tails.get(file);
    if (!tail || size < tail.offset) {
      // New since begin (or rewritten): from its start; otherwise from where it stood at begin.
      const start = tail ? 0 : Math.min(this.begun.get(file) ?? 0, size);
      tail = { offset: start, state: this.fold.initial(this.askId), skipping: false };
      this.tails.set(file, tail);
    }
    if (size > tail.offset) {
      const length = Math.min(size - tail.offset, MAX_READ_BYTES);
      const buffer = Buffer.alloc(length);
      const fd = openSync(file, 'r');
      let read: number;
      try {
        read = readSync(fd, buffer, 0, length, tail.offset);
      } finally {
        closeSync(fd);
      }
      // Whole lines only: the last one may still be being written. Cut at the last newline byte,
      // so a UTF-8 character is never split.
      const end = buffer.subarray(0, read).lastIndexOf(0x0a);
      if (end < 0) {
        if (read === MAX_READ_BYTES) {
          tail.offset += read;
          tail.skipping = true;
        }
        return this.fold.view(tail.state);
      }
      tail.offset += end + 1;
      const lines = buffer.subarray(0, end).toString('utf8').split('\n');
      if (tail.skipping) {
        lines.shift();
        tail.skipping = false;
      }
      for (const line of lines) {
        if (line.trim() === '') continue;
        let record: unknown;
        try {
          record = JSON.parse(line);
        } catch {
          continue;
        }
        tail.state = this.fold.step(tail.state, record);
      }
    }
    return this.fold.view(tail.state);
  }
}

class OpenCodeReader implements TranscriptReader {
  private last: ReplyRead = NOTHING_YET;
  private lastQueryAt = -Infinity;

  constructor(
    private readonly askId: string,
    private readonly query: OpenCodeQuery,
    private readonly now: () => number,
  ) {}

  begin(): void {
    // Nothing to note: the query finds the question by its marker.
  }

  async read(context: { idle: boolean }): Promise<ReplyRead> {
    if (this.last.done || !context.idle || this.now() - this.lastQueryAt < OPENCODE_QUERY_INTERVAL_MS) return this.last;
    this.lastQueryAt = this.now();
    const rows = (await this.query(askRowsSql(this.askId))) as OpenCodeRow[];
    this.last = { ...readOpenCodeRows(rows, this.askId), source: 'opencode.db' };
    return this.last;
  }
}

/**
 * Queries the database of the OpenCode that `location` describes with its own `opencode db`
 * (read-only SELECTs). OpenCode unpacks 19 MB of native libraries into its temporary folder at
 * every start, under new names each time, and an ask queries while it waits: each query gets a
 * folder of its own inside the agent's (or this process's) temporary folder, removed once it answers.
 */
export function opencodeDbQuery(location: TranscriptLocation): OpenCodeQuery {
  const binary = location.binary ?? 'opencode';
  const base: NodeJS.ProcessEnv = { ...process.env, ...location.env, HOME: location.home };
  return (sql) => {
    // Inside the agent's folder while it lives; in this process's once the agent is gone with it.
    const parent = base.TMPDIR ?? base.TEMP;
    const scratch = mkdtempSync(path.join(parent !== undefined && existsSync(parent) ? parent : tmpdir(), 'opencode-db-'));
    const env = { ...base, ...tempFolderEnv(scratch) };
    return new Promise<unknown[]>((resolve, reject) => {
      execFile(binary, ['db', '--pure', sql, '--format', 'json'], { env, cwd: location.cwd, timeout: OPENCODE_QUERY_TIMEOUT_MS, maxBuffer: 64 * 1024 * 1024 }, (err, stdout) => {
        if (err) {
          reject(new Error(`opencode db failed: ${err.message}`, { cause: err }));
          return;
        }
        try {
          const rows: unknown = JSON.parse(stdout.trim() === '' ? '[]' : stdout);
          resolve(Array.isArray(rows) ? rows : []);
        } catch (parseError) {
          reject(parseError instanceof Error ? parseError : new Error(String(parseError)));
        }
      });
    }).finally(() => {
      try {
        rmSync(scratch, { recursive: true, force: true, maxRetries: 2 });
      } catch {
        // A file still in use (Windows): the agent's folder takes it along when it goes.
      }
    });
  };
}
