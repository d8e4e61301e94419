/**
 * Seed 003's teams. Presets (`team_preset_*`): the daemon's sealed preset store, with each role's
 * agent checked against the profiles the daemon knows. Runs (`team_run_*`): the daemon's team runs,
 * their agents in its panes, their boards answered as the wire shows them.
 */
import { statSync } from 'node:fs';
import path from 'node:path';
import { SwitchboardError } from '../core/errors.js';
import { presetReview, type TeamBoard, type TeamPreset, type TeamRun } from '../orchestration/index.js';
import type { TeamBoardInfo } from '../protocol/methods.js';
import type { Handler } from './handler.js';
import type { OperationContext } from './context.js';
import { OWNER_GRANT, requireScope } from './authorize.js';
import { callerOf, requireMaker } from './bridge-operations.js';
import { OWNER_CALLER } from '../runs/index.js';
import { teamHostOf } from './team-host.js';

type TeamMethods =
  | 'team_preset_list'
  | 'team_preset_get'
  | 'team_preset_validate'
  | 'team_preset_save'
  | 'team_preset_remove'
  | 'team_preset_export'
  | 'team_preset_import'
  | 'team_run_start'
  | 'team_run_list'
  | 'team_run_get'
  | 'team_run_pause'
  | 'team_run_resume'
  | 'team_run_end'
  | 'team_run_answer'
  | 'team_run_mark'
  | 'team_run_send'
  | 'team_run_report'
  | 'team_run_events'
  | 'team_run_resend'
  | 'team_run_restart'
  | 'team_tool'
  | 'team_mcp_ready';

/** Entries of a run's record a page gives when the caller names no limit. */
const DEFAULT_EVENTS_PAGE = 200;
/** How long a board watch waits for a change when the caller names no wait. */
const DEFAULT_BOARD_WAIT_MS = 30_000;

/** The agent profiles a role may name: the built-in ones and the user's. */
const knownAgents = (ctx: OperationContext): string[] => ctx.agents.list().map((profile) => profile.data.name);

export const teamHandlers: { [M in TeamMethods]: Handler<M> } = {
  team_preset_list(ctx) {
    return { presets: ctx.teamPresets.list() };
  },

  team_preset_get(ctx, p) {
    return ctx.teamPresets.get(p.name);
  },

  team_preset_validate(ctx, p) {
    return { preset: ctx.teamPresets.validate(p.preset, { knownAgents: knownAgents(ctx) }) };
  },

  team_preset_save(ctx, p) {
    return ctx.teamPresets.save(p.preset, { knownAgents: knownAgents(ctx) });
  },

  team_preset_remove(ctx, p) {
    return { removed: true, restored_builtin: ctx.teamPresets.remove(p.name).restoredBuiltin };
  },

  team_preset_export(ctx, p) {
    return { name: p.name, text: ctx.teamPresets.export(p.name) };
  },

  team_preset_import(ctx, p) {
    const imported = ctx.teamPresets.import(p.text, { knownAgents: knownAgents(ctx), ...(p.replace !== undefined ? { replace: p.replace } : {}) });
    return { imported: imported.map((preset) => preset.name), review: imported.flatMap(presetReview) };
  },

  team_run_start(ctx, p) {
    // A stored preset is checked again: a profile one of its roles names may have gone since.
    const given: unknown = typeof p.preset === 'string' ? ctx.teamPresets.get(p.preset).preset : p.preset;
    const preset: TeamPreset = ctx.teamPresets.validate(given, { knownAgents: knownAgents(ctx) });
    const folder = existingFolder(p.folder);
    const host = teamHostOf(ctx, {
      grant: ctx.grant ?? OWNER_GRANT,
      ...(p.agent_home !== undefined && p.model_url !== undefined ? { sandbox: { homeRoot: p.agent_home, modelUrl: p.model_url } } : {}),
      ...(p.env !== undefined ? { env: p.env } : {}),
      ...(p.planner_calls === 'markers' ? { markersOnly: true } : {}),
    });
    return boardInfo(ctx.teamRuns.start({ preset, goal: p.goal, folder, host, startedBy: callerOf(ctx.grant) }).board());
  },

  async team_run_list(ctx) {
    return {
      runs: (await ctx.teamRuns.list()).map((r) => ({
        run_id: r.id,
        goal: r.goal,
        preset: r.preset,
        state: r.state,
        started_at: r.startedAt,
        ended_at: r.endedAt,
        workers: r.workers,
        ...(r.sealed !== undefined ? { sealed: r.sealed } : {}),
      })),
    };
  },

  async team_run_get(ctx, p) {
    if (p.after_version !== undefined) await ctx.teamRuns.changedAfter(p.run_id, p.after_version, p.wait_ms ?? DEFAULT_BOARD_WAIT_MS, ctx.signal);
    return boardInfo(await ctx.teamRuns.board(p.run_id));
  },

  async team_run_pause(ctx, p) {
    const run = await steered(ctx, p.run_id);
    run.pause(callerName(ctx));
    return { run_id: run.id, state: run.state };
  },

  async team_run_resume(ctx, p) {
    const run = await steered(ctx, p.run_id);
    run.resume(callerName(ctx));
    return { run_id: run.id, state: run.state };
  },

  async team_run_end(ctx, p) {
    const run = await steered(ctx, p.run_id);
    // Closing the agents removes panes: what `remove` needs, on top of steering the run.
    if (p.close_agents) requireScope(ctx.grant ?? OWNER_GRANT, 'remove');
    await run.end(callerName(ctx), p.close_agents);
    return { run_id: run.id, state: run.state };
  },

  async team_run_answer(ctx, p) {
    (await steered(ctx, p.run_id)).answerConfirmation(p.confirmation_id, p.decision, callerName(ctx));
    return { answered: true };
  },

  async team_run_mark(ctx, p) {
    const run = await steered(ctx, p.run_id);
    run.markWorker(p.worker_id, p.mark ?? undefined, callerName(ctx));
    const worker = run.workers().find((w) => w.id === p.worker_id);
    return { worker_id: p.worker_id, state: worker?.state ?? 'error' };
  },

  async team_run_send(ctx, p) {
    return await (await steered(ctx, p.run_id)).sendFromPerson(p.worker_id, p.text, p.confirmed ?? false, callerName(ctx), ctx.signal);
  },

  async team_run_report(ctx, p) {
    return { run_id: p.run_id, markdown: await ctx.teamRuns.report(p.run_id) };
  },

  async team_run_resend(ctx, p) {
    (await steered(ctx, p.run_id)).resend(p.call_id, callerName(ctx));
    return { call_id: p.call_id, delivered: 'pending' as const };
  },

  async team_run_restart(ctx, p) {
    const worker = await (await steered(ctx, p.run_id)).restartWorker(p.worker_id, callerName(ctx));
    return { worker_id: worker.id, state: worker.state };
  },

  async team_run_events(ctx, p) {
    // The record holds what people sent and every call's arguments: its starter's and the owner's to read.
    requireMaker(ctx.grant, (await ctx.teamRuns.starterOf(p.run_id)) ?? OWNER_CALLER, `team run ${p.run_id}`);
    const limit = p.limit ?? DEFAULT_EVENTS_PAGE;
    const entries = await ctx.teamRuns.entries(p.run_id, p.after_seq ?? 0, limit);
    const last = entries.at(-1);
    return { run_id: p.run_id, entries: entries.map((e) => ({ seq: e.seq, ts: e.ts, ...e.entry })), next_after: entries.length === limit && last ? last.seq : null };
  },

  async team_tool(ctx, p) {
    const paneId = ctx.grant?.paneId;
    const found = paneId === undefined ? undefined : ctx.teamRuns.memberOfPane(paneId);
    if (!found) throw new SwitchboardError('FORBIDDEN', 'the team tools are for the agents of a team run that is going, called with their own pane’s token', paneId !== undefined ? { pane_id: paneId } : {});
    return await found.run.callTool(found.member, p.tool, p.params ?? {}, ctx.signal);
  },

  team_mcp_ready(ctx) {
    // Only a pane's own token says which pane's MCP server is ready; the run checks the pane is its agent's.
    const paneId = ctx.grant?.paneId;
    if (paneId === undefined) throw new SwitchboardError('FORBIDDEN', 'team_mcp_ready is called by a team agent’s MCP server, with its pane’s token');
    ctx.teamRuns.mcpReady(paneId);
    return { ready: true };
  },
};

/** Run `runId`, for a caller who may steer it: its starter, or the owner (FORBIDDEN otherwise). */
async function steered(ctx: OperationContext, runId: string): Promise<TeamRun> {
  const run = await ctx.teamRuns.get(runId);
  requireMaker(ctx.grant, run.startedBy, `team run ${runId}`);
  return run;
}

/** Who acted, as the board and the record name them. */
function callerName(ctx: OperationContext): string {
  const grant = ctx.grant ?? OWNER_GRANT;
  if (grant.owner) return 'the owner';
  return grant.paneId !== undefined ? `the program in pane ${grant.paneId}` : (grant.who ?? 'a scoped token');
}

/** The run's folder; INVALID_PARAMS when it is not an absolute path to a folder that exists (relative to what? the daemon's folder is no caller's). */
function existingFolder(folder: string): string {
  if (!path.isAbsolute(folder)) throw new SwitchboardError('INVALID_PARAMS', `folder: ${folder} is not an absolute path`, { folder });
  const absolute = path.resolve(folder);
  if (!isFolder(absolute)) throw new SwitchboardError('INVALID_PARAMS', `folder: ${absolute} is not a folder that exists`, { folder: absolute });
  return absolute;
}

function isFolder(file: string): boolean {
  try {
    return statSync(file).isDirectory();
  } catch {
    return false; // missing, a file on the way, or not ours to look at: not a folder to run in
  }
}

/** A board as the wire shows it. */
function boardInfo(board: TeamBoard): TeamBoardInfo {
  return {
    run_id: board.id,
    goal: board.goal,
    preset: board.preset,
    state: board.state,
    why: board.why,
    version: board.version,
    started_at: board.startedAt,
    ended_at: board.endedAt ?? null,
    planner: { role: board.planner.role, agent: board.planner.agent, pane_id: board.planner.paneId, state: board.planner.state },
    workers: board.workers.map((w) => {
      const check = w.checks?.at(-1);
      return {
        id: w.id,
        role: w.role,
        agent: w.agent,
        state: w.state,
        folder: w.folder,
        pane_id: w.paneId,
        last_lines: w.lastLines,
        branch: w.changes?.branch ?? null,
        changed_files: w.changes?.files.length ?? null,
        last_check: check ? { command: check.command, passed: check.passed, exit_code: check.exitCode } : null,
      };
    }),
    tasks: board.tasks.map((t) => ({ id: t.id, title: t.title, owner: t.owner, state: t.state, depends_on: t.dependsOn, failed_check: t.failedCheck })),
    next_step: board.nextStep,
    confirmations: board.confirmations.map((c) => ({ id: c.id, worker_id: c.workerId, text: c.text, judgement: c.judgement })),
    calls: board.calls,
    approvals: board.approvals,
    draft: board.draft,
    summary: board.summary,
  };
}
