/** Structured runs: a prompt on an agent's headless mode, whose entries become a new session's log (`run_agent`), and `cancel_run`, which ends any run. */
import { checkSandbox } from '../agents/index.js';
import { SwitchboardError } from '../core/errors.js';
import { isEnded } from '../contract/index.js';
import { callerOf, requireMaker, runServiceOf } from './bridge-operations.js';
import type { Handler } from './handler.js';

export const headlessRunHandlers: { run_agent: Handler<'run_agent'>; cancel_run: Handler<'cancel_run'> } = {
  run_agent(ctx, p) {
    const profile = ctx.agents.get(p.agent);
    if (!profile.data.headless_args) throw new SwitchboardError('INVALID_PARAMS', `${p.agent} has no headless mode`, { agent: p.agent });
    const cwd = ctx.panes.resolveCwd(p.cwd);
    const sandbox = p.agent_home !== undefined && p.model_url !== undefined ? checkSandbox({ home: p.agent_home, modelUrl: p.model_url }) : undefined;
    const { sessionId } = ctx.structuredRuns.runAgent({ agent: p.agent, prompt: p.prompt, cwd, sandbox, args: p.args, createdBy: callerOf(ctx.grant) });
    return { session_id: sessionId };
  },

  async cancel_run(ctx, p) {
    if (p.run_id !== undefined) {
      // A run of the run service: cancelled as run_cancel does (its maker or the owner only).
      const runs = runServiceOf(ctx);
      const before = await runs.get(p.run_id);
      const after = await runs.cancel(p.run_id, callerOf(ctx.grant));
      return { cancelled: !isEnded(before.status) && after.status === 'cancelled' };
    }
    const sessionId = p.session_id as string;
    ctx.logs.logs.get(sessionId);
    requireMaker(ctx.grant, ctx.structuredRuns.creatorOf(sessionId), `run ${sessionId}`);
    return { cancelled: ctx.structuredRuns.cancelRun(sessionId) };
  },
};
