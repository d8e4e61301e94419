/**
 * The daemon's team runs (issue 24 item 2): each started from a preset and a goal over the
 * daemon's panes, found by id, and watched by version so that every board (the dashboard, the CLI,
 * a second dashboard) sees the same run change live. A run that has ended stays here, its report
 * too, until more than MAX_ENDED have ended after it; with the ledger (TeamRecord) it stays
 * readable from there after that, and after the daemon.
 */
import { randomBytes } from 'node:crypto';
import type { Disposable } from '../core/disposable.js';
import { Emitter } from '../core/emitter.js';
import { SwitchboardError } from '../core/errors.js';
import { untilEvent } from '../core/until-event.js';
import type { TeamPreset } from './presets/preset.js';
import type { RecordedEntry, TeamRecord } from './team-record.js';
import { reportOf, TeamRun, type TeamBoard, type TeamHost, type TeamMember } from './team-run.js';
import { teamEnded, type TeamState } from './team-state.js';

/** Runs going at once, at most: each opens up to 16 agent CLIs. */
const MAX_LIVE = 8;
/** Ended runs kept readable (their boards and reports), the oldest dropped first. */
const MAX_ENDED = 50;
/** The longest a board watch waits for a change. */
const MAX_BOARD_WAIT_MS = 60_000;
/** Runs a list gives at most: the ones in memory and, past them, the ledger's newest. */
const MAX_LISTED = 100;

/** A run as a list shows it. */
export interface TeamRunSummary {
  id: string;
  goal: string;
  preset: string;
  state: TeamState;
  startedAt: string;
  endedAt: string | null;
  workers: number;
  /** Why its board cannot be read (its record is sealed under a key that is not here), if it cannot. */
  sealed?: string;
}

export interface TeamRunsOptions {
  /** The user's home, for the risk gate's judgement of paths. */
  home: string;
  /** Where workers' git worktrees go: the Switchboard home's `worktrees`. */
  worktrees?: string;
}

/** Panes whose MCP server said it is ready, remembered until a run asks (their runs may not know them yet). */
const MAX_READY_PANES = 1_000;

export class TeamRuns implements Disposable {
  private readonly runs = new Map<string, TeamRun>();
  private readonly readyPanes = new Set<string>();
  private readonly readyEmitter = new Emitter<string>();
  private record: TeamRecord | undefined;

  constructor(private readonly options: TeamRunsOptions) {}

  /** Keeps every run from now on in the ledger (`record`): boards and reports outlive the daemon. */
  keepRecordIn(record: TeamRecord): void {
    this.record = record;
  }

  /** Starts a run: the run exists at once (starting), its agents open in the background. */
  start(spec: { preset: TeamPreset; goal: string; folder: string; host: TeamHost; startedBy?: string }): TeamRun {
    const live = [...this.runs.values()].filter((run) => !teamEnded(run.state)).length;
    if (live >= MAX_LIVE) throw new SwitchboardError('LIMIT_EXCEEDED', `${MAX_LIVE} team runs are going already: end one first`, { max: MAX_LIVE });
    const id = `team-${randomBytes(4).toString('hex')}`;
    const run = new TeamRun({ id, preset: spec.preset, goal: spec.goal, folder: spec.folder, home: this.options.home, ...(this.options.worktrees !== undefined ? { worktrees: this.options.worktrees } : {}), host: spec.host, ...(spec.startedBy !== undefined ? { startedBy: spec.startedBy } : {}), mcpReady: (paneId, timeoutMs, signal) => this.untilMcpReady(paneId, timeoutMs, signal) });
    this.runs.set(id, run);
    this.record?.follow(run);
    this.dropOldEnded();
    void run.start();
    return run;
  }

  /**
   * The run `id`, to steer; RUN_NOT_FOUND when there is none, CONFLICT when it is only in the
   * ledger (it ended, and this daemon let go of it or never had it).
   */
  async get(id: string): Promise<TeamRun> {
    const run = this.runs.get(id);
    if (run) return run;
    const recorded = await this.record?.read(id);
    if (recorded) throw new SwitchboardError('CONFLICT', `team run ${id} has ended (${recorded.state}): the ledger keeps its board and report, to read`, { run_id: id, state: recorded.state });
    throw new SwitchboardError('RUN_NOT_FOUND', `no team run ${id}`, { run_id: id });
  }

  /** Run `id`'s board: the live one, or the last one the ledger has. */
  async board(id: string): Promise<TeamBoard> {
    const run = this.runs.get(id);
    if (run) return run.board();
    const recorded = await this.record?.read(id);
    if (!recorded) throw new SwitchboardError('RUN_NOT_FOUND', `no team run ${id}`, { run_id: id });
    if ('sealed' in recorded) throw new SwitchboardError('KEY_MISMATCH', recorded.sealed, { run_id: id });
    return recorded.board;
  }

  /** Run `id`'s report as markdown, from its live board (its worktrees' changes read again first) or its last recorded one. */
  async report(id: string): Promise<string> {
    await this.runs.get(id)?.refreshChanges();
    return reportOf(await this.board(id));
  }

  /** Who started run `id`, as far as this daemon or the ledger knows (undefined: not known). */
  async starterOf(id: string): Promise<string | undefined> {
    return this.runs.get(id)?.startedBy ?? (await this.board(id)).startedBy;
  }

  /** Run `id`'s record (every call, decision, held text and change), from the ledger; empty without one. */
  async entries(id: string, afterSeq: number, limit: number): Promise<RecordedEntry[]> {
    if (!this.runs.has(id) && (await this.record?.has(id)) !== true) throw new SwitchboardError('RUN_NOT_FOUND', `no team run ${id}`, { run_id: id });
    return (await this.record?.entries(id, afterSeq, limit)) ?? [];
  }

  /**
   * Pane `paneId`'s MCP server has its client (`team_mcp_ready`, called with the pane's token). Its
   * run may not know the pane yet (the agent is still starting), so it is remembered until asked.
   */
  mcpReady(paneId: string): void {
    // The oldest first (a Set keeps the order things were added in).
    const oldest = this.readyPanes.values().next();
    if (this.readyPanes.size >= MAX_READY_PANES && oldest.done !== true) this.readyPanes.delete(oldest.value);
    this.readyPanes.add(paneId);
    this.readyEmitter.fire(paneId);
  }

  /** Resolves true once pane `paneId`'s MCP server is ready, false after `timeoutMs` or on abort. */
  private async untilMcpReady(paneId: string, timeoutMs: number, signal: AbortSignal): Promise<boolean> {
    // Asked once a pane: what was remembered for it is let go.
    if (this.readyPanes.delete(paneId)) return true;
    const end = await untilEvent(this.readyEmitter.event, (id) => id === paneId, { timeoutMs, signal });
    if (end !== 'event') return false;
    this.readyPanes.delete(paneId);
    return true;
  }

  /** The live run whose agent runs in pane `paneId`, and who that agent is in it. */
  memberOfPane(paneId: string): { run: TeamRun; member: TeamMember } | undefined {
    for (const run of this.runs.values()) {
      const member = teamEnded(run.state) ? undefined : run.memberOf(paneId);
      if (member) return { run, member };
    }
    return undefined;
  }

  /** The runs this daemon has, then the ledger's newest, the newest first (at most MAX_LISTED). */
  async list(): Promise<TeamRunSummary[]> {
    const live = [...this.runs.values()].reverse().map((run) => summaryOf(run.board()));
    const seen = new Set(live.map((r) => r.id));
    const recorded = ((await this.record?.list(MAX_LISTED)) ?? []).filter((r) => !seen.has(r.id));
    const fromLedger = recorded.map((r): TeamRunSummary => ('board' in r ? summaryOf(r.board) : { id: r.id, goal: '', preset: '', state: r.state, startedAt: '', endedAt: null, workers: 0, sealed: r.sealed }));
    return [...live, ...fromLedger].sort((a, b) => b.startedAt.localeCompare(a.startedAt)).slice(0, MAX_LISTED);
  }

  /**
   * Resolves once run `id` has changed past `afterVersion` (at once when it has already), or after
   * `timeoutMs`, or when `signal` aborts: a board's live watch, over any transport.
   */
  async changedAfter(id: string, afterVersion: number, timeoutMs: number, signal: AbortSignal): Promise<void> {
    const run = this.runs.get(id);
    // A run only in the ledger has ended: it does not change again.
    if (!run) return;
    if (run.version > afterVersion || timeoutMs <= 0) return;
    await untilEvent(run.onChange, () => true, { timeoutMs: Math.min(timeoutMs, MAX_BOARD_WAIT_MS), signal });
  }

  /**
   * Lets go of every run where it stands (the daemon is closing): their boards are written to the
   * ledger as they are, their agents' panes close with the daemon, and a run left going is settled
   * as failed by the next daemon.
   */
  dispose(): void {
    // The boards as they stand go into the ledger first (a run left going is settled as failed on the next start).
    this.record?.dispose();
    this.readyEmitter.dispose();
    for (const run of this.runs.values()) run.dispose();
    this.runs.clear();
  }

  private dropOldEnded(): void {
    const ended = [...this.runs.entries()].filter(([, run]) => teamEnded(run.state));
    for (const [id, run] of ended.slice(0, Math.max(0, ended.length - MAX_ENDED))) {
      this.record?.unfollow(id);
      run.dispose();
      this.runs.delete(id);
    }
  }
}

function summaryOf(board: TeamBoard): TeamRunSummary {
  return { id: board.id, goal: board.goal, preset: board.preset, state: board.state, startedAt: board.startedAt, endedAt: board.endedAt ?? null, workers: board.workers.length };
}
