/**
 * The daemon's team runs (issue 24 item 2): each started from a preset and a goal over the
 * daemon's panes, found by id, and watched by version so that every board (the dashboard, the CLI,
 * a second dashboard) sees the same run change live. A run that has ended stays readable, its
 * report too, until more than MAX_ENDED have ended after it.
 */
import { randomBytes } from 'node:crypto';
import type { Disposable } from '../core/disposable.js';
import { Emitter } from '../core/emitter.js';
import { SwitchboardError } from '../core/errors.js';
import { untilEvent } from '../core/until-event.js';
import type { TeamPreset } from './presets/preset.js';
import { TeamRun, type TeamHost, type TeamMember } from './team-run.js';
import { teamEnded } from './team-state.js';

/** Runs going at once, at most: each opens up to 16 agent CLIs. */
const MAX_LIVE = 8;
/** Ended runs kept readable (their boards and reports), the oldest dropped first. */
const MAX_ENDED = 50;
/** The longest a board watch waits for a change. */
const MAX_BOARD_WAIT_MS = 60_000;

export interface TeamRunsOptions {
  /** The user's home, for the risk gate's judgement of paths. */
  home: string;
}

/** Panes whose MCP server said it is ready, remembered until a run asks (their runs may not know them yet). */
const MAX_READY_PANES = 1_000;

export class TeamRuns implements Disposable {
  private readonly runs = new Map<string, TeamRun>();
  private readonly readyPanes = new Set<string>();
  private readonly readyEmitter = new Emitter<string>();

  constructor(private readonly options: TeamRunsOptions) {}

  /** Starts a run: the run exists at once (starting), its agents open in the background. */
  start(spec: { preset: TeamPreset; goal: string; folder: string; host: TeamHost; startedBy?: string }): TeamRun {
    const live = [...this.runs.values()].filter((run) => !teamEnded(run.state)).length;
    if (live >= MAX_LIVE) throw new SwitchboardError('LIMIT_EXCEEDED', `${MAX_LIVE} team runs are going already: end one first`, { max: MAX_LIVE });
    const id = `team-${randomBytes(4).toString('hex')}`;
    const run = new TeamRun({ id, preset: spec.preset, goal: spec.goal, folder: spec.folder, home: this.options.home, host: spec.host, ...(spec.startedBy !== undefined ? { startedBy: spec.startedBy } : {}), mcpReady: (paneId, timeoutMs, signal) => this.untilMcpReady(paneId, timeoutMs, signal) });
    this.runs.set(id, run);
    this.dropOldEnded();
    void run.start();
    return run;
  }

  /** The run `id`; RUN_NOT_FOUND when there is none (or it ended long ago and was dropped). */
  get(id: string): TeamRun {
    const run = this.runs.get(id);
    if (!run) throw new SwitchboardError('RUN_NOT_FOUND', `no team run ${id}`, { run_id: id });
    return run;
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

  /** Every run kept, the newest first. */
  list(): TeamRun[] {
    return [...this.runs.values()].reverse();
  }

  /**
   * Resolves once run `id` has changed past `afterVersion` (at once when it has already), or after
   * `timeoutMs`, or when `signal` aborts: a board's live watch, over any transport.
   */
  async changedAfter(id: string, afterVersion: number, timeoutMs: number, signal: AbortSignal): Promise<void> {
    const run = this.get(id);
    if (run.version > afterVersion || timeoutMs <= 0) return;
    await untilEvent(run.onChange, () => true, { timeoutMs: Math.min(timeoutMs, MAX_BOARD_WAIT_MS), signal });
  }

  /** Ends every run where it stands (the daemon is closing); their agents' panes close with the daemon. */
  dispose(): void {
    this.readyEmitter.dispose();
    for (const run of this.runs.values()) run.dispose();
    this.runs.clear();
  }

  private dropOldEnded(): void {
    const ended = [...this.runs.entries()].filter(([, run]) => teamEnded(run.state));
    for (const [id, run] of ended.slice(0, Math.max(0, ended.length - MAX_ENDED))) {
      run.dispose();
      this.runs.delete(id);
    }
  }
}
