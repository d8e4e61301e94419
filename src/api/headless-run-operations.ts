/**
 * `run_agent`, a prompt on an agent's headless mode whose entries become a new session's log, a
 * face of the run service (runs/structured-runs.ts): its `session_id` is its run's id. And
 * `cancel_run`, which ends any run of the run service by either name of its id.
 */
import { checkSandbox } from '../agents/index.js';
import { isSwitchboardError, SwitchboardError } from '../core/errors.js';
import { isEnded } from '../contract/index.js';
import { callerOf, runServiceOf } from './bridge-operations.js';
import type { Handler } from './handler.js';

export const headlessRunHandlers: { run_agent: Handler<'run_agent'>; cancel_run: Handler<'cancel_run'> } = {
  async run_agent(ctx, p) {
    const profile = ctx.agents.get(p.agent);
    if (!profile.data.headless_args) throw new SwitchboardError('INVALID_PARAMS', `${p.agent} has no headless mode`, { agent: p.agent });
    const cwd = ctx.panes.resolveCwd(p.cwd);
    const sandbox = p.agent_home !== undefined && p.model_url !== undefined ? checkSandbox({ home: p.agent_home, modelUrl: p.model_url }) : undefined;
    const { sessionId, failedToStart } = await ctx.structuredRuns.runAgent({ service: runServiceOf(ctx), agent: p.agent, prompt: p.prompt, cwd, sandbox, args: p.args, createdBy: callerOf(ctx.grant) });
    // A CLI that could not start is the caller's error now, as it always was (the run is recorded failed).
    if (failedToStart !== undefined) throw new SwitchboardError('SPAWN_FAILED', failedToStart, { agent: p.agent, session_id: sessionId });
    return { session_id: sessionId };
  },

  async cancel_run(ctx, p) {
    // run_agent's session_id is its run's id (and its log's: none, SESSION_NOT_FOUND as for every
    // log method): one cancel, run_cancel's, by its maker or the owner only.
    if (p.session_id !== undefined) ctx.logs.logs.get(p.session_id);
    const runId = (p.run_id ?? p.session_id) as string;
    const runs = runServiceOf(ctx);
    // A session log that is no run (a pane's, an agent session's) has no run to cancel.
    const before = await runs.get(runId).catch((err: unknown) => {
      if (p.session_id !== undefined && isSwitchboardError(err, 'RUN_NOT_FOUND')) return undefined;
      throw err;
    });
    if (!before) return { cancelled: false };
    const after = await runs.cancel(runId, callerOf(ctx.grant));
    return { cancelled: !isEnded(before.status) && after.status === 'cancelled' };
  },
};
