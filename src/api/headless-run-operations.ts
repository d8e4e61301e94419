/** Structured runs: a prompt on an agent's headless mode, whose entries become a new session's log (`run_agent`, `cancel_run`). */
import { checkSandbox } from '../agents/index.js';
import { SwitchboardError } from '../core/errors.js';
import { callerOf, requireMaker } from './bridge-operations.js';
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

  cancel_run(ctx, p) {
    ctx.logs.logs.get(p.session_id);
    requireMaker(ctx.grant, ctx.structuredRuns.creatorOf(p.session_id), `run ${p.session_id}`);
    return { cancelled: ctx.structuredRuns.cancelRun(p.session_id) };
  },
};
