/**
 * Every session's log in the daemon, by id: a pane's (its output, and entries read from its screen
 * when it runs an agent) and a structured run's (entries from a driver). Each is a MsgStore, so any
 * number of readers get history then live, and a slow reader never holds the producer back.
 */
import { rmSync } from 'node:fs';
import path from 'node:path';
import { Emitter, type Event } from '../core/emitter.js';
import { DisposableStore } from '../core/disposable.js';
import { silentLogger, type Logger } from '../core/logger.js';
import type { MemoryBudget } from '../core/memory-budget.js';
import { SwitchboardError } from '../core/errors.js';
import { ensurePrivateDir } from '../platform/index.js';
import { MsgStore, type MsgStoreOptions, type MsgStoreStats } from '../output/msg-store.js';
import { logMsgBytes, type LogMsg } from '../output/log-msg.js';

export type SessionKind = 'pane' | 'run' | 'session';

export interface SessionLog {
  id: string;
  kind: SessionKind;
  title: string;
  /** The agent CLI, when the session runs one. */
  agent: string | null;
  createdAt: Date;
  store: MsgStore<LogMsg>;
}

export interface SessionSummary {
  session_id: string;
  kind: SessionKind;
  title: string;
  agent: string | null;
  created_at: string;
  finished: boolean;
  stats: MsgStoreStats;
}

/** Bounds of a pane's log: smaller than the MsgStore default, since every pane has one. */
export const PANE_LOG_DEFAULTS: MsgStoreOptions<LogMsg> = { maxBytes: 8 * 1024 * 1024, maxMessages: 10_000 };
/** Finished sessions kept for reading after they end, oldest forgotten first. */
export const MAX_FINISHED_SESSIONS = 64;

export interface SessionLogsOptions {
  /**
   * A private folder for what logs evict from memory, so an export holds the whole session.
   * Without it, an export holds what is retained.
   */
  spillDir?: string;
  /**
   * The daemon's memory budget: every log is a member, and keeps in memory its share's part for
   * logs (LOG_PART_OF_SHARE; a pane's unparsed output has the rest). Without it, each log keeps
   * its own bounds.
   */
  memory?: MemoryBudget;
  /** The daemon's disk budget for spill files: every spilling log is a member. */
  disk?: MemoryBudget;
  logger?: Logger;
}

/** The part of a member's share of the memory budget that its log keeps (the pane's pending output gets the rest). */
export const LOG_PART_OF_SHARE = 2 / 3;

export class SessionLogs {
  private readonly logs = new Map<string, SessionLog>();
  private readonly spillFiles = new Map<string, string>();
  /** Each log's membership of the budgets, left when it is forgotten. */
  private readonly memberships = new Map<string, DisposableStore>();
  private readonly logger: Logger;

  constructor(private readonly options: SessionLogsOptions = {}) {
    this.logger = options.logger ?? silentLogger;
  }

  private readonly created = new Emitter<SessionLog>();
  /** A session's log was opened. */
  readonly onCreated: Event<SessionLog> = this.created.event;

  /**
   * Opens a log under `id` (a pane's id, or a run's); an id in use is refused. With the daemon's
   * budgets, its bounds are its share; `onShare` hears of each new share too (a pane's pending output).
   */
  open(options: { id: string; kind: SessionKind; title: string; agent?: string | null; store?: MsgStoreOptions<LogMsg>; spill?: boolean; onShare?: (share: number) => void }): SessionLog {
    if (this.logs.has(options.id)) throw new SwitchboardError('CONFLICT', `session ${options.id} already exists`, { session_id: options.id });
    const spillFile = this.spillFileFor(options.id, options.spill ?? true);
    const onSpillFull = (): void => this.logger.warn('a session log has used its share of the disk: what memory evicts from it now is dropped, not exported', { session_id: options.id });
    const store = new MsgStore<LogMsg>({ sizeOf: logMsgBytes, ...options.store, ...(spillFile ? { spillFile, onSpillFull } : {}) });
    const memberships = new DisposableStore();
    const { memory, disk } = this.options;
    if (memory) {
      memberships.add(
        memory.join((share) => {
          store.setBounds({ maxBytes: Math.floor(share * LOG_PART_OF_SHARE) });
          options.onShare?.(share);
        }),
      );
    }
    if (disk && spillFile) memberships.add(disk.join((share) => store.setBounds({ maxSpillBytes: share })));
    this.memberships.set(options.id, memberships);
    return this.adopt({ id: options.id, kind: options.kind, title: options.title, agent: options.agent ?? null, store });
  }

  /** Files a log whose store someone else made (a driver's run). */
  adopt(log: Omit<SessionLog, 'createdAt'> & { createdAt?: Date }): SessionLog {
    const entry: SessionLog = { ...log, createdAt: log.createdAt ?? new Date() };
    this.logs.set(entry.id, entry);
    this.forgetOldFinished();
    this.created.fire(entry);
    return entry;
  }

  get(id: string): SessionLog {
    const log = this.logs.get(id);
    if (!log) throw new SwitchboardError('SESSION_NOT_FOUND', `no such session: ${id}`, { session_id: id });
    return log;
  }

  find(id: string): SessionLog | undefined {
    return this.logs.get(id);
  }

  list(): SessionSummary[] {
    return [...this.logs.values()].map(summarize);
  }

  /** Forgets a session (its pane was removed); an unfinished log is finished first so readers hear of it. */
  remove(id: string): void {
    const log = this.logs.get(id);
    if (!log) return;
    log.store.finish();
    this.forget(log);
  }

  dispose(): void {
    for (const log of this.logs.values()) {
      log.store.finish();
      this.forget(log);
    }
    this.created.dispose();
  }

  private spillFileFor(id: string, wanted: boolean): string | undefined {
    if (!wanted || this.options.spillDir === undefined) return undefined;
    ensurePrivateDir(this.options.spillDir);
    const file = path.join(this.options.spillDir, `${id}.jsonl`);
    this.spillFiles.set(id, file);
    return file;
  }

  /** Drops the log and, once its store has closed, its spill file. */
  private forget(log: SessionLog): void {
    this.logs.delete(log.id);
    this.memberships.get(log.id)?.dispose();
    this.memberships.delete(log.id);
    const file = this.spillFiles.get(log.id);
    this.spillFiles.delete(log.id);
    // Readers finish first (the store delivers its last batch and finished notice), then it closes.
    setTimeout(() => {
      void log.store.close().finally(() => {
        if (file !== undefined) rmSync(file, { force: true });
      });
    }, 100).unref();
  }

  /** Finished runs stay readable, but not forever: past the cap the oldest finished go. */
  private forgetOldFinished(): void {
    const finished = [...this.logs.values()].filter((l) => l.store.finished && l.kind !== 'pane');
    for (const log of finished.slice(0, Math.max(0, finished.length - MAX_FINISHED_SESSIONS))) this.forget(log);
  }
}

function summarize(log: SessionLog): SessionSummary {
  return { session_id: log.id, kind: log.kind, title: log.title, agent: log.agent, created_at: log.createdAt.toISOString(), finished: log.store.finished, stats: log.store.stats() };
}
